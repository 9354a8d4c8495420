/**
 * The HMAC keys every instance shares, one per use, kept in `ServerSecretStore` (sealed with
 * KEYS_SECRET like the other secrets): the first instance to need one makes it, the others read
 * what it stored. Each instance reads a key once and keeps it; `readAll` reads them all before
 * the instance serves, so no request writes one (on SQLite such a write waits for another
 * instance's write lock) and a KEYS_SECRET rollout cannot change one under a running instance.
 */
import { randomBytes } from 'node:crypto';
import type { ServerSecretStore } from './ports.js';
import type { Clock } from '../time.js';

const SHARED_KEY_NAMES = [
  /** The service's mark in the tokens it issues (`token-marks.ts`). */
  'token-mark-hmac',
  /** DPoP server nonces (`src/core/oauth/dpop/nonces.ts`). */
  'dpop-nonce-hmac',
  /** Device cookies against online guessing (`src/core/accounts/device-cookies.ts`). */
  'device-cookie-hmac',
  /** The marker of a pushed request on its way through sign-in (`src/core/oauth/authorize/pushed.ts`). */
  'pushed-request-hmac',
  /** Passkey sign-in challenges, which are not stored until answered (`src/core/accounts/passkeys.ts`). */
  'passkey-challenge-hmac',
  /** A browser's pass after it refused a verification link mailed to an address (`src/core/accounts/email.ts`). */
  'mailbox-pass-hmac',
] as const;

export type SharedKeyName = (typeof SHARED_KEY_NAMES)[number];

export class SharedKeys {
  private readonly read = new Map<SharedKeyName, Promise<Buffer>>();

  constructor(private readonly secrets: ServerSecretStore, private readonly clock: Clock) {}

  /** The key `name`, read once; a read that failed is tried again by the next call. */
  key(name: SharedKeyName): Promise<Buffer> {
    let key = this.read.get(name);
    if (key === undefined) {
      key = this.secrets.getOrCreate(name, randomBytes(32).toString('base64url'), this.clock.now())
        .then((value) => Buffer.from(value, 'base64url'))
        .catch((error: unknown) => {
          this.read.delete(name);
          throw error;
        });
      this.read.set(name, key);
    }
    return key;
  }

  /** Reads (on a new database, makes) every key: before serving, outside any transaction. */
  async readAll(): Promise<void> {
    for (const name of SHARED_KEY_NAMES) await this.key(name);
  }
}
