/**
 * The applications a user has authorized (seed 5.4), and withdrawing that authorization:
 * the consent is forgotten and every grant of the user for the client is revoked, so every
 * code, access token and refresh token descending from them ends at once.
 */
import { canBeClientId } from './clients.js';
import { queueBackchannelLogouts } from '../oidc/logout/events.js';
import type { Stores } from '../stores.js';
import type { Client } from './ports.js';
import { scopeList, type Scope } from './scopes.js';
import type { Clock, Instant } from '../time.js';

export interface AuthorizedApplication {
  client: Client;
  scopes: Scope[];
  firstAuthorizedAt: Instant;
  lastUsedAt: Instant | null;
}

/** Every client the user consented to or still holds a live grant for, most recently used first. */
export async function listAuthorizedApplications(stores: Stores, userId: number): Promise<AuthorizedApplication[]> {
  const [consents, summaries] = await Promise.all([stores.consents.listForUser(userId), stores.grants.summarizeForUser(userId)]);
  const clientIds = new Set([...consents.map((c) => c.clientId), ...summaries.map((s) => s.clientId)]);
  const apps: AuthorizedApplication[] = [];
  for (const clientId of clientIds) {
    const client = await stores.clients.findById(clientId);
    if (!client) continue;
    const consent = consents.find((c) => c.clientId === clientId);
    const summary = summaries.find((s) => s.clientId === clientId);
    const firstTimes = [consent?.createdAt, summary?.firstAuthorizedAt].filter((t): t is number => t !== undefined);
    apps.push({
      client,
      scopes: scopeList(consent?.scope ?? ''),
      firstAuthorizedAt: Math.min(...firstTimes),
      lastUsedAt: summary?.lastUsedAt ?? null,
    });
  }
  return apps.sort((a, b) => (b.lastUsedAt ?? b.firstAuthorizedAt) - (a.lastUsedAt ?? a.firstAuthorizedAt));
}

/**
 * Withdraws the user's consent to the client and revokes all of the user's grants for it, in
 * one transaction (INTERFACE section 2: the resource API answers 401 from the next request on),
 * which also queues the app's back-channel logout of every session of the user (INTERFACE
 * section 5). Returns whether there was anything to withdraw.
 */
export async function revokeApplicationAccess(stores: Stores, clock: Clock, userId: number, clientId: string): Promise<{ found: boolean; grantsRevoked: number }> {
  if (!canBeClientId(clientId)) return { found: false, grantsRevoked: 0 };
  return stores.transaction(async (tx) => {
    const now = clock.now();
    const hadConsent = await tx.consents.remove(userId, clientId);
    const grantsRevoked = await tx.grants.revokeForUserAndClient(userId, clientId, 'consent_withdrawn', now);
    if (grantsRevoked > 0) await queueBackchannelLogouts(tx, now, [{ clientId, userId, sid: null, cause: 'consent_withdrawn' }]);
    return { found: hadConsent || grantsRevoked > 0, grantsRevoked };
  });
}

/**
 * Withdraws every consent the user gave and revokes every grant of the user, in one transaction:
 * "revoke all" on the authorized-applications page. Each app whose grant it revoked is sent a
 * back-channel logout (INTERFACE section 5). Returns each client that lost access, with how many
 * of its grants ended.
 */
export async function revokeAllApplicationAccess(stores: Stores, clock: Clock, userId: number): Promise<Array<{ clientId: string; grantsRevoked: number }>> {
  return stores.transaction(async (tx) => {
    const now = clock.now();
    const consents = await tx.consents.listForUser(userId);
    await tx.consents.removeForUser(userId);
    const revoked = await tx.grants.revokeForUser(userId, 'consent_withdrawn', now);
    const clientIds = [...new Set([...consents.map((c) => c.clientId), ...revoked])];
    await queueBackchannelLogouts(tx, now, [...new Set(revoked)].map((clientId) => ({ clientId, userId, sid: null, cause: 'consent_withdrawn' as const })));
    return clientIds.map((clientId) => ({ clientId, grantsRevoked: revoked.filter((id) => id === clientId).length }));
  });
}
