/**
 * Delivering back-channel logouts (OpenID Back-Channel Logout 1.0 section 2.5; INTERFACE section
 * 5): at least once, from the durable queue that `events.ts` fills. One pass claims the due rows
 * (one conditional write, under a lease, so two instances never send the same row at once), signs
 * a fresh logout token for each, POSTs it, and records the outcome: delivered on 200 or 204,
 * otherwise tried again after an exponential back-off with jitter, until the delivery is a day
 * old; then it is given up and logged. The logout token itself is never logged or stored.
 */
import { backoffDelayMs } from '../../backoff.js';
import type { Log } from '../../log.js';
import { generateOpaqueId } from '../../credentials/formats.js';
import type { KeyRing, KeySet } from '../key-ring.js';
import { issueLogoutToken } from '../logout-token.js';
import type { Stores } from '../../stores.js';
import type { LogoutDelivery } from '../ports.js';
import type { CounterPort } from '../../oauth/tokens/context.js';
import type { Clock, Instant } from '../../time.js';

/** A delivery is tried for this long after its event, then given up. */
export const DELIVERY_MAX_AGE_MS = 24 * 3600 * 1000;
/** How long a claim holds a row: far longer than an attempt (SEND_TIMEOUT_MS), so only a dead instance loses it. */
export const DELIVERY_LEASE_MS = 60_000;
/** An attempt that has no answer by then has failed (the receiver is slow or unreachable). */
export const SEND_TIMEOUT_MS = 5_000;
/** The wait before the first retry; it doubles with every attempt, up to RETRY_CAP_MS. */
export const FIRST_RETRY_MS = 5_000;
export const RETRY_CAP_MS = 3600 * 1000;
/** Rows claimed by one pass, sent side by side. */
export const DELIVERY_BATCH = 20;

/** What an attempt came to. */
export type SendOutcome = { delivered: true } | { delivered: false; error: string };

/** Sends one logout token; the HTTP implementation is `src/outbound/logout-sender.ts`. */
export interface LogoutTokenSender {
  /**
   * POSTs `logout_token=…` as `application/x-www-form-urlencoded` to `uri` (section 2.5) and says
   * whether the app answered 200 or 204. Never throws; the error says what went wrong, without
   * the token.
   */
  send(uri: string, logoutToken: string): Promise<SendOutcome>;
}

export interface DeliveryDeps {
  readonly stores: Stores;
  readonly clock: Clock;
  readonly keys: KeyRing;
  readonly settings: { readonly baseUrl: string };
  readonly metrics: { readonly logoutDeliveries: CounterPort<'outcome'> };
}

export interface DeliveryPass {
  claimed: number;
  delivered: number;
  /** Failed this time, to be tried again. */
  retrying: number;
  /** Given up: too old, or the app no longer takes logout tokens. */
  abandoned: number;
}

type Outcome = 'delivered' | 'retrying' | 'abandoned';

/** The wait after the `attempts`-th failed attempt (`backoffDelayMs`). */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  return backoffDelayMs(attempts, FIRST_RETRY_MS, RETRY_CAP_MS, random);
}

/** One pass over the due deliveries; returns what became of them. */
export async function deliverDueLogouts(deps: DeliveryDeps, sender: LogoutTokenSender, log: Log, random: () => number = Math.random): Promise<DeliveryPass> {
  const pass: DeliveryPass = { claimed: 0, delivered: 0, retrying: 0, abandoned: 0 };
  const store = deps.stores.logoutDeliveries;
  const now = deps.clock.now();
  // A read first: an idle poll never writes.
  if (!(await store.anyDue(now))) return pass;
  // An instance that cannot open the signing keys (KEYS_SECRET missing or another one) leaves the
  // deliveries to one that can, instead of spending their attempts; the key ring has said why.
  // A damaged stored key no instance can sign with: only the deliveries to apps of its algorithm
  // fail, and are tried again, so they go out once the key is replaced within the day.
  if ((await deps.keys.unopenable()).some((key) => key.cause === 'keys_secret')) return pass;
  const claim = generateOpaqueId();
  const rows = await store.claim(claim, now, now + DELIVERY_LEASE_MS, DELIVERY_BATCH);
  pass.claimed = rows.length;
  if (rows.length === 0) return pass;
  const keys = await deps.keys.keySet();
  const outcomes = await Promise.all(rows.map((row) => deliverOne(deps, sender, log, keys, claim, row, random)));
  for (const outcome of outcomes) {
    pass[outcome] += 1;
    deps.metrics.logoutDeliveries.inc({ outcome });
  }
  return pass;
}

async function deliverOne(deps: DeliveryDeps, sender: LogoutTokenSender, log: Log, keys: KeySet, claim: string, row: LogoutDelivery, random: () => number): Promise<Outcome> {
  const store = deps.stores.logoutDeliveries;
  const details = { client_id: row.clientId, jti: row.jti, cause: row.cause, attempt: row.attempts };
  const abandon = async (at: Instant, error: string): Promise<Outcome> => {
    await store.abandon(row.id, claim, at, error);
    log.warn({ ...details, error }, 'back-channel logout given up');
    return 'abandoned';
  };
  const client = await deps.stores.clients.findById(row.clientId);
  if (!client || client.status !== 'active' || client.backchannelLogoutUri === null) {
    return abandon(deps.clock.now(), 'the application is deactivated or no longer has a back-channel logout URI');
  }
  let outcome: { delivered: true } | { delivered: false; error: string };
  try {
    // Signed afresh on every attempt: its `exp` is minutes away, the delivery may take hours.
    const token = await issueLogoutToken(keys, {
      issuer: deps.settings.baseUrl, client, sub: String(row.userId), sid: row.sid, jti: row.jti, now: deps.clock.now(),
    });
    outcome = await sender.send(client.backchannelLogoutUri, token);
  } catch (error) {
    outcome = { delivered: false, error: `the logout token could not be signed: ${error instanceof Error ? error.message : String(error)}` };
  }
  const at = deps.clock.now();
  if (outcome.delivered) {
    await store.delivered(row.id, claim, at);
    log.info(details, 'back-channel logout delivered');
    return 'delivered';
  }
  const next = at + retryDelayMs(row.attempts, random);
  if (next - row.createdAt > DELIVERY_MAX_AGE_MS) return abandon(at, `${outcome.error}; tried for ${Math.round((at - row.createdAt) / 60_000)} minutes`);
  await store.retryAt(row.id, claim, next, outcome.error);
  log.info({ ...details, error: outcome.error, next_attempt_at: new Date(next).toISOString() }, 'back-channel logout failed; will retry');
  return 'retrying';
}
