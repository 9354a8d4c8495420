/**
 * The staff console's rules (INTERFACE section 14): who may act on whom, what a reason is, and
 * how every change is made: the change and its staff-log entry in one transaction, then an audit
 * event. The routes and the command line call these; they decide nothing themselves.
 */
import { type EventOrigin, type NewSecurityEvent, STAFF_ORIGIN, type SecurityLog } from '../accounts/security-log.js';
import type { AuditSink } from '../audit.js';
import { InputError, OAuthError } from '../errors.js';
import type { Stores } from '../stores.js';
import { checkedText } from '../text.js';
import type { Clock } from '../time.js';
import { ROLES, type Role, type StaffAction, type StaffLogEntry, type StaffTargetKind } from './ports.js';

export const REASON_MIN_LENGTH = 3;
export const REASON_MAX_LENGTH = 500;

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function isStaff(role: Role | undefined): role is 'moderator' | 'admin' {
  return role === 'moderator' || role === 'admin';
}

/**
 * The reason staff give for a change, trimmed: 3 to 500 characters, written as a paragraph is
 * (`checkedText`): line breaks and tabs, but no other control character (PostgreSQL cannot hold
 * NUL; a terminal escape would rewrite `svc staff-log`'s output), no direction override, and
 * something a reader sees.
 */
export function checkReason(value: string): string {
  const reason = value.trim();
  const length = [...reason].length;
  if (length < REASON_MIN_LENGTH || length > REASON_MAX_LENGTH) {
    throw InputError.worded('reason', `the reason must be ${REASON_MIN_LENGTH} to ${REASON_MAX_LENGTH} characters`,
      { key: 'problems.staffReasonLength', values: { min: REASON_MIN_LENGTH, max: REASON_MAX_LENGTH } });
  }
  // The length is counted above, in characters; `checkedText` counts UTF-16 units.
  return checkedText('reason', reason, { kind: 'paragraph', max: reason.length });
}

/** Someone acting in the console: an account and its role. */
export interface StaffMember {
  id: number;
  username: string;
  role: 'moderator' | 'admin';
}

/** Why a staff member may not do what they asked; the console answers it with the page that says so. */
export type Refusal = 'self' | 'staff_target' | 'admins_only';

/**
 * Whether `actor` may change the account `target` (its status, sessions, two-step): never their
 * own; moderators only members, admins anyone else.
 */
export function refusalOnMember(actor: StaffMember, target: { id: number; role: Role }): Refusal | undefined {
  if (target.id === actor.id) return 'self';
  if (actor.role === 'moderator' && target.role !== 'member') return 'staff_target';
  return undefined;
}

/** Roles and signing keys are the admins' alone; a role is never one's own. */
export function refusalOnRole(actor: StaffMember, target: { id: number }): Refusal | undefined {
  if (actor.role !== 'admin') return 'admins_only';
  return target.id === actor.id ? 'self' : undefined;
}

export function refusalOnKeys(actor: StaffMember): Refusal | undefined {
  return actor.role === 'admin' ? undefined : 'admins_only';
}

/** The line a role change writes in the member's security log: the role they now hold. */
export function roleChangedLine(userId: number, role: Role) {
  return { userId, kind: 'staff.role_changed' as const, detail: { role } };
}

/**
 * Who did it: a staff member from an address, or the operator at the command line. `requestId`:
 * the id of the console's request (`reqId`), which the action's audit lines carry.
 */
export type StaffActor = (StaffMember & { via: 'site'; address: string; requestId?: string | undefined }) | { via: 'cli' };

/** Where a line staff made in a member's log comes from: the site's staff, by the console's request if any (its audit line names it). */
function staffOrigin(actor: StaffActor): EventOrigin {
  return actor.via === 'cli' || actor.requestId === undefined ? STAFF_ORIGIN : { ...STAFF_ORIGIN, requestId: actor.requestId };
}

export interface StaffChange<T> {
  actor: StaffActor;
  action: StaffAction;
  /** `name`: the target's name as known before the change; `change` may give it as it reads it. */
  target: { kind: StaffTargetKind; id: string; name: string };
  /** Checked by `checkReason`; from the command line it may be empty. */
  reason: string;
  /** The change itself, inside the transaction that logs it; `undefined`: nothing to change, nothing logged. */
  change(tx: Stores): Promise<StaffChangeMade<T> | undefined>;
}

/**
 * What a change did: its `result` for the caller, the staff log's `detail`, and `told`, the lines
 * it writes in members' own security logs. Those say "the site's staff" (`STAFF_ORIGIN`), never
 * who or why (the staff log has that), and keep only what the member may read; a status change
 * tells none (a member who is not active cannot read the log, and one made active again starts
 * with nothing, section 4).
 */
export interface StaffChangeMade<T> {
  result: T;
  detail: Record<string, string>;
  targetName?: string;
  told?: ReadonlyArray<Omit<NewSecurityEvent, 'origin'>>;
}

/**
 * The lines whose account is not deleted, each account's row held until the transaction ends
 * (`UserStore.holdUnlessDeleted`, in the order of their ids, so two changes never wait on each
 * other): a deleted account gets no line, as its sign-in failures get none (its member's own
 * deletion erased the log, or staff keep it as it was), and a member's own deletion racing the
 * change waits for it and erases the line, or is seen.
 */
async function toldToAccountsNotDeleted<Line extends { userId: number }>(tx: Stores, lines: readonly Line[]): Promise<Line[]> {
  const kept = new Set<number>();
  for (const userId of [...new Set(lines.map((line) => line.userId))].sort((a, b) => a - b)) {
    if (await tx.users.holdUnlessDeleted(userId)) kept.add(userId);
  }
  return lines.filter((line) => kept.has(line.userId));
}

/**
 * Makes a staff change and writes it to the staff log in one transaction (both or neither), with
 * the lines it `told` members' security logs, then records the audit event. `undefined` when
 * `change` found nothing to act on. `announce` mails the members the notices of those lines whose
 * kind is mailed (`NOTICE_OF`): for the caller to run once the change is answered, as every
 * recorded event's.
 */
export async function makeStaffChange<T>(
  deps: { stores: Stores; clock: Clock; audit: AuditSink; securityLog: SecurityLog }, change: StaffChange<T>,
): Promise<{ result: T; entry: StaffLogEntry; announce: () => Promise<void> } | undefined> {
  const done = await deps.stores.transaction(async (tx) => {
    // The actor's role was read when the request began; it must still be theirs when the change
    // commits, or two admins demoting each other at once would both succeed and leave none.
    const { actor } = change;
    if (actor.via === 'site' && !(await tx.roles.holdsRole(actor.id, actor.role))) {
      throw new OAuthError('access_denied', 'Your role changed while you acted: nothing was done.', { status: 403, words: { key: 'admin.roleChangedWhileActing' } });
    }
    const made = await change.change(tx);
    if (!made) return undefined;
    const entry = await tx.staffLog.append({
      createdAt: deps.clock.now(),
      actorId: change.actor.via === 'cli' ? null : change.actor.id,
      actorName: change.actor.via === 'cli' ? 'cli' : change.actor.username,
      action: change.action,
      targetKind: change.target.kind,
      targetId: change.target.id,
      targetName: made.targetName ?? change.target.name,
      detail: made.detail,
      reason: change.reason,
    });
    const told = await toldToAccountsNotDeleted(tx, made.told ?? []);
    const announce = await deps.securityLog.recordAll(told.map((line) => ({ ...line, origin: staffOrigin(change.actor) })), tx.securityEvents);
    return { result: made.result, entry, announce };
  });
  if (done) {
    const { entry } = done;
    deps.audit.record({
      audit: 'staff.action', action: entry.action, staffLogId: entry.id, actorId: entry.actorId,
      targetKind: entry.targetKind, targetId: entry.targetId, detail: entry.detail,
      ...(change.actor.via === 'cli' ? { via: 'cli' as const } : { via: 'site' as const, address: change.actor.address }),
    }, change.actor.via === 'cli' ? undefined : change.actor.requestId);
  }
  return done;
}
