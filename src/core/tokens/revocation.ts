/** Ending grants and tokens: reuse detection, RFC 7009 revocation, consent withdrawal. */
import { hashSecret, tokenKind } from '../credentials.js';
import type { Client, RevocationReason, Stores } from '../ports.js';
import type { Instant } from '../time.js';
import type { OAuthDeps } from './context.js';

/**
 * Revokes one grant and marks its tokens revoked; counts it once. Tokens first, then the grant:
 * a rotation in flight holds its refresh token's row and then updates the grant, so taking the
 * rows in the same order means the two wait for each other instead of deadlocking.
 */
export async function revokeGrant(deps: OAuthDeps, stores: Stores, grantId: number, reason: RevocationReason, now: Instant): Promise<void> {
  await stores.tokens.revokeByGrant(grantId, now);
  if (await stores.grants.revoke(grantId, reason, now)) deps.metrics.tokensRevoked.inc({ reason });
}

/**
 * Seed section 3 rule 2: a reused code ends every grant (so every token) of that user for that
 * client. Returns how many grants this call revoked.
 */
export async function revokeUserClientGrants(deps: OAuthDeps, userId: number, clientId: string, reason: RevocationReason): Promise<number> {
  const count = await deps.stores.grants.revokeForUserAndClient(userId, clientId, reason, deps.clock.now());
  if (count > 0) deps.metrics.tokensRevoked.inc({ reason }, count);
  return count;
}

export type TokenTypeHint = 'access_token' | 'refresh_token';

/**
 * RFC 7009 2.1: revokes the client's own access or refresh token; anything else is ignored
 * (2.2: the answer is the same for unknown tokens). A refresh token ends its whole grant, so the
 * grant's access tokens end too; an access token ends alone.
 */
export async function revokeToken(deps: OAuthDeps, client: Client, token: string): Promise<void> {
  const kind = tokenKind(token);
  const now = deps.clock.now();
  const hash = hashSecret(token);
  const record = (found: { clientId: string; userId: number; grantId: number }, revoked: 'access' | 'refresh') => deps.audit.record({
    audit: 'token.revoked', via: 'oauth', clientId: found.clientId, userId: found.userId, grantId: found.grantId, kind: revoked,
  });
  if (kind === 'access') {
    const found = await deps.stores.tokens.findAccess(hash);
    if (found && found.clientId === client.clientId && (await deps.stores.tokens.revokeAccess(hash, now))) {
      deps.metrics.tokensRevoked.inc({ reason: 'revoked_by_client' });
      record(found, 'access');
    }
  } else if (kind === 'refresh') {
    const found = await deps.stores.tokens.findRefresh(hash);
    if (found && found.clientId === client.clientId) {
      await deps.stores.transaction((tx) => revokeGrant(deps, tx, found.grantId, 'revoked_by_client', now));
      record(found, 'refresh');
    }
  }
}

/**
 * The user withdraws consent for a client: the remembered consent is forgotten and every grant
 * (so every token) of the user for that client ends (INTERFACE section 2).
 */
export async function withdrawConsent(deps: OAuthDeps, userId: number, clientId: string): Promise<boolean> {
  return deps.stores.transaction(async (tx) => {
    const now = deps.clock.now();
    const removed = await tx.consents.remove(userId, clientId);
    const count = await tx.grants.revokeForUserAndClient(userId, clientId, 'consent_withdrawn', now);
    if (count > 0) deps.metrics.tokensRevoked.inc({ reason: 'consent_withdrawn' }, count);
    return removed || count > 0;
  });
}
