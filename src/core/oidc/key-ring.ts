/**
 * The signing keys as the server uses them (INTERFACE section 5, RFC 7517): the JWKS lists every
 * key that is published, and an id_token is signed with the newest key of its algorithm that is
 * active. Keys are read from the database at most every `KEY_RING_REFRESH_MS`, so a rotation by
 * `svc keys rotate` or by another instance reaches every instance's JWKS within
 * KEY_PROPAGATION_SECONDS, and the token endpoint reads the database for keys once in that
 * interval, not once per request. Which key signs is decided at each signature from the times the
 * keys carry, so a key becomes active on time without a read.
 */
import { type JsonWebKey, type KeyObject, createPublicKey } from 'node:crypto';
import type { JWK } from 'jose';
import { KeysSecretError, SigningKeyDamagedError } from '../errors.js';
import { KEY_PROPAGATION_SECONDS, openStoredPrivateJwk } from './keys.js';
import { importSigningKey } from './jws.js';
import type { Stores } from '../stores.js';
import type { IdTokenAlg, SigningKey } from './ports.js';
import type { Clock, Instant } from '../time.js';

/**
 * How old the keys a request uses may be. Well inside KEY_PROPAGATION_SECONDS, and costs one
 * small query per instance per interval at most. Measured on the monotonic clock: it is about
 * when this process last looked, not a rule of the protocol.
 */
export const KEY_RING_REFRESH_MS = 2_000;
/** Public JWK members; anything else (d, p, q, dp, dq, qi, oth, k…) never leaves. */
const PUBLIC_MEMBERS = ['kty', 'kid', 'use', 'alg', 'n', 'e', 'crv', 'x', 'y'] as const;

/**
 * The JWKS `max-age`: a client's cached copy, plus the time the instances take to see a rotation,
 * must end before a new key signs, so that no client meets a `kid` it has not fetched.
 */
export function jwksMaxAgeSeconds(activationSeconds: number): number {
  return Math.max(0, Math.min(60, activationSeconds - KEY_PROPAGATION_SECONDS - 1));
}

export interface CurrentKey {
  kid: string;
  alg: IdTokenAlg;
  privateKey: KeyObject;
}

/**
 * The public members of a stored public JWK; `undefined` for a damaged row whose JWK is no public
 * key (not JSON, or members that make no key): it is not published, as a JWKS member must be a
 * key (RFC 7517 section 4).
 */
export function publicJwk(stored: string): JWK | undefined {
  let full: Record<string, unknown>;
  try {
    full = JSON.parse(stored) as Record<string, unknown>;
    createPublicKey({ key: full as JsonWebKey, format: 'jwk' });
  } catch {
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const member of PUBLIC_MEMBERS) if (full[member] !== undefined) out[member] = full[member];
  return out as JWK;
}

const published = (key: SigningKey, at: Instant) => key.withdrawnAt === null || key.withdrawnAt > at;
const signs = (key: SigningKey, at: Instant) => key.activeAt <= at && (key.retiredAt === null || key.retiredAt > at) && published(key, at);
/** Signs at `at` or will later: published, and not retired before it had its turn. */
const needed = (key: SigningKey, at: Instant) => published(key, at) && (key.retiredAt === null || key.retiredAt > Math.max(at, key.activeAt));

/**
 * A key this instance must sign with and cannot: `keys_secret` when it is sealed and this
 * instance's KEYS_SECRET is missing or another one (another instance may open it), `damaged` when
 * the stored row holds no usable key of its algorithm (no instance can sign with it).
 */
export type UnopenableKey =
  | { kid: string; alg: IdTokenAlg; cause: 'keys_secret'; error: KeysSecretError }
  | { kid: string; alg: IdTokenAlg; cause: 'damaged'; error: SigningKeyDamagedError };

/** What an operator reads in `/readyz` and in the log: which key, why, and what to do. */
export function describeUnopenable(key: UnopenableKey): string {
  if (key.cause === 'keys_secret') return `signing key ${key.kid} (${key.alg}) cannot be opened: ${key.error.message}; give every instance the same KEYS_SECRET`;
  return `signing key ${key.kid} (${key.alg}) cannot sign: ${key.error.message}; every instance reads the same stored key: replace it with \`svc keys rotate --now\``;
}

/** `error`, thrown by opening `key`, as what the key ring reports; any other error is not about the key. */
function unopenableKey(key: SigningKey, error: unknown): UnopenableKey | undefined {
  if (error instanceof KeysSecretError) return { kid: key.kid, alg: key.alg, cause: 'keys_secret', error };
  if (error instanceof SigningKeyDamagedError) return { kid: key.kid, alg: key.alg, cause: 'damaged', error };
  return undefined;
}

/** Where the key ring reports a key it cannot open, once per key (pino's logger fits). */
export interface KeyRingLog {
  error(details: object, message: string): void;
}

const QUIET: KeyRingLog = { error: () => {} };

/** The keys as read at one moment: what the JWKS shows and what signs, at any instant after. */
export class KeySet {
  private readonly jwk = new Map<string, JWK>();

  constructor(
    /** Newest first. */
    private readonly keys: readonly SigningKey[],
    private readonly open: (key: SigningKey) => Promise<KeyObject>,
  ) {
    for (const key of keys) {
      const jwk = publicJwk(key.publicJwk);
      if (jwk) this.jwk.set(key.kid, jwk);
    }
  }

  /** The JWKS document at `at`: public members of every published key, active or about to be. */
  jwks(at: Instant): { keys: JWK[] } {
    return { keys: this.keys.filter((k) => published(k, at) && this.jwk.has(k.kid)).map((k) => this.jwk.get(k.kid)!) };
  }

  /**
   * The public JWK of the key `kid` while it is published at `at` (active, about to be, or retired
   * but still in the JWKS): what a token we signed verifies against, such as an id_token_hint.
   */
  publishedJwk(kid: string, at: Instant): JWK | undefined {
    const key = this.keys.find((k) => k.kid === kid && published(k, at));
    return key && this.jwk.get(key.kid);
  }

  /** The newest key of `alg` that is active at `at` and neither retired nor withdrawn. */
  async signingKey(alg: IdTokenAlg, at: Instant): Promise<CurrentKey> {
    const key = this.keys.find((k) => k.alg === alg && signs(k, at));
    if (!key) throw new Error(`no active ${alg} signing key`);
    return { kid: key.kid, alg, privateKey: await this.open(key) };
  }

  /**
   * Opens every key that signs at `at` or waits to (a rotation's next key included: the instance
   * will need it at its `active_at`); those that cannot be opened or cannot sign, each with why.
   */
  async unopenable(at: Instant): Promise<UnopenableKey[]> {
    const found: UnopenableKey[] = [];
    for (const key of this.keys.filter((k) => needed(k, at))) {
      try {
        await this.open(key);
      } catch (error) {
        const unopenable = unopenableKey(key, error);
        if (!unopenable) throw error;
        found.push(unopenable);
      }
    }
    return found;
  }
}

export class KeyRing {
  private current: { readAt: number; keys: KeySet } | undefined;
  private reading: Promise<KeySet> | undefined;
  /** Moves on `invalidate`, so a read begun before it is not kept. */
  private generation = 0;
  private readonly imported = new Map<string, Promise<KeyObject>>();
  /** The kids already reported as unopenable: one log line per key, not one per request. */
  private readonly reported = new Set<string>();
  private log: KeyRingLog = QUIET;

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly keysSecret: string | undefined,
  ) {}

  /**
   * The keys as the database held them at most `KEY_RING_REFRESH_MS` ago. A token request asks
   * before its transaction begins, so signing inside it never waits for a connection.
   */
  keySet(): Promise<KeySet> {
    const current = this.current;
    if (current && performance.now() - current.readAt < KEY_RING_REFRESH_MS) return Promise.resolve(current.keys);
    this.reading ??= this.read().finally(() => { this.reading = undefined; });
    return this.reading;
  }

  /** The JWKS document now. */
  async jwks(): Promise<{ keys: JWK[] }> {
    return (await this.keySet()).jwks(this.clock.now());
  }

  /** Where a key this instance cannot open is reported, once per key (`buildApp` gives the server's log). */
  reportTo(log: KeyRingLog): void {
    this.log = log;
  }

  /**
   * The keys this instance signs with now or will sign with and cannot (sealed, and KEYS_SECRET
   * missing or another one; or a damaged row), empty when it can sign with them all: what
   * `/readyz` reports and, for KEYS_SECRET, what keeps the logout worker from claiming deliveries
   * it cannot sign. Worked out afresh from the keys as read at most `KEY_RING_REFRESH_MS` ago,
   * never remembered, so it clears once the keys open; a key opened once stays open in memory (a
   * later sealing changes nothing for it).
   */
  async unopenable(): Promise<UnopenableKey[]> {
    return (await this.keySet()).unopenable(this.clock.now());
  }

  /** Forgets the keys read, so the next use reads the database (after a rotation in this process). */
  invalidate(): void {
    this.current = undefined;
    this.reading = undefined;
    this.generation++;
  }

  private async read(): Promise<KeySet> {
    const generation = this.generation;
    // Taken before the query: the keys are at least as new as this moment.
    const readAt = performance.now();
    const rows = await this.stores.keys.listPublished(this.clock.now());
    const keys = new KeySet(rows, (key) => this.privateKey(key, rows));
    for (const kid of this.imported.keys()) if (!rows.some((k) => k.kid === kid)) this.imported.delete(kid);
    for (const kid of this.reported) if (!rows.some((k) => k.kid === kid)) this.reported.delete(kid);
    if (generation === this.generation) this.current = { readAt, keys };
    // Every key this instance signs with or will sign with is opened as soon as it is seen, not at
    // its first signature: an instance running without KEYS_SECRET then keeps signing with the
    // keys it holds when another instance, started with the secret, seals them (docs/operations.md).
    keys.unopenable(this.clock.now()).catch(() => {});
    return keys;
  }

  /**
   * Opens and imports a private key once per kid; a failure is not remembered, so a fixed row is
   * tried again. A key that wants another KEYS_SECRET, or whose row is damaged, is reported once,
   * saying what to do.
   */
  private privateKey(key: SigningKey, stored: readonly SigningKey[]): Promise<KeyObject> {
    let imported = this.imported.get(key.kid);
    if (!imported) {
      imported = Promise.resolve().then(() => importSigningKey(openStoredPrivateJwk(key, this.keysSecret, stored), publicJwk(key.publicJwk), key.alg));
      this.imported.set(key.kid, imported);
      imported.catch((error: unknown) => {
        if (this.imported.get(key.kid) === imported) this.imported.delete(key.kid);
        const unopenable = unopenableKey(key, error);
        if (unopenable && !this.reported.has(key.kid)) {
          this.reported.add(key.kid);
          this.log.error({ kid: key.kid, alg: key.alg }, `${describeUnopenable(unopenable)}. ${unopenable.cause === 'keys_secret'
            ? 'Until it can, this instance answers 503 to whatever needs that key (id_tokens, logout tokens) and /readyz reports it not ready: restart it with the KEYS_SECRET the other instances have.'
            : `Until then, every instance answers 500 server_error to whatever needs it (${key.alg} id_tokens, ${key.alg} logout tokens, retried later) and /readyz names it.`}`);
        }
      });
    }
    return imported;
  }
}
