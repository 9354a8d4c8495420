/**
 * Secrets the service must read back (an authenticator app's TOTP key), sealed at rest with
 * AES-256-GCM under a key derived from KEYS_SECRET by HKDF-SHA-256, as the signing keys are
 * (`src/core/keys.ts`), with a label of their own so one derived key never serves two purposes.
 * Without KEYS_SECRET they are stored as they are. A sealed value that KEYS_SECRET does not open
 * (none set, or another) is an outcome, `Opened`, for the caller to refuse with, never an exception.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What every sealed value starts with; a stored value without it is plain. */
export const SEALED_PREFIX = 'enc:v1:';

function sealingKey(keysSecret: string, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', keysSecret, 'svc-account-secrets', label, 32));
}

/** `plain` sealed for `label` when `keysSecret` is set; `plain` itself otherwise. */
export function sealSecret(plain: string, keysSecret: string | undefined, label: string): string {
  if (keysSecret === undefined) return plain;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(keysSecret, label), iv);
  cipher.setAAD(Buffer.from(label));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** Why a sealed value does not open. */
export type UnsealFailure = 'keys_secret_missing' | 'keys_secret_differs';

/** Each failure in the operator's words; none holds a secret. */
export const UNSEAL_FAILURES: Record<UnsealFailure, string> = {
  keys_secret_missing: 'it is sealed and KEYS_SECRET is not set',
  keys_secret_differs: 'KEYS_SECRET differs from the one it was sealed with (a database copied from another deployment?), or the stored value was altered',
};

export type Opened = { ok: true; plain: string } | { ok: false; reason: UnsealFailure };

/** The plain secret, or why `keysSecret` cannot open it when it is sealed. */
export function openSecret(stored: string, keysSecret: string | undefined, label: string): Opened {
  if (!stored.startsWith(SEALED_PREFIX)) return { ok: true, plain: stored };
  if (keysSecret === undefined) return { ok: false, reason: 'keys_secret_missing' };
  const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
  // GCM's tag check (NIST SP 800-38D 7.2) is the one failure expected here: `final()` throws when
  // the key is another or the value was altered; a value too short to hold an IV and a tag
  // throws at `setAuthTag`. Either way this key does not open it.
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(keysSecret, label), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(label));
    decipher.setAuthTag(raw.subarray(12, 28));
    return { ok: true, plain: Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8') };
  } catch {
    return { ok: false, reason: 'keys_secret_differs' };
  }
}
