/**
 * Deleting an account, by its owner (issue 18 item 8). The password is asked again, or a code
 * of the authenticator app (or a recovery code), counted exactly as a sign-in is (INTERFACE
 * section 4), so a browser left signed in cannot delete the account and the form cannot be used
 * to guess. Then, in one transaction:
 * - the status becomes `deleted` (one conditional write from `active`), which ends every grant,
 *   session, personal token and consent as any status but `active` does (INTERFACE section 4);
 * - the owner's own applications are deactivated: no one could rotate their secrets any more;
 * - the second factors, passkeys and waiting sign-ins go, and the bio and avatar with them;
 * - the e-mail address (verified and pending), every link mailed to it and every mail of the
 *   account in the outbox (queued, sent or refused: recipient, body, the server's answer) are
 *   erased, so no copy of the address stays and it is free for another account. Staff's
 *   `deleted` keeps them: it can be set back to `active` (docs/staff.md).
 * The row stays, so its username stays taken: no one can sign up as the deleted person.
 */
import { revokeAccountCredentials } from './accounts.js';
import type { User } from './ports.js';
import { type AttemptOrigin, type Throttled, confirmPassword } from './sign-in.js';
import type { SecurityLog } from './security-log.js';
import { type TwoStepDeps, type Unreadable, confirmSecondFactor } from './two-step.js';

export type AccountDeletion =
  | { ok: true; clientsDeactivated: number }
  | { ok: false; reason: 'invalid'; field: 'password' | 'code'; message: string }
  | Unreadable
  | Throttled;

export async function deleteAccount(
  deps: TwoStepDeps & { securityLog: SecurityLog },
  user: User,
  proof: { password: string; code: string },
  origin: AttemptOrigin,
): Promise<AccountDeletion> {
  if (proof.password !== '') {
    const confirmed = await confirmPassword(deps, user, proof.password, origin);
    if (!confirmed.ok) return confirmed.reason === 'wrong' ? { ok: false, reason: 'invalid', field: 'password', message: 'that password is not right' } : confirmed;
  } else if (proof.code.trim() !== '') {
    const checked = await confirmSecondFactor(deps, user, proof.code.trim(), origin);
    if (!checked.ok) {
      return checked.reason === 'wrong' ? { ok: false, reason: 'invalid', field: 'code', message: 'that code is not right, or was used already' } : checked;
    }
  } else {
    return { ok: false, reason: 'invalid', field: 'password', message: 'enter your password to delete your account' };
  }
  const now = deps.clock.now();
  const clientsDeactivated = await deps.stores.transaction(async (tx) => {
    // Of two racing deletions one changes the status; the other finds nothing left to do.
    if (!(await tx.users.setStatus(user.id, 'deleted', now, 'active'))) return undefined;
    // Sessions, grants, tokens, consents, and a change of e-mail address waiting for its link with its links.
    await revokeAccountCredentials(tx, now, user.id);
    let deactivated = 0;
    for (const client of await tx.clients.listByOwner(user.id)) {
      if (client.status !== 'active') continue;
      await tx.clients.setStatus(client.clientId, 'deactivated', now);
      await tx.grants.revokeForClient(client.clientId, 'client_deactivated', now);
      deactivated += 1;
    }
    await tx.secondFactors.removeTotp(user.id);
    for (const passkey of await tx.passkeys.listForUser(user.id)) await tx.passkeys.remove(user.id, passkey.credentialId);
    await tx.pendingSignIns.cancelForUser(user.id, now);
    await tx.users.eraseProfile(user.id, now);
    await tx.memberEmails.erase(user.id);
    await tx.mailOutbox.eraseForUser(user.id);
    return deactivated;
  });
  if (clientsDeactivated === undefined) return { ok: true, clientsDeactivated: 0 };
  await deps.securityLog.record({ userId: user.id, kind: 'account.deleted', origin, detail: { applications_deactivated: String(clientsDeactivated) } },
    { audit: 'account.deleted', userId: user.id, clientsDeactivated, via: 'site', address: origin.address });
  return { ok: true, clientsDeactivated };
}
