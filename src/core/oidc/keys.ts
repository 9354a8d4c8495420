/**
 * Signing keys for id_tokens (INTERFACE section 5, RFC 7517). Keys live in the database so every
 * instance signs with the same key; private keys are sealed with AES-256-GCM when KEYS_SECRET is
 * set. A key is published before it signs, and stays published until every id_token it signed
 * has expired; docs/oidc.md tells the whole lifecycle.
 */
import { type JWK, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { KeysSecretError, SigningKeyDamagedError } from '../errors.js';
import type { Stores } from '../stores.js';
import type { GeneratedSigningKey, IdTokenAlg, SigningKey } from './ports.js';
import { type SealedPlace, isSealed, openSecret, sealSecret } from '../credentials/sealing.js';
import type { Clock, Instant } from '../time.js';

export const SIGNING_ALGS: readonly IdTokenAlg[] = ['RS256', 'ES256'];
export const ID_TOKEN_LIFETIME_SECONDS = 3600;
/** A retired key is published this long: the id_token lifetime plus room for clock skew. */
export const RETIRED_KEY_VISIBLE_MS = (ID_TOKEN_LIFETIME_SECONDS + 300) * 1000;
/**
 * How long after a change in the database every instance's JWKS shows it (INTERFACE section 5).
 * The key ring reads the keys again at most `KEY_RING_REFRESH_MS` after it last did.
 */
export const KEY_PROPAGATION_SECONDS = 5;

/** Where a key's private JWK is stored: it opens for that key only. */
function placeOf(kid: string): SealedPlace {
  return { column: 'signing_keys.private_jwk', row: kid };
}

export function sealPrivateJwk(json: string, secret: string | undefined, kid: string): string {
  return sealSecret(json, secret, placeOf(kid));
}

/** The private JWK of key `kid` as JSON; throws `KeysSecretError` when it is sealed and the secret is missing or wrong. */
export function openPrivateJwk(stored: string, secret: string | undefined, kid: string): string {
  const opened = openSecret(stored, secret, placeOf(kid));
  if (opened.ok) return opened.plain;
  throw new KeysSecretError(opened.reason === 'keys_secret_missing'
    ? 'signing keys are encrypted and KEYS_SECRET is not set'
    : 'KEYS_SECRET does not open the signing keys (it differs from the one they were encrypted with)');
}

/**
 * `openPrivateJwk` for `key`, one of the keys `stored`. A sealed value that `secret` does not open
 * while it opens another stored key was altered or moved from another row: a start and `keys
 * rotate` refuse keys that the secret does not open, so no database holds keys sealed under two
 * secrets. Such a key is damaged (`SigningKeyDamagedError`), not a matter of this instance's
 * KEYS_SECRET, which another instance would not fix either.
 */
export function openStoredPrivateJwk(key: SigningKey, secret: string | undefined, stored: readonly SigningKey[]): string {
  try {
    return openPrivateJwk(key.privateJwk, secret, key.kid);
  } catch (error) {
    const opensOthers = secret !== undefined && stored.some((other) => other.kid !== key.kid && isSealed(other.privateJwk) && openSecret(other.privateJwk, secret, placeOf(other.kid)).ok);
    if (error instanceof KeysSecretError && opensOthers) throw new SigningKeyDamagedError('its sealed value does not open with the KEYS_SECRET that opens the other keys: it was altered, or moved from another row');
    throw error;
  }
}

/**
 * Whether `keysSecret` opens the stored keys, as a start and `keys rotate` ask before anything
 * else: the first `KeysSecretError` is thrown. A key that is damaged instead (an altered sealed
 * value, `openStoredPrivateJwk`) refuses neither: the key ring names it, and a rotation is what
 * replaces it.
 */
function checkKeysOpen(keys: readonly SigningKey[], keysSecret: string | undefined): void {
  for (const key of keys) {
    try {
      openStoredPrivateJwk(key, keysSecret, keys);
    } catch (error) {
      if (!(error instanceof SigningKeyDamagedError)) throw error;
    }
  }
}

/** A new key pair; its `kid` is the RFC 7638 thumbprint of the public key. */
export async function generateSigningKey(alg: IdTokenAlg, keysSecret: string | undefined): Promise<GeneratedSigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
  const publicJwk: JWK = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const meta = { kid, alg, use: 'sig' };
  return {
    kid,
    alg,
    publicJwk: JSON.stringify({ ...publicJwk, ...meta }),
    privateJwk: sealPrivateJwk(JSON.stringify({ ...(await exportJWK(privateKey)), ...meta }), keysSecret, kid),
  };
}

/**
 * What a command that adds keys checks first, so the keys it adds are sealed as the servers'
 * are: the keys stored must open with `keysSecret`, and with a `keysSecret` they must already be
 * sealed. Plaintext keys mean the servers run without KEYS_SECRET: a key sealed now would stop
 * them signing once it is active. Refused with `KeysSecretError`, naming what to do.
 */
export async function checkKeysSealedAlike(stores: Stores, keysSecret: string | undefined): Promise<void> {
  const keys = await stores.keys.listAll();
  checkKeysOpen(keys, keysSecret);
  if (keysSecret !== undefined && keys.some((key) => !isSealed(key.privateJwk))) {
    throw new KeysSecretError('the signing keys in the database are not encrypted, so the servers run without KEYS_SECRET: restart them with KEYS_SECRET (they encrypt the keys at start), or run this command without it');
  }
}

/**
 * What a start does before it uses the keys, after `sealStoredSecrets` sealed what was stored
 * plain: refuses when the database holds sealed keys that `keysSecret` cannot open
 * (`KeysSecretError`), and creates a key for every algorithm that has none signing or waiting to sign (the first
 * start), active at once: nothing was signed before it. Instances starting together on a new
 * database each find none, and each makes one; the store keeps only the first of each algorithm
 * (`insertUnlessLive`), so they all sign with the same keys (INTERFACE section 5).
 */
export async function ensureSigningKeys(stores: Stores, clock: Clock, keysSecret: string | undefined): Promise<void> {
  const keys = await stores.keys.listAll();
  checkKeysOpen(keys, keysSecret);
  const now = clock.now();
  for (const alg of SIGNING_ALGS) {
    const live = keys.some((k) => k.alg === alg && k.retiredAt === null && (k.withdrawnAt === null || k.withdrawnAt > now));
    if (!live) await stores.keys.insertUnlessLive({ ...(await generateSigningKey(alg, keysSecret)), createdAt: now, activeAt: now }, now);
  }
}

export interface RotateOptions {
  /** SIGNING_KEY_ACTIVATION_SECONDS: how long the new keys are published before they sign. */
  activationSeconds: number;
  /** Sign with the new keys at once (after a compromise). */
  now?: boolean;
  /** Also withdraw every older key from the JWKS at once; implies `now`. */
  retirePrevious?: boolean;
}

export interface Rotation {
  /** The new key of every algorithm. */
  kids: Record<IdTokenAlg, string>;
  /** When the new keys start signing, and the old ones stop. */
  activeAt: Instant;
}

/**
 * Adds a new key for every algorithm (INTERFACE section 5). It is published at once and signs
 * from `activeAt`; the key it replaces signs until then and stays published for the id_token
 * lifetime plus five minutes after. With `retirePrevious`, older keys leave the JWKS at once.
 */
export async function rotateSigningKeys(stores: Stores, clock: Clock, keysSecret: string | undefined, options: RotateOptions): Promise<Rotation> {
  const fresh = await generateRotation(keysSecret);
  return stores.transaction((tx) => storeRotation(tx, clock, fresh, options));
}

/** The new keys of a rotation, one per algorithm: slow, so made before any transaction begins. */
export function generateRotation(keysSecret: string | undefined): Promise<GeneratedSigningKey[]> {
  return Promise.all(SIGNING_ALGS.map((alg) => generateSigningKey(alg, keysSecret)));
}

/** Stores the keys of `generateRotation` as `rotateSigningKeys` says, inside the caller's transaction. */
export async function storeRotation(tx: Stores, clock: Clock, fresh: readonly GeneratedSigningKey[], options: RotateOptions): Promise<Rotation> {
  // Read after the (slow) key generation, so the delay counts from the write.
  const now = clock.now();
  const immediate = options.now === true || options.retirePrevious === true;
  const activeAt = immediate ? now : now + options.activationSeconds * 1000;
  for (const key of fresh) {
    await tx.keys.retire(key.alg, activeAt, activeAt + RETIRED_KEY_VISIBLE_MS);
    if (options.retirePrevious) await tx.keys.withdraw(key.alg, now);
    await tx.keys.insert({ ...key, createdAt: now, activeAt });
  }
  return { kids: Object.fromEntries(fresh.map((k) => [k.alg, k.kid])) as Record<IdTokenAlg, string>, activeAt };
}
