/**
 * What staff do in the console (INTERFACE section 14), each through `makeStaffChange`: the rule
 * on who may act is checked inside the change's transaction, against the target as it is then,
 * and the change reuses the core that does the same thing elsewhere (section 4's status change,
 * signing out, the key rotation of the command line).
 */
import type { AuditSink } from '../audit.js';
import { setAccountStatus } from '../accounts/accounts.js';
import type { SecurityLog } from '../accounts/security-log.js';
import type { User, UserStatus } from '../accounts/ports.js';
import { requiresSecondStep } from '../accounts/two-step.js';
import { type PersonalTokenRequest, createPersonalToken } from '../credentials/personal-tokens.js';
import type { TokenMarks } from '../credentials/token-marks.js';
import type { PersonalToken } from '../credentials/ports.js';
import { deactivateClient, reactivateClient, rotateClientSecret } from '../oauth/clients.js';
import type { ClientStatus, ReviewedClient, VerifiedMark } from '../oauth/ports.js';
import { type RotateOptions, type Rotation, checkKeysSealedAlike, generateRotation, storeRotation } from '../oidc/keys.js';
import { endOtherSignInSessions } from '../oidc/logout/events.js';
import type { Stores } from '../stores.js';
import { type Clock, formatUtc } from '../time.js';
import type { Role } from './ports.js';
import { type Refusal, type StaffActor, type StaffChangeMade, type StaffMember, isStaff, makeStaffChange, refusalOnMember, refusalOnRole, roleChangedLine } from './staff.js';

export interface ConsoleDeps {
  stores: Stores;
  clock: Clock;
  audit: AuditSink;
  /** Writes the member's line of a change on them, and mails its notice (`makeStaffChange`). */
  securityLog: SecurityLog;
}

/** Who may see the console: staff, and among them only those with two-step verification on. */
export type ConsoleAccess = { kind: 'none' } | { kind: 'needs_two_step' } | { kind: 'staff'; staff: StaffMember };

export async function consoleAccess(stores: Stores, user: User | undefined): Promise<ConsoleAccess> {
  if (!user || user.status !== 'active') return { kind: 'none' };
  const role = await stores.roles.roleOf(user.id);
  if (!isStaff(role)) return { kind: 'none' };
  if (!(await requiresSecondStep(stores, user.id))) return { kind: 'needs_two_step' };
  return { kind: 'staff', staff: { id: user.id, username: user.username, role } };
}

/**
 * What a change on a member came to: done (with `announce`, which mails the member the notice of
 * their log's new line, for the caller to run once the change is answered), refused by the rules,
 * or no such member.
 */
export type MemberChangeOutcome<T> = { ok: true; value: T; announce: () => Promise<void> } | { ok: false; refusal: Refusal } | { ok: false; refusal: 'not_found' };

/**
 * A change on the account `targetId`, under `rule` (checked against the account's role as the
 * transaction reads it). `act` makes the change and says what it set.
 */
async function changeMember<T>(
  deps: ConsoleDeps, actor: StaffActor & { via: 'site' }, targetId: number, reason: string,
  action: 'member.status' | 'member.sessions_revoked' | 'member.two_step_reset' | 'member.role',
  rule: (actor: StaffMember, target: { id: number; role: Role }) => Refusal | undefined,
  act: (tx: Stores, target: User) => Promise<StaffChangeMade<T>>,
): Promise<MemberChangeOutcome<T>> {
  let outcome = { ok: false, refusal: 'not_found' } as { ok: true; value: T } | { ok: false; refusal: Refusal | 'not_found' };
  const done = await makeStaffChange(deps, {
    actor, action, reason, target: { kind: 'member', id: String(targetId), name: '' },
    change: async (tx) => {
      const [target, role] = await Promise.all([tx.users.findById(targetId), tx.roles.roleOf(targetId)]);
      if (!target || role === undefined) return undefined;
      const refusal = rule(actor, { id: target.id, role });
      if (refusal) {
        outcome = { ok: false, refusal };
        return undefined;
      }
      const made = await act(tx, target);
      outcome = { ok: true, value: made.result };
      return { ...made, targetName: target.username };
    },
  });
  // A change made is one `makeStaffChange` committed, and so answered.
  return outcome.ok ? { ...outcome, announce: done!.announce } : outcome;
}

/** Section 4's status change, by staff: leaving `active` ends every session, grant and token for good. */
export function changeMemberStatus(deps: ConsoleDeps, actor: StaffActor & { via: 'site' }, targetId: number, status: UserStatus, reason: string) {
  return changeMember(deps, actor, targetId, reason, 'member.status', refusalOnMember, async (tx, target) => {
    await setAccountStatus(tx, deps.clock, target.id, status);
    return { result: status, detail: { from: target.status, status } };
  });
}

/** Signs the member out everywhere: every session and every sign-in waiting for its second step, with their back-channel logouts. */
export function endMemberSessions(deps: ConsoleDeps, actor: StaffActor & { via: 'site' }, targetId: number, reason: string) {
  return changeMember(deps, actor, targetId, reason, 'member.sessions_revoked', refusalOnMember, async (tx, target) => {
    const ended = await endOtherSignInSessions(tx, deps.clock.now(), target.id, '');
    return { result: ended, detail: { sessions_ended: String(ended) }, told: [{ userId: target.id, kind: 'staff.sessions_revoked' }] };
  });
}

/**
 * Removes the member's authenticator app, recovery codes and passkeys: they sign in with the
 * password alone until they set it up again. A reset that found none (a member without two-step,
 * or the form sent twice) tells the member's log it removed nothing, and so mails no notice that
 * it removed what they did not have (attack91).
 */
export function resetMemberTwoStep(deps: ConsoleDeps, actor: StaffActor & { via: 'site' }, targetId: number, reason: string) {
  return changeMember(deps, actor, targetId, reason, 'member.two_step_reset', refusalOnMember, async (tx, target) => {
    const hadApp = await tx.secondFactors.removeTotp(target.id);
    const passkeys = await tx.passkeys.listForUser(target.id);
    for (const passkey of passkeys) await tx.passkeys.remove(target.id, passkey.credentialId);
    const removed: Record<string, string> = hadApp || passkeys.length > 0 ? {} : { removed: 'nothing' };
    return {
      result: { hadApp, passkeys: passkeys.length },
      detail: { authenticator_app: hadApp ? 'removed' : 'none', passkeys_removed: String(passkeys.length) },
      told: [{ userId: target.id, kind: 'staff.two_step_reset', detail: removed }],
    };
  });
}

/** Admins only, never their own. */
export function changeMemberRole(deps: ConsoleDeps, actor: StaffActor & { via: 'site' }, targetId: number, role: Role, reason: string) {
  return changeMember(deps, actor, targetId, reason, 'member.role', refusalOnRole, async (tx, target) => {
    const from = (await tx.roles.roleOf(target.id)) ?? 'member';
    await tx.roles.setRole(target.id, role, deps.clock.now());
    return { result: role, detail: { from, role }, told: [roleChangedLine(target.id, role)] };
  });
}

/** What a change on an app came to. */
export type AppChangeOutcome<T> = { ok: true; value: T } | { ok: false; refusal: 'not_found' };

/**
 * What staff see of an app on its page (its name, description, homepage and addresses), as its verify form
 * carries them (`reviewedFrom` reads them back).
 */
export function reviewedText(client: ReviewedClient): string {
  const { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } = client;
  return JSON.stringify({ name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri });
}

/** What a verify form carried of the app's page, or `undefined` when it carried nothing of that shape. */
export function reviewedFrom(text: string | undefined): ReviewedClient | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } = value as Record<string, unknown>;
  const strings = (list: unknown): list is string[] => Array.isArray(list) && list.every((item) => typeof item === 'string');
  if (typeof name !== 'string' || typeof description !== 'string' || typeof homepageUrl !== 'string' || !strings(redirectUris) || !strings(postLogoutRedirectUris)
    || (backchannelLogoutUri !== null && typeof backchannelLogoutUri !== 'string')) return undefined;
  return { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri };
}

/** What marking an app verified may answer: `changed`, it is no longer as staff reviewed it. */
export type VerifyOutcome = AppChangeOutcome<boolean> | { ok: false; refusal: 'changed' };

/** What changing an app's status may answer: `owner_full`, its owner has `MAX_APPS_PER_OWNER` active apps already. */
export type AppStatusOutcome = AppChangeOutcome<ClientStatus> | { ok: false; refusal: 'owner_full' };

/**
 * Deactivates an app (every grant of it ends, so every token: the same core as its owner's
 * button and `svc client deactivate`) or makes it active again (nothing that ended comes back).
 * An app a member registered is made active again only while its owner has fewer than
 * `MAX_APPS_PER_OWNER` active ones, counted in the change's transaction (`reactivateClient`):
 * staff are not the way past the cap its owner is held to; refused, nothing is logged.
 */
export async function changeAppStatus(deps: ConsoleDeps, actor: StaffActor, clientId: string, status: ClientStatus, reason: string): Promise<AppStatusOutcome> {
  let ownerFull = false;
  const done = await makeStaffChange(deps, {
    actor, action: 'app.status', reason, target: { kind: 'app', id: clientId, name: '' },
    change: async (tx) => {
      const before = await tx.clients.findById(clientId);
      if (!before) return undefined;
      const after = status === 'deactivated' ? await deactivateClient(tx, deps.clock, clientId) : await reactivateClient(tx, deps.clock, clientId);
      ownerFull = after === 'owner_full';
      if (!after || after === 'owner_full') return undefined;
      return { result: after.status, detail: { from: before.status, status: after.status }, targetName: before.name };
    },
  });
  if (done) return { ok: true, value: done.result };
  return { ok: false, refusal: ownerFull ? 'owner_full' : 'not_found' };
}

/**
 * A new secret for a confidential app, by the operator at the command line (`svc client
 * rotate-secret`), as its owner's rotation at /settings/developers makes one: the secret, the
 * owner's security-log line (`client_secret.rotated`, from the site's staff) and the staff-log
 * entry in one transaction, so no secret is made without its lines nor a line without its secret.
 * Only an active app gets one (the write is conditional on it). `announce` writes what follows the
 * commit (the owner's notice mail), for the caller to run once the secret is out of harm's way.
 */
export async function rotateAppSecret(
  deps: ConsoleDeps & { settings: { previousClientSecretHours: number } },
  actor: StaffActor, clientId: string, reason: string,
): Promise<{ secret: string; announce: () => Promise<void> } | undefined> {
  const done = await makeStaffChange(deps, {
    actor, action: 'app.secret_rotated', reason, target: { kind: 'app', id: clientId, name: '' },
    change: async (tx) => {
      const client = await tx.clients.findById(clientId);
      if (client?.type !== 'confidential') return undefined;
      const secret = await rotateClientSecret(tx, deps.clock, clientId, deps.settings.previousClientSecretHours);
      if (secret === undefined) return undefined;
      const told = client.ownerId === null ? [] : [{
        userId: client.ownerId, kind: 'client_secret.rotated' as const, detail: { app: client.name, client_id: client.clientId },
      }];
      return { result: secret, detail: {}, targetName: client.name, told };
    },
  });
  return done && { secret: done.result, announce: done.announce };
}

/**
 * A personal API token for a member's account, by the operator at the command line (`svc token
 * create`), as the member's own at /settings/tokens makes one: the token, the member's
 * security-log line (`personal_token.created`, from the site's staff) and the staff-log entry in
 * one transaction. A token that acts as a member is the most a staff change can hand out, so the
 * member reads of it in their log and mail as of their own, and the staff log keeps who made it
 * (its name, scopes and expiry, never the token). `announce` writes the member's notice mail, for
 * the caller to run once the token is printed. `undefined` when there is no such account.
 */
export async function createMemberToken(
  deps: ConsoleDeps & { tokenMarks: TokenMarks },
  actor: StaffActor, request: PersonalTokenRequest, reason: string,
): Promise<{ token: string; record: PersonalToken; announce: () => Promise<void> } | undefined> {
  // The tokens' mark is read before the transaction: on SQLite its first read would wait behind it.
  await deps.tokenMarks.ready();
  const done = await makeStaffChange(deps, {
    actor, action: 'member.token_created', reason, target: { kind: 'member', id: String(request.userId), name: '' },
    change: async (tx) => {
      const member = await tx.users.findById(request.userId);
      if (!member) return undefined;
      const made = await createPersonalToken(tx, deps.clock, deps.tokenMarks, request);
      const { name, scope, expiresAt } = made.record;
      return {
        result: made, detail: { name, scope, expires: expiresAt === null ? 'never' : formatUtc(expiresAt) }, targetName: member.username,
        told: [{ userId: member.id, kind: 'personal_token.created', detail: { name, scope } }],
      };
    },
  });
  return done && { ...done.result, announce: done.announce };
}

/**
 * Marks an app verified, or not: its consent page says "Verified by" the site only when it is, and
 * its authorization errors go back to it (`isUnreviewedApp`). Staff vouch for the name, description,
 * homepage and addresses they `reviewed`: the mark is set only while the app still has exactly
 * those (attack85, attack87, attack89).
 */
export async function setAppVerified(deps: ConsoleDeps, actor: StaffActor, clientId: string, mark: VerifiedMark, reason: string): Promise<VerifyOutcome> {
  const { verified } = mark;
  const done = await makeStaffChange(deps, {
    actor, action: 'app.verified', reason, target: { kind: 'app', id: clientId, name: '' },
    change: async (tx) => {
      const client = await tx.clients.setVerified(clientId, mark, deps.clock.now());
      return client && { result: verified, detail: { verified: verified ? 'yes' : 'no' }, targetName: client.name };
    },
  });
  if (done) return { ok: true, value: done.result };
  return verified && (await deps.stores.clients.findById(clientId)) ? { ok: false, refusal: 'changed' } : { ok: false, refusal: 'not_found' };
}

/**
 * A key rotation by an admin in the console (`refusalOnKeys`) or the operator at the command line:
 * the keys are made before the transaction (slow), stored and logged in it.
 */
export async function rotateKeysAsStaff(
  deps: ConsoleDeps & { settings: { keysSecret: string | undefined; signingKeyActivationSeconds: number } },
  actor: StaffActor, options: Pick<RotateOptions, 'now' | 'retirePrevious'>, reason: string,
): Promise<Rotation> {
  const secret = deps.settings.keysSecret;
  await checkKeysSealedAlike(deps.stores, secret);
  const fresh = await generateRotation(secret);
  const done = await makeStaffChange(deps, {
    actor, action: 'keys.rotated', reason, target: { kind: 'keys', id: '', name: '' },
    change: async (tx) => {
      const rotation = await storeRotation(tx, deps.clock, fresh, { ...options, activationSeconds: deps.settings.signingKeyActivationSeconds });
      const withdrawn: Record<string, string> = options.retirePrevious === true ? { previous_withdrawn: 'yes' } : {};
      return { result: rotation, detail: { ...rotation.kids, active_at: new Date(rotation.activeAt).toISOString(), ...withdrawn } };
    },
  });
  return done!.result;
}
