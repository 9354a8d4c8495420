/**
 * Device cookies (OWASP "Slow down online guessing attacks with device cookies"): a browser that
 * signed into an account holds a signed proof of it, so its own failed attempts are counted apart
 * from everyone else's and an attacker elsewhere cannot lock the owner out (INTERFACE section 4).
 *
 * The cookie holds up to `MAX_ACCOUNTS` entries `account.nonce.mac`, newest first: `account` is
 * the lower-cased username (usernames are never reused), `nonce` random, `mac` an HMAC-SHA256 of
 * both under a key every instance shares (`SharedKeys`, `device-cookie-hmac`), compared in
 * constant time.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../credentials/formats.js';
import type { SharedKeys } from '../credentials/shared-keys.js';
import { readTypedUsername } from './accounts.js';

export const DEVICE_COOKIE_LIFETIME_SECONDS = 365 * 86_400;
const MAX_ACCOUNTS = 5;
const ENTRY_SHAPE = /^([a-z0-9][a-z0-9_-]{1,28}[a-z0-9])\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** The lower-cased account name an attempt names, bounded so a counter key stays small. */
export function accountKey(username: string): string {
  // Read as typed (`readTypedUsername`: full-width letters are the ASCII ones they read as), in any
  // letter case. One too long to be a username is cut, not read: its key names no account.
  return (readTypedUsername(username) ?? username.trim().slice(0, 64)).toLowerCase().slice(0, 64);
}

export interface DeviceEntry {
  /** The lower-cased username the browser signed into. */
  account: string;
  /** Names this browser's own counter of failed attempts. */
  nonce: string;
}

export class DeviceCookies {
  constructor(private readonly keys: SharedKeys) {}

  /** The entry of `cookie` for `account` whose signature holds, or `undefined`. */
  async entryFor(cookie: string | undefined, account: string): Promise<DeviceEntry | undefined> {
    if (cookie === undefined) return undefined;
    for (const entry of entries(cookie)) {
      if (entry.account === account && constantTimeEqual(entry.mac, await this.mac(entry.account, entry.nonce))) {
        return { account: entry.account, nonce: entry.nonce };
      }
    }
    return undefined;
  }

  /**
   * The cookie after a sign-in to `account`: a new entry for it first (a new nonce, so a
   * lockout of the old one does not follow the owner), the browser's other entries after it.
   */
  async afterSignIn(cookie: string | undefined, account: string): Promise<string> {
    const nonce = randomBytes(16).toString('base64url');
    const fresh = `${account}.${nonce}.${await this.mac(account, nonce)}`;
    const others = entries(cookie ?? '').filter((e) => e.account !== account).map((e) => e.raw);
    return [fresh, ...others].slice(0, MAX_ACCOUNTS).join('~');
  }

  private async mac(account: string, nonce: string): Promise<string> {
    return createHmac('sha256', await this.keys.key('device-cookie-hmac')).update(`${account}.${nonce}`).digest('base64url');
  }
}

function entries(cookie: string): Array<{ account: string; nonce: string; mac: string; raw: string }> {
  if (cookie.length > 1024) return [];
  return cookie.split('~').slice(0, MAX_ACCOUNTS).flatMap((raw) => {
    const match = ENTRY_SHAPE.exec(raw);
    return match ? [{ account: match[1]!, nonce: match[2]!, mac: match[3]!, raw }] : [];
  });
}
