/** Ending grants and tokens: reuse detection, RFC 7009 revocation, consent withdrawal. */
import { revokeApplicationAccess } from '../applications.js';
import { hashSecret, tokenKind } from '../../credentials/formats.js';
import { queueBackchannelLogouts } from '../../oidc/logout/events.js';
import type { Stores } from '../../stores.js';
import type { Client, RevocationReason } from '../ports.js';
import type { Instant } from '../../time.js';
import type { OAuthDeps } from './context.js';

/**
 * Revokes one grant and marks its tokens revoked, and queues the app's back-channel logout for
 * the session the grant was approved in (`stores` is the caller's transaction). Tokens first,
 * then the grant: a rotation in flight holds its refresh token's row and then updates the grant,
 * so taking the rows in the same order means the two wait for each other instead of deadlocking.
 *
 * Runs in the caller's transaction and returns whether this call revoked the grant, which the
 * caller counts once the transaction has committed (`revokeGrantCounted`): `inTransaction` may run
 * the transaction again (a deadlock's victim, a statement made stale by a newer release's
 * migration), and a count taken inside it would count each attempt.
 */
export async function revokeGrant(stores: Stores, grantId: number, reason: 'refresh_reuse' | 'revoked_by_client', now: Instant): Promise<boolean> {
  await stores.tokens.revokeByGrant(grantId, now);
  if (!(await stores.grants.revoke(grantId, reason, now))) return false;
  const grant = await stores.grants.findById(grantId);
  if (grant) await queueBackchannelLogouts(stores, now, [{ clientId: grant.clientId, userId: grant.userId, sid: grant.sid, cause: reason }]);
  return true;
}

/** `revokeGrant` in a transaction of its own, counted once it has committed; whether this call revoked the grant. */
export async function revokeGrantCounted(deps: OAuthDeps, grantId: number, reason: 'refresh_reuse' | 'revoked_by_client', now: Instant): Promise<boolean> {
  const revoked = await deps.stores.transaction((tx) => revokeGrant(tx, grantId, reason, now));
  if (revoked) deps.metrics.tokensRevoked.inc({ reason });
  return revoked;
}

/**
 * Seed section 3 rule 2: a reused code ends every grant (so every token) of that user for that
 * client, and the app is told to end every session of the user (in the same transaction).
 * Returns how many grants this call revoked.
 */
export async function revokeUserClientGrants(deps: OAuthDeps, userId: number, clientId: string, reason: 'code_reuse'): Promise<number> {
  const count = await deps.stores.transaction(async (tx) => {
    const now = deps.clock.now();
    const revoked = await tx.grants.revokeForUserAndClient(userId, clientId, reason, now);
    if (revoked > 0) await queueBackchannelLogouts(tx, now, [{ clientId, userId, sid: null, cause: reason }]);
    return revoked;
  });
  if (count > 0) deps.metrics.tokensRevoked.inc({ reason }, count);
  return count;
}

export type TokenTypeHint = 'access_token' | 'refresh_token';

/**
 * RFC 7009 2.1: revokes the client's own access or refresh token; anything else is ignored
 * (2.2: the answer is the same for unknown tokens). A refresh token ends its whole grant, so the
 * grant's access tokens end too; an access token ends alone. Counted and audited only when this
 * call ended a live token or grant: one revoked, expired or of a revoked grant stays as it was
 * (attack144). `requestId`: the revocation request's id (`reqId`), which its audit line carries.
 */
export async function revokeToken(deps: OAuthDeps, client: Client, token: string, requestId?: string): Promise<void> {
  const kind = tokenKind(token);
  const now = deps.clock.now();
  const hash = hashSecret(token);
  const record = (found: { clientId: string; userId: number; grantId: number }, revoked: 'access' | 'refresh') => deps.audit.record({
    audit: 'token.revoked', via: 'oauth', clientId: found.clientId, userId: found.userId, grantId: found.grantId, kind: revoked,
  }, requestId);
  if (kind === 'access') {
    const revoked = await deps.stores.tokens.revokeAccess(hash, client.clientId, now);
    if (revoked) {
      deps.metrics.tokensRevoked.inc({ reason: 'revoked_by_client' });
      record({ clientId: client.clientId, ...revoked }, 'access');
    }
  } else if (kind === 'refresh') {
    const found = await deps.stores.tokens.findRefresh(hash);
    if (found && found.clientId === client.clientId && (await revokeGrantCounted(deps, found.grantId, 'revoked_by_client', now))) {
      record(found, 'refresh');
    }
  }
}

/**
 * The user withdraws consent for a client: the remembered consent is forgotten and every grant
 * (so every token) of the user for that client ends (INTERFACE section 2), as the settings page
 * does it (`revokeApplicationAccess`, which also queues the app's back-channel logout).
 */
export async function withdrawConsent(deps: OAuthDeps, userId: number, clientId: string): Promise<boolean> {
  const { found, grantsRevoked } = await revokeApplicationAccess(deps.stores, deps.clock, userId, clientId);
  if (grantsRevoked > 0) deps.metrics.tokensRevoked.inc({ reason: 'consent_withdrawn' }, grantsRevoked);
  return found;
}
