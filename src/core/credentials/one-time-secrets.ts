/**
 * A new secret (a personal token, a client secret) carried from the POST that made it to the one
 * page that shows it: post/redirect/get (issue 18 item 7), so reloading that page makes nothing
 * new, and the secret never travels in an address or a log line.
 *
 * The secret is sealed with AES-256-GCM under a random key made for it alone; the browser gets
 * the key and a random id in a short-lived HttpOnly cookie, the database the sealed value under
 * the id's SHA-256. Neither half reveals anything alone: a database leak holds no key, a stolen
 * cookie no ciphertext once the page was shown. Showing it deletes the row in one conditional
 * write, so it is shown exactly once, to the user, for the purpose and subject it was made for.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { generateOpaqueId, hashSecret } from './formats.js';
import type { Stores } from '../stores.js';
import type { Clock } from '../time.js';

/** How long a new secret waits for its page: the redirect follows at once; a slow network gets minutes. */
export const ONE_TIME_SECRET_MS = 5 * 60_000;

export type OneTimePurpose = 'personal_token' | 'client_secret';

/** Whose secret it is and for what: a secret made for one app's page is never shown on another's. */
export interface OneTimeTarget {
  userId: number;
  purpose: OneTimePurpose;
  /** The client id of an app's secret; empty for a personal token. */
  subject: string;
}

const COOKIE_SHAPE = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;

function additionalData(target: OneTimeTarget): Buffer {
  return Buffer.from(JSON.stringify([target.userId, target.purpose, target.subject]));
}

/** Stores `value` (small strings: the secret and what it is called) and returns the cookie value that opens it. */
export async function stashSecret(stores: Stores, clock: Clock, target: OneTimeTarget, value: Record<string, string>): Promise<string> {
  const id = generateOpaqueId();
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData(target));
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  const now = clock.now();
  await stores.oneTimeSecrets.put({
    idHash: hashSecret(id), ...target, sealed: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url'), expiresAt: now + ONE_TIME_SECRET_MS,
  }, now);
  return `${id}.${key.toString('base64url')}`;
}

/**
 * The value `cookie` opens for `target`, once: the row is deleted as it is read. `undefined` for
 * no cookie, a malformed or foreign one, a used or expired one.
 */
export async function takeSecret(stores: Stores, clock: Clock, cookie: string | undefined, target: OneTimeTarget): Promise<Record<string, string> | undefined> {
  const parts = cookie === undefined ? null : COOKIE_SHAPE.exec(cookie);
  if (!parts) return undefined;
  const sealed = await stores.oneTimeSecrets.take(hashSecret(parts[1]!), target, clock.now());
  if (sealed === undefined) return undefined;
  const raw = Buffer.from(sealed, 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(parts[2]!, 'base64url'), raw.subarray(0, 12));
    decipher.setAAD(additionalData(target));
    decipher.setAuthTag(raw.subarray(12, 28));
    const value: unknown = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
    return typeof value === 'object' && value !== null ? value as Record<string, string> : undefined;
  } catch {
    // A key that does not open it (a forged cookie with a real id): nothing to show.
    return undefined;
  }
}
