/** The storage OpenID Connect needs: the id_token signing keys and the back-channel logout queue. */
import type { Instant } from '../time.js';

export type IdTokenAlg = 'RS256' | 'ES256';

/** A key pair as generated, before it is stored with its times. */
export interface GeneratedSigningKey {
  /** The RFC 7638 thumbprint of the public key. */
  kid: string;
  alg: IdTokenAlg;
  publicJwk: string;
  /** The private JWK as JSON, or sealed with AES-256-GCM when KEYS_SECRET is set. */
  privateJwk: string;
}

export interface NewSigningKey extends GeneratedSigningKey {
  createdAt: Instant;
  /** When it starts signing; until then it is only published (INTERFACE section 5). */
  activeAt: Instant;
}

export interface SigningKey extends NewSigningKey {
  /** When it stops signing: its successor's `activeAt`, or the moment of an immediate rotation. */
  retiredAt: Instant | null;
  /** When it leaves the JWKS; the janitor deletes it from then on. */
  withdrawnAt: Instant | null;
}

export interface KeyStore {
  insert(key: NewSigningKey): Promise<void>;
  /**
   * Inserts `key` unless a key of its algorithm signs or waits to sign at `at` (not retired, not
   * withdrawn), and says whether it did: one step that no other caller's can interleave with, so
   * instances starting together on a new database end with one key per algorithm (INTERFACE
   * section 5: every instance signs with the same keys).
   */
  insertUnlessLive(key: NewSigningKey, at: Instant): Promise<boolean>;
  /** Every key, withdrawn ones included (the checks at start). */
  listAll(): Promise<SigningKey[]>;
  /** The keys still in the JWKS at `at` (not withdrawn by then), newest first. */
  listPublished(at: Instant): Promise<SigningKey[]>;
  /**
   * The keys of `alg` that sign at `at` or would start later stop signing at `at`, and leave the
   * JWKS at `withdrawnAt`; keys retired before `at` keep their times. Returns how many.
   */
  retire(alg: IdTokenAlg, at: Instant, withdrawnAt: Instant): Promise<number>;
  /** Every key of `alg` still published at `at` leaves the JWKS at `at` (after a compromise). */
  withdraw(alg: IdTokenAlg, at: Instant): Promise<number>;
}

/** A back-channel logout to deliver (OpenID Back-Channel Logout 1.0 section 2.5). */
export interface NewLogoutDelivery {
  clientId: string;
  userId: number;
  /** The sign-in session that ended, or the grant's; `null`: the token carries `sub` alone. */
  sid: string | null;
  /** The logout token's `jti`, the same on every attempt. */
  jti: string;
  /** What caused it: `signed_out`, or the grant's revocation reason. */
  cause: string;
}

export interface LogoutDelivery extends NewLogoutDelivery {
  id: number;
  createdAt: Instant;
  /** Attempts so far, the one just claimed included. */
  attempts: number;
  nextAttemptAt: Instant;
  lastError: string | null;
}

/**
 * The durable queue of back-channel logouts (INTERFACE section 5): rows are written in the
 * transaction of the event that causes them, claimed by one instance at a time under a lease,
 * and marked delivered or abandoned. An outcome is written only by the claim that holds the row.
 */
export interface LogoutDeliveryStore {
  /** Queues deliveries, due at once. */
  insert(deliveries: NewLogoutDelivery[], now: Instant): Promise<void>;
  /** Whether a pending delivery is due at `now` and not leased: a read, so an idle poll writes nothing. */
  anyDue(now: Instant): Promise<boolean>;
  /**
   * Claims up to `limit` pending deliveries that are due and not leased (or whose lease has
   * expired: the instance that held it died), in one conditional write that records `claim`,
   * `leaseUntil` and one more attempt: two callers never get the same row while its lease runs.
   */
  claim(claim: string, now: Instant, leaseUntil: Instant, limit: number): Promise<LogoutDelivery[]>;
  /** Marks the delivery delivered; false when `claim` no longer holds it. */
  delivered(id: number, claim: string, now: Instant): Promise<boolean>;
  /** Releases the delivery to be tried again at `nextAttemptAt`. */
  retryAt(id: number, claim: string, nextAttemptAt: Instant, error: string): Promise<boolean>;
  /** Gives the delivery up for good. */
  abandon(id: number, claim: string, now: Instant, error: string): Promise<boolean>;
}
