/**
 * Signing keys for id_tokens (INTERFACE section 5, RFC 7517). Keys live in the database so every
 * instance signs with the same key; private keys are sealed with AES-256-GCM when KEYS_SECRET is
 * set. A rotated key stays verifiable (in the JWKS) until every id_token it signed has expired.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { type JWK, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { IdTokenAlg, SigningKey, Stores } from './ports.js';
import type { Clock, Instant } from './time.js';

export const SIGNING_ALGS: readonly IdTokenAlg[] = ['RS256', 'ES256'];
export const ID_TOKEN_LIFETIME_SECONDS = 3600;
/** A retired key is published this long: the id_token lifetime plus room for clock skew. */
export const RETIRED_KEY_VISIBLE_MS = (ID_TOKEN_LIFETIME_SECONDS + 300) * 1000;

const SEALED_PREFIX = 'enc:v1:';

function sealingKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'svc-signing-keys', 'private-jwk', 32));
}

export function sealPrivateJwk(json: string, secret: string | undefined): string {
  if (secret === undefined) return json;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(secret), iv);
  const body = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The private JWK as JSON; throws when it is sealed and the secret is missing or wrong. */
export function openPrivateJwk(stored: string, secret: string | undefined): string {
  if (!stored.startsWith(SEALED_PREFIX)) return stored;
  if (secret === undefined) throw new Error('signing keys are encrypted: KEYS_SECRET is required');
  const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(secret), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** A new key pair; its `kid` is the RFC 7638 thumbprint of the public key. */
export async function generateSigningKey(alg: IdTokenAlg, keysSecret: string | undefined, now: Instant): Promise<Omit<SigningKey, 'retiredAt'>> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
  const publicJwk: JWK = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const meta = { kid, alg, use: 'sig' };
  return {
    kid,
    alg,
    publicJwk: JSON.stringify({ ...publicJwk, ...meta }),
    privateJwk: sealPrivateJwk(JSON.stringify({ ...(await exportJWK(privateKey)), ...meta }), keysSecret),
    createdAt: now,
  };
}

/** Creates a current key for every algorithm that has none (first start). */
export async function ensureSigningKeys(stores: Stores, clock: Clock, keysSecret: string | undefined): Promise<void> {
  const now = clock.now();
  const usable = await stores.keys.listUsable(now);
  for (const alg of SIGNING_ALGS) {
    if (!usable.some((k) => k.alg === alg && k.retiredAt === null)) {
      await stores.keys.insert(await generateSigningKey(alg, keysSecret, now));
    }
  }
}

/** Adds a new current key for every algorithm and retires the old ones; returns the new kids. */
export async function rotateSigningKeys(stores: Stores, clock: Clock, keysSecret: string | undefined): Promise<Record<IdTokenAlg, string>> {
  const now = clock.now();
  const fresh = await Promise.all(SIGNING_ALGS.map((alg) => generateSigningKey(alg, keysSecret, now)));
  await stores.transaction(async (tx) => {
    for (const key of fresh) {
      await tx.keys.retire(key.alg, now);
      await tx.keys.insert(key);
    }
  });
  return Object.fromEntries(fresh.map((k) => [k.alg, k.kid])) as Record<IdTokenAlg, string>;
}
