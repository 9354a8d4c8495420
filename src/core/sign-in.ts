/**
 * Password sign-in and the password re-check before a sensitive action, throttled as INTERFACE
 * section 4 says (RFC 6819 4.4.3.6; OWASP "device cookies"):
 * - a success never counts, so any number of people behind one address can sign in;
 * - a browser holding a device cookie for the account counts its failures on its own counter;
 * - every other failure counts per account (10) and per address (100) in 15-minute windows.
 * Every failure looks the same from outside, so it never reveals whether an account exists.
 */
import { canBeUsername } from './accounts.js';
import { type AuditSink, typedUsername } from './audit.js';
import type { DeviceCookies, DeviceEntry } from './device-cookies.js';
import { verifyPassword } from './passwords.js';
import type { RateLimiter, Stores, User } from './ports.js';
import type { Clock, Instant } from './time.js';

export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
export const SIGN_IN_FAILURES_PER_ACCOUNT = 10;
export const SIGN_IN_FAILURES_PER_DEVICE = 10;
export const SIGN_IN_FAILURES_PER_ADDRESS = 100;

export interface SignInDeps {
  stores: Stores;
  limiter: RateLimiter;
  clock: Clock;
  deviceCookies: DeviceCookies;
  audit: AuditSink;
}

/** Where a password attempt comes from: the address and the browser's device cookie, if any. */
export interface AttemptOrigin {
  address: string;
  deviceCookie: string | undefined;
}

export type Throttled = { ok: false; reason: 'throttled'; retryAfterSeconds: number };

export type SignInOutcome =
  | { ok: true; user: User; deviceCookie: string }
  | Throttled
  | { ok: false; reason: 'invalid_credentials' | 'account_unusable' };

interface Counter {
  key: string;
  limit: number;
}

/** The counters an attempt on `account` is counted on (INTERFACE section 4). */
function countersFor(account: string, origin: AttemptOrigin, device: DeviceEntry | undefined): Counter[] {
  if (device) return [{ key: `signin:device:${device.nonce}`, limit: SIGN_IN_FAILURES_PER_DEVICE }];
  return [
    { key: `signin:account:${account}`, limit: SIGN_IN_FAILURES_PER_ACCOUNT },
    { key: `signin:address:${origin.address}`, limit: SIGN_IN_FAILURES_PER_ADDRESS },
  ];
}

/**
 * Runs `check` (a password verification) under the counters. The attempt is counted before the
 * check, so racing guesses cannot slip past a limit together, and taken back when `check`
 * succeeds. Past a limit the check does not run at all.
 */
async function throttledCheck<T>(deps: SignInDeps, counters: Counter[], check: () => Promise<T | undefined>): Promise<T | Throttled | undefined> {
  const now: Instant = deps.clock.now();
  const decisions = await Promise.all(counters.map((c) => deps.limiter.hit(c.key, c.limit, SIGN_IN_WINDOW_SECONDS, now)));
  const refused = decisions.filter((d) => !d.allowed);
  if (refused.length > 0) {
    const resetAt = Math.max(...refused.map((d) => d.resetAt));
    return { ok: false, reason: 'throttled', retryAfterSeconds: Math.max(1, resetAt - Math.floor(now / 1000)) };
  }
  const passed = await check();
  if (passed !== undefined) await Promise.all(counters.map((c) => deps.limiter.refund(c.key, SIGN_IN_WINDOW_SECONDS, now)));
  return passed;
}

function isThrottled(value: unknown): value is Throttled {
  return typeof value === 'object' && value !== null && (value as Throttled).reason === 'throttled';
}

/** The lower-cased account name an attempt names, bounded so a counter key stays small. */
function accountKey(username: string): string {
  return username.trim().toLowerCase().slice(0, 64);
}

export async function signIn(deps: SignInDeps, attempt: AttemptOrigin & { username: string; password: string }): Promise<SignInOutcome> {
  const outcome = await checkSignIn(deps, attempt);
  const { address } = attempt;
  if (outcome.ok) {
    deps.audit.record({ audit: 'sign_in.succeeded', userId: outcome.user.id, username: outcome.user.username, address });
    return { ok: true, user: outcome.user, deviceCookie: outcome.deviceCookie };
  }
  deps.audit.record({
    audit: 'sign_in.failed', username: typedUsername(attempt.username), reason: outcome.reason, address,
    ...('userId' in outcome && outcome.userId !== undefined ? { userId: outcome.userId } : {}),
  });
  return outcome.reason === 'throttled' ? outcome : { ok: false, reason: outcome.reason };
}

/** An attempt's outcome with, for the audit log only, the account a failed check named (if any). */
type Checked =
  | { ok: true; user: User; deviceCookie: string }
  | Throttled
  | { ok: false; reason: 'invalid_credentials' | 'account_unusable'; userId: number | undefined };

async function checkSignIn(deps: SignInDeps, attempt: AttemptOrigin & { username: string; password: string }): Promise<Checked> {
  const account = accountKey(attempt.username);
  const device = await deps.deviceCookies.entryFor(attempt.deviceCookie, account);
  let unusable = false;
  let named: number | undefined;
  const result = await throttledCheck(deps, countersFor(account, attempt, device), async () => {
    const found = canBeUsername(account) ? await deps.stores.users.findCredentials(account) : undefined;
    named = found?.user.id;
    // The password is checked (or a decoy is) even for unknown accounts: equal time either way.
    const valid = await verifyPassword(found?.passwordHash, attempt.password);
    if (!found || !valid) return undefined;
    // The right password of an unusable account is a failure like any other, counted the same,
    // so the counters cannot tell an attacker that a guess was right.
    if (found.user.status !== 'active') {
      unusable = true;
      return undefined;
    }
    return found.user;
  });
  if (isThrottled(result)) return result;
  if (result === undefined) return { ok: false, reason: unusable ? 'account_unusable' : 'invalid_credentials', userId: named };
  return { ok: true, user: result, deviceCookie: await deps.deviceCookies.afterSignIn(attempt.deviceCookie, account) };
}

/**
 * Asks a signed-in user for the password again before a sensitive action (a new personal
 * token), counted exactly as sign-in is, so the form cannot be used to guess.
 */
export async function confirmPassword(
  deps: SignInDeps,
  user: Pick<User, 'id' | 'username'>,
  password: string,
  origin: AttemptOrigin,
): Promise<'ok' | 'wrong' | Throttled> {
  const account = accountKey(user.username);
  const device = await deps.deviceCookies.entryFor(origin.deviceCookie, account);
  const result = await throttledCheck(deps, countersFor(account, origin, device), async () => {
    const found = await deps.stores.users.findCredentials(account);
    return (await verifyPassword(found?.passwordHash, password)) && found?.user.status === 'active' ? ('ok' as const) : undefined;
  });
  if (result === 'ok') return result;
  deps.audit.record({
    audit: 'password_confirm.failed', userId: user.id, reason: result === undefined ? 'wrong_password' : 'throttled', address: origin.address,
  });
  return result ?? 'wrong';
}
