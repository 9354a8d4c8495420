/**
 * What sends an app a back-channel logout (OpenID Back-Channel Logout 1.0 section 2.5; INTERFACE
 * section 5), and the queueing of it: a row per app in `logout_deliveries`, written in the
 * transaction of the event itself, so the event and its logouts land together or not at all and
 * a restart loses none. The delivery worker (`delivery.ts`) sends them.
 *
 * The events:
 * - the person signs out of the site (their sign-in session ends): every app they signed into in
 *   that session and still hold a live grant with, with that session's `sid`;
 * - a grant is revoked by reuse detection of a refresh token or by the app revoking its refresh
 *   token: that app, with the grant's `sid`;
 * - every grant of the person with an app is revoked (consent withdrawn, code reuse): that app,
 *   with `sub` alone (all of the person's sessions there);
 * - the account becomes unusable: every app whose grant that revoked, with `sub` alone.
 * A deactivated app gets nothing: it can no longer sign anyone in, and its tokens are dead.
 */
import { generateOpaqueId } from '../../credentials/formats.js';
import type { RevocationReason } from '../../oauth/ports.js';
import type { Stores } from '../../stores.js';
import type { NewLogoutDelivery } from '../ports.js';
import { sessionSid } from '../../accounts/sessions.js';
import type { Clock, Instant } from '../../time.js';

export type LogoutCause = 'signed_out' | Exclude<RevocationReason, 'client_deactivated'>;

export interface LogoutEvent {
  clientId: string;
  userId: number;
  /** The session to end at the app; `null`: every session of the user there. */
  sid: string | null;
  cause: LogoutCause;
}

/**
 * Queues a delivery for every event whose app is active and registered a back-channel logout URI
 * (the rest need none), one per app, user and session. Call it inside the event's transaction.
 * Returns how many were queued.
 */
export async function queueBackchannelLogouts(tx: Stores, now: Instant, events: readonly LogoutEvent[]): Promise<number> {
  const seen = new Set<string>();
  const rows: NewLogoutDelivery[] = [];
  for (const event of events) {
    const key = JSON.stringify([event.clientId, event.userId, event.sid]);
    if (seen.has(key)) continue;
    seen.add(key);
    const client = await tx.clients.findById(event.clientId);
    if (!client || client.status !== 'active' || client.backchannelLogoutUri === null) continue;
    rows.push({ clientId: event.clientId, userId: event.userId, sid: event.sid, jti: generateOpaqueId(), cause: event.cause });
  }
  await tx.logoutDeliveries.insert(rows, now);
  return rows.length;
}

/**
 * Ends a sign-in session and, in the same transaction, queues a logout for every app the user
 * holds a live grant with (section 2.5). Only the call that ended the session queues: a double
 * click or two instances racing send one logout. Returns whether this call ended it.
 */
export async function endSignInSession(stores: Stores, clock: Clock, idHash: string): Promise<boolean> {
  return stores.transaction((tx) => endSignInSessionWithin(tx, clock.now(), idHash));
}

/** `endSignInSession` inside a transaction the caller runs (a session replaced by another). */
export async function endSignInSessionWithin(tx: Stores, now: Instant, idHash: string): Promise<boolean> {
  const ended = await tx.sessions.end(idHash, now);
  if (!ended) return false;
  await queueSessionLogouts(tx, now, ended.userId, [idHash]);
  return true;
}

/**
 * Ends every sign-in session of the user but `keepIdHash` (sign out everywhere else, a password
 * change), and every sign-in waiting for its second step, and queues, for each session, the
 * logout that signing out there would have sent. Call it inside
 * the event's transaction. Returns how many sessions it ended.
 */
export async function endOtherSignInSessions(tx: Stores, now: Instant, userId: number, keepIdHash: string): Promise<number> {
  // A sign-in waiting for its second step is a session in the making: it ends too.
  await tx.pendingSignIns.cancelForUser(userId, now);
  const ended = await tx.sessions.endOthersForUser(userId, keepIdHash, now);
  await queueSessionLogouts(tx, now, userId, ended);
  return ended.length;
}

/**
 * Queues, for sessions that just ended, a logout to every app signed into in them: the apps whose
 * live grant was approved in that session (its `sid`). An app the person signed into elsewhere is
 * told when that session ends, not this one (section 2.5: the RPs of the session).
 */
async function queueSessionLogouts(tx: Stores, now: Instant, userId: number, endedIdHashes: readonly string[]): Promise<void> {
  if (endedIdHashes.length === 0) return;
  const signedInto = await tx.grants.liveClientsOfSessions(userId, endedIdHashes.map((idHash) => sessionSid({ idHash })));
  await queueBackchannelLogouts(tx, now, signedInto.map(({ clientId, sid }) => ({ clientId, userId, sid, cause: 'signed_out' as const })));
}
