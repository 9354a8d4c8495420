/**
 * Password sign-in with throttling per account and per address (RFC 6819 4.4.3.6 / 5.1.4.2.3).
 * Every failure looks the same from outside, so it never reveals whether an account exists.
 */
import { canBeUsername } from './accounts.js';
import { verifyPassword } from './passwords.js';
import type { RateLimiter, Stores, User } from './ports.js';
import type { Clock } from './time.js';

export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
export const SIGN_IN_ATTEMPTS_PER_ACCOUNT = 10;
export const SIGN_IN_ATTEMPTS_PER_ADDRESS = 30;

export type SignInOutcome =
  | { ok: true; user: User }
  | { ok: false; reason: 'throttled' | 'invalid_credentials' | 'account_unusable' };

export async function signIn(
  deps: { stores: Stores; limiter: RateLimiter; clock: Clock },
  attempt: { username: string; password: string; address: string },
): Promise<SignInOutcome> {
  const now = deps.clock.now();
  const account = attempt.username.trim().toLowerCase().slice(0, 64);
  const [byAccount, byAddress] = await Promise.all([
    deps.limiter.hit(`signin:account:${account}`, SIGN_IN_ATTEMPTS_PER_ACCOUNT, SIGN_IN_WINDOW_SECONDS, now),
    deps.limiter.hit(`signin:address:${attempt.address}`, SIGN_IN_ATTEMPTS_PER_ADDRESS, SIGN_IN_WINDOW_SECONDS, now),
  ]);
  if (!byAccount.allowed || !byAddress.allowed) return { ok: false, reason: 'throttled' };
  const found = canBeUsername(account) ? await deps.stores.users.findCredentials(account) : undefined;
  // The password is checked (or a decoy is) even for unknown accounts: equal time either way.
  const valid = await verifyPassword(found?.passwordHash, attempt.password);
  if (!found || !valid) return { ok: false, reason: 'invalid_credentials' };
  if (found.user.status !== 'active') return { ok: false, reason: 'account_unusable' };
  return { ok: true, user: found.user };
}

/**
 * Asks a signed-in user for the password again before a sensitive action (a new personal
 * token): the same throttle per account as sign-in, so the form cannot be used to guess.
 */
export async function confirmPassword(
  deps: { stores: Stores; limiter: RateLimiter; clock: Clock },
  user: Pick<User, 'username'>,
  password: string,
): Promise<'ok' | 'wrong' | 'throttled'> {
  const account = user.username.toLowerCase();
  const decision = await deps.limiter.hit(`signin:account:${account}`, SIGN_IN_ATTEMPTS_PER_ACCOUNT, SIGN_IN_WINDOW_SECONDS, deps.clock.now());
  if (!decision.allowed) return 'throttled';
  const found = await deps.stores.users.findCredentials(account);
  return (await verifyPassword(found?.passwordHash, password)) && found?.user.status === 'active' ? 'ok' : 'wrong';
}
