/**
 * Deleting an account, by its owner (issue 18 item 8). The password is asked again, or a code
 * of the authenticator app (or a recovery code), counted exactly as a sign-in is (`confirmOwner`,
 * INTERFACE section 4), so a browser left signed in cannot delete the account and the form cannot
 * be used to guess. Then, in one transaction:
 * - the status becomes `deleted` (one conditional write from `active`), which ends every grant,
 *   session, personal token and consent as any status but `active` does (INTERFACE section 4);
 * - the owner's own applications are deactivated: no one could rotate their secrets any more;
 * - the second factors, passkeys and waiting sign-ins go, and the bio and avatar with them;
 * - the e-mail address (verified and pending), every link mailed to it and every mail of the
 *   account in the outbox (queued, sent or refused: recipient, body, the server's answer) are
 *   erased, so no copy of the address stays and it is free for another account;
 * - the records of the account's use are erased rather than left to the janitor: its sessions
 *   (browsers and addresses), its security log, its personal tokens and its apps' grants with
 *   every code and token of them (the names and scopes of what it used).
 * Staff's `deleted` keeps all of these: it can be set back to `active` (docs/staff.md). What other
 * members or the site need stays: the row (its username stays taken, so no one can sign up as the
 * deleted person), the posts and comments, hidden while the account is not active (docs/site.md),
 * the apps it registered, deactivated, and the back-channel logouts queued for the apps it used.
 */
import { revokeAccountCredentials } from './accounts.js';
import { type OwnerProof, type OwnerProofRefusal, confirmOwner } from './owner-proof.js';
import type { User } from './ports.js';
import type { AttemptOrigin } from './sign-in.js';
import type { TwoStepDeps } from './two-step.js';

export type AccountDeletion = { ok: true; clientsDeactivated: number } | OwnerProofRefusal;

export async function deleteAccount(deps: TwoStepDeps, user: User, proof: OwnerProof, origin: AttemptOrigin): Promise<AccountDeletion> {
  const confirmed = await confirmOwner(deps, user, proof, origin, 'enter your password to delete your account');
  if (!confirmed.ok) return confirmed;
  const now = deps.clock.now();
  const clientsDeactivated = await deps.stores.transaction(async (tx) => {
    // Of two racing deletions one changes the status; the other finds nothing left to do.
    if (!(await tx.users.setStatus(user.id, 'deleted', now, 'active'))) return undefined;
    // Sessions, grants, tokens, consents, and a change of e-mail address waiting for its link with
    // its links; the grants' apps are queued their back-channel logouts before the grants go.
    await revokeAccountCredentials(tx, now, user.id);
    let deactivated = 0;
    for (const client of await tx.clients.listByOwner(user.id)) {
      if (client.status !== 'active') continue;
      await tx.clients.setStatus(client.clientId, 'deactivated', now);
      await tx.grants.revokeForClient(client.clientId, 'client_deactivated', now);
      deactivated += 1;
    }
    await tx.secondFactors.removeTotp(user.id);
    await tx.passkeys.eraseForUser(user.id);
    await tx.pendingSignIns.eraseForUser(user.id);
    await tx.users.eraseProfile(user.id, now);
    await tx.memberEmails.erase(user.id);
    await tx.mailOutbox.eraseForUser(user.id);
    await tx.grants.eraseForUser(user.id);
    await tx.sessions.eraseForUser(user.id);
    await tx.personalTokens.eraseForUser(user.id);
    await tx.oneTimeSecrets.eraseForUser(user.id);
    await tx.securityEvents.eraseForUser(user.id);
    return deactivated;
  });
  if (clientsDeactivated === undefined) return { ok: true, clientsDeactivated: 0 };
  // The operator's audit line only: the security log it would join was just erased, and no one can read it any more.
  deps.audit.record({ audit: 'account.deleted', userId: user.id, clientsDeactivated, via: 'site', address: origin.address }, origin.requestId);
  return { ok: true, clientsDeactivated };
}
