/** Sign-up: the account rules, the list of common passwords, and throttling per address. */
import { addressKey } from '../addresses.js';
import { checkNewPassword, checkUsername, createAccount, isReservedUsername } from './accounts.js';
import { ConflictError, type FieldProblem, InputError, checkAll } from '../errors.js';
import type { RateLimiter } from '../rate-limiter.js';
import type { Stores } from '../stores.js';
import { checkNickname } from './nicknames.js';
import { accountKey } from './device-cookies.js';
import { PasswordsBusyError } from './passwords.js';
import type { User } from './ports.js';
import type { Clock } from '../time.js';
import { throttled } from './sign-in.js';

export const SIGN_UP_WINDOW_SECONDS = 3600;

export type SignUpOutcome =
  | { ok: true; user: User }
  /** Every field at fault: the username's, the password's and the nickname's problems, when more than one is wrong. */
  | { ok: false; reason: 'invalid'; problems: readonly FieldProblem[] }
  | { ok: false; reason: 'taken' }
  | { ok: false; reason: 'throttled'; retryAfterSeconds: number };

/**
 * Creates an account. An address may try to create `settings.signUpsPerHour` accounts in an hour
 * (bad input does not count): enough for a class or an office behind one NAT, few for a script.
 */
export async function signUp(
  deps: { stores: Stores; limiter: RateLimiter; clock: Clock; settings: { signUpsPerHour: number } },
  attempt: { username: string; password: string; address: string; nickname?: string },
): Promise<SignUpOutcome> {
  const nickname = attempt.nickname ?? '';
  // Read as sign-in reads it (`checkUsername`: full-width letters too), and stored so.
  let username = attempt.username;
  try {
    checkAll(() => {
      username = checkUsername(attempt.username);
      if (isReservedUsername(username)) throw InputError.worded('username', 'that username is reserved; choose another', { key: 'problems.usernameReserved' });
    }, () => checkNewPassword(attempt.password, username), () => checkNickname(nickname));
  } catch (error) {
    if (error instanceof InputError) return { ok: false, reason: 'invalid', problems: error.problems };
    throw error;
  }
  const now = deps.clock.now();
  const key = `signup:address:${addressKey(attempt.address)}`;
  const decision = await deps.limiter.hit(key, deps.settings.signUpsPerHour, SIGN_UP_WINDOW_SECONDS, now);
  if (!decision.allowed) return throttled(decision, now);
  if (await deps.stores.users.findByUsername(username)) return { ok: false, reason: 'taken' };
  try {
    return { ok: true, user: await createAccount(deps.stores, deps.clock, { username, password: attempt.password, nickname }, { address: attempt.address, account: accountKey(username) }) };
  } catch (error) {
    if (error instanceof ConflictError) return { ok: false, reason: 'taken' };
    // The password hash queue was full (503): nothing was tried, so nothing counts.
    if (error instanceof PasswordsBusyError) await deps.limiter.refund(key, SIGN_UP_WINDOW_SECONDS, now, decision);
    throw error;
  }
}
