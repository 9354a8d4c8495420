/**
 * Secrets the service must read back (an authenticator app's TOTP key), sealed at rest with
 * AES-256-GCM under a key derived from KEYS_SECRET by HKDF-SHA-256, as the signing keys are
 * (`src/core/keys.ts`), with a label of their own so one derived key never serves two purposes.
 * Without KEYS_SECRET they are stored as they are; a sealed value and no KEYS_SECRET is an error.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What every sealed value starts with; a stored value without it is plain. */
export const SEALED_PREFIX = 'enc:v1:';

export class SealedSecretError extends Error {
  override readonly name = 'SealedSecretError';
}

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

/** The plain secret; throws `SealedSecretError` when it is sealed and `keysSecret` cannot open it. */
export function openSecret(stored: string, keysSecret: string | undefined, label: string): string {
  if (!stored.startsWith(SEALED_PREFIX)) return stored;
  if (keysSecret === undefined) throw new SealedSecretError('an account secret is encrypted and KEYS_SECRET is not set');
  const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(keysSecret, label), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(label));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new SealedSecretError('KEYS_SECRET does not open an account secret (it differs from the one it was encrypted with)');
  }
}
