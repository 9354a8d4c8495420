/**
 * Secrets the service must read back (a private signing key, an authenticator app's TOTP key, a
 * server HMAC key), sealed at rest with AES-256-GCM under a key derived from KEYS_SECRET by
 * HKDF-SHA-256. The additional authenticated data names where the value belongs (its column and
 * row), so a sealed value copied into another row, or another column, does not open there.
 * Without KEYS_SECRET they are stored as they are. A sealed value that KEYS_SECRET does not open
 * (none set, or another) is an outcome, `Opened`, for the caller to refuse with, never an exception.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SealedColumn } from './ports.js';

/** What every sealed value starts with, of any version; a stored value without it is plain. */
export const SEALED_MARK = 'enc:';
/** What a value sealed as `sealSecret` seals now starts with. */
export const SEALED_PREFIX = 'enc:v2:';
/**
 * The first form, before the row was bound: signing keys and TOTP keys, each column under a key
 * of its own. Still opened, and sealed again in the current form by the next start with KEYS_SECRET.
 */
const V1_PREFIX = 'enc:v1:';
const V1_KEYS: Partial<Record<SealedColumn, { salt: string; info: string; aad?: string }>> = {
  'signing_keys.private_jwk': { salt: 'svc-signing-keys', info: 'private-jwk' },
  'totp_credentials.secret': { salt: 'svc-account-secrets', info: 'totp-secret', aad: 'totp-secret' },
};

/** Where a sealed value is stored: it opens there only. */
export interface SealedPlace {
  column: SealedColumn;
  /** The row's key (a kid, a user id, a secret's name). */
  row: string;
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_MARK);
}

function keyFor(keysSecret: string, salt: string, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', keysSecret, salt, info, 32));
}

function aadOf(place: SealedPlace): Buffer {
  return Buffer.from(JSON.stringify([place.column, place.row]));
}

/** `plain` sealed for `place` when `keysSecret` is set; `plain` itself otherwise. */
export function sealSecret(plain: string, keysSecret: string | undefined, place: SealedPlace): string {
  if (keysSecret === undefined) return plain;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(keysSecret, 'svc-sealed-secrets', place.column), iv);
  cipher.setAAD(aadOf(place));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** Why a sealed value does not open. */
export type UnsealFailure = 'keys_secret_missing' | 'keys_secret_differs';

/** Each failure in the operator's words; none holds a secret. */
export const UNSEAL_FAILURES: Record<UnsealFailure, string> = {
  keys_secret_missing: 'it is sealed and KEYS_SECRET is not set',
  keys_secret_differs: 'KEYS_SECRET differs from the one it was sealed with (a database copied from another deployment?), or the stored value was altered or moved from another row',
};

export type Opened = { ok: true; plain: string } | { ok: false; reason: UnsealFailure };

/** The plain secret stored at `place`, or why `keysSecret` cannot open it when it is sealed. */
export function openSecret(stored: string, keysSecret: string | undefined, place: SealedPlace): Opened {
  if (!isSealed(stored)) return { ok: true, plain: stored };
  if (keysSecret === undefined) return { ok: false, reason: 'keys_secret_missing' };
  const v1 = V1_KEYS[place.column];
  const opened = stored.startsWith(SEALED_PREFIX)
    ? decrypt(stored.slice(SEALED_PREFIX.length), keyFor(keysSecret, 'svc-sealed-secrets', place.column), aadOf(place))
    : stored.startsWith(V1_PREFIX) && v1
      ? decrypt(stored.slice(V1_PREFIX.length), keyFor(keysSecret, v1.salt, v1.info), v1.aad === undefined ? undefined : Buffer.from(v1.aad))
      : undefined;
  return opened === undefined ? { ok: false, reason: 'keys_secret_differs' } : { ok: true, plain: opened };
}

function decrypt(body: string, key: Buffer, aad: Buffer | undefined): string | undefined {
  const raw = Buffer.from(body, 'base64url');
  // GCM's tag check (NIST SP 800-38D 7.2) is the one failure expected here: `final()` throws when
  // the key is another, the value was altered or the AAD (its place) differs; a value too short
  // to hold an IV and a tag throws at `setAuthTag`. Either way this key does not open it here.
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    if (aad) decipher.setAAD(aad);
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
