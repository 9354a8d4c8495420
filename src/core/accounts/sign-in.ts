/**
 * Password sign-in and the password re-check before a sensitive action, throttled as INTERFACE
 * section 4 says (RFC 6819 4.4.3.6; OWASP "device cookies"):
 * - a right password never counts (an unusable account's neither), so any number of people behind
 *   one address can sign in;
 * - a browser holding a device cookie for the account counts its failures on its own counter;
 * - every other failure counts per account (10) and per address (100) in 15-minute windows.
 * Every failure looks the same from outside, so it never reveals whether an account exists.
 */
import { canBeUsername } from './accounts.js';
import type { Locale } from '../locales.js';
import { addressKey } from '../addresses.js';
import { type AuditEvent, type AuditSink, type SignInFailure, typedUsername } from '../audit.js';
import { type DeviceCookies, type DeviceEntry, accountKey } from './device-cookies.js';
import { type HashAsker, PASSWORD_MAX_LENGTH, PasswordsBusyError, hashIsCurrent, hashPassword, verifyPassword } from './passwords.js';
import type { RateLimitDecision, RateLimiter } from '../rate-limiter.js';
import type { Stores } from '../stores.js';
import type { User, UserStatus } from './ports.js';
import type { SecurityLog } from './security-log.js';
import type { Clock, Instant } from '../time.js';

export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
export const SIGN_IN_FAILURES_PER_ACCOUNT = 10;
export const SIGN_IN_FAILURES_PER_DEVICE = 10;
export const SIGN_IN_FAILURES_PER_ADDRESS = 100;

export interface SignInDeps {
  stores: Stores;
  limiter: RateLimiter;
  clock: Clock;
  deviceCookies: DeviceCookies;
  /** Failed attempts on an existing account are written to its security log (issue 18 item 5). */
  securityLog: SecurityLog;
  /** Where audit events go (the server log). */
  audit: AuditSink;
}

/** Where a password attempt comes from: the address and the browser's device cookie, if any. */
export interface AttemptOrigin {
  address: string;
  deviceCookie: string | undefined;
  /** The browser's User-Agent, for the security log. */
  userAgent?: string | undefined;
  /** The page's language, for a notice the attempt causes (`EventOrigin`). */
  locale?: Locale | undefined;
  /** The request's id, as its log lines carry it (`reqId`): its audit lines carry it too (`EventOrigin`). */
  requestId?: string | undefined;
  /**
   * Made with a live reset link (a second-step code on the reset form): the link proves the
   * mailbox, which someone failing the password elsewhere does not hold, so such attempts count
   * on the account's code counter alone, and a locked account can still be recovered by its owner.
   */
  withResetLink?: boolean;
}

export type Throttled = { ok: false; reason: 'throttled'; retryAfterSeconds: number };

/** The refusal a limiter's decision makes: seconds to the window's end, at least one (`Retry-After`, RFC 9110 10.2.3). */
export function throttled(decision: RateLimitDecision, now: Instant): Throttled {
  return { ok: false, reason: 'throttled', retryAfterSeconds: Math.max(1, decision.resetAt - Math.floor(now / 1000)) };
}

/**
 * A sign-in refused for the account's status, with the account: only the right password gets
 * there, and its holder is told the status (a reset would not help), never someone guessing; of
 * an account with two-step verification on, only after its second step.
 */
export type SignInOutcome =
  | { ok: true; user: User; deviceCookie: string }
  | Throttled
  | { ok: false; reason: 'invalid_credentials' }
  | { ok: false; reason: 'account_unusable'; user: User & { status: Exclude<UserStatus, 'active'> } };

interface Counter {
  key: string;
  limit: number;
}

/**
 * The counters an attempt on `account` is counted on (INTERFACE section 4), the address's first:
 * an address past its limit is refused before its attempt can make an account's counter.
 */
function countersFor(account: string, origin: AttemptOrigin, device: DeviceEntry | undefined, attempt: 'password' | 'code'): Counter[] {
  if (device) return [{ key: `signin:device:${device.nonce}`, limit: SIGN_IN_FAILURES_PER_DEVICE }];
  // Every code tried for the account without its device cookie, on a reset form or after the
  // password: one who holds both the password and the mailbox gets ten codes a window in all,
  // not ten on each way in (attack117); no one without either can fill it.
  const codes = { key: `signin:code:${account}`, limit: SIGN_IN_FAILURES_PER_ACCOUNT };
  if (origin.withResetLink) return [codes];
  return [
    { key: `signin:address:${addressKey(origin.address)}`, limit: SIGN_IN_FAILURES_PER_ADDRESS },
    { key: `signin:account:${account}`, limit: SIGN_IN_FAILURES_PER_ACCOUNT },
    ...(attempt === 'code' ? [codes] : []),
  ];
}

/**
 * Runs `check` (a password verification) under the counters, in order. The attempt is counted
 * before the check, so racing guesses cannot slip past a limit together, and taken back when
 * `check` succeeds. Past a limit the check does not run at all, and the counters after the one
 * that refused are not touched.
 */
async function throttledCheck<T>(deps: Omit<SignInDeps, 'securityLog'>, counters: Counter[], check: () => Promise<T | undefined>): Promise<T | Throttled | undefined> {
  const now: Instant = deps.clock.now();
  const counted: Array<{ key: string; decision: RateLimitDecision }> = [];
  for (const counter of counters) {
    const decision = await deps.limiter.hit(counter.key, counter.limit, SIGN_IN_WINDOW_SECONDS, now);
    counted.push({ key: counter.key, decision });
    if (!decision.allowed) return throttled(decision, now);
  }
  const refund = () => Promise.all(counted.map((c) => deps.limiter.refund(c.key, SIGN_IN_WINDOW_SECONDS, now, c.decision)));
  let passed: T | undefined;
  try {
    passed = await check();
  } catch (error) {
    // Refused before the password was checked (the queue in front of argon2 is full): neither a
    // success nor a failure, so a busy server never counts toward anyone's lockout.
    if (error instanceof PasswordsBusyError) await refund();
    throw error;
  }
  if (passed !== undefined) await refund();
  return passed;
}

export function isThrottled(value: unknown): value is Throttled {
  return typeof value === 'object' && value !== null && (value as Throttled).reason === 'throttled';
}

/**
 * Checks a password sign-in. A failure is an audit event here; a success is not yet one: the
 * caller writes `sign_in.succeeded` when the session starts, which for an account with two-step
 * verification is after its second step.
 */
export async function signIn(deps: SignInDeps, attempt: AttemptOrigin & { username: string; password: string }): Promise<SignInOutcome> {
  const outcome = await checkSignIn(deps, attempt);
  const { address } = attempt;
  if (outcome.ok) return { ok: true, user: outcome.user, deviceCookie: outcome.deviceCookie };
  deps.audit.record({
    audit: 'sign_in.failed', username: typedUsername(attempt.username), reason: outcome.reason, address,
    ...('userId' in outcome && outcome.userId !== undefined ? { userId: outcome.userId } : {}),
  }, attempt.requestId);
  if (outcome.reason === 'throttled') return outcome;
  return outcome.unusable ? { ok: false, reason: 'account_unusable', user: outcome.unusable } : { ok: false, reason: 'invalid_credentials' };
}

/** An attempt's outcome with, for the audit log only, the account a failed check named (if any). */
type Checked =
  | { ok: true; user: User; deviceCookie: string }
  | Throttled
  | { ok: false; reason: 'invalid_credentials' | 'account_unusable'; userId: number | undefined; unusable?: User & { status: Exclude<UserStatus, 'active'> } };

async function checkSignIn(deps: SignInDeps, attempt: AttemptOrigin & { username: string; password: string }): Promise<Checked> {
  const account = accountKey(attempt.username);
  const device = await deps.deviceCookies.entryFor(attempt.deviceCookie, account);
  const askedBy: HashAsker = { address: attempt.address, account };
  let wrongFor: User | undefined;
  let named: number | undefined;
  let rightHash: string | undefined;
  const result = await throttledCheck(deps, countersFor(account, attempt, device, 'password'), async () => {
    const found = canBeUsername(account) ? await deps.stores.users.findCredentials(account) : undefined;
    // The password is checked (or a decoy is) even for unknown accounts: equal time either way.
    const valid = await verifyPassword(found?.passwordHash, attempt.password, askedBy);
    if (found && valid) rightHash = found.passwordHash;
    // A wrong password for a deleted account is an unknown username's: nothing is written to the
    // account, whose records its deletion erased (its log, its id in the audit line), and no
    // write makes it take longer than one for no account.
    const owner = found && (valid || found.user.status !== 'deleted') ? found.user : undefined;
    named = owner?.id;
    if (owner && !valid) wrongFor = owner;
    // A right password never counts, an unusable account's included: its holder is told the
    // status (`SignInOutcome`), and a lock-out after ten right passwords would tell one who holds
    // only the password of a two-step account what its second step hides, that it is not active.
    return found && valid ? found.user : undefined;
  });
  if (isThrottled(result)) return result;
  // Failures are told to the account's owner only when the account exists (issue 18 item 5).
  if (wrongFor) await deps.securityLog.record({ userId: wrongFor.id, kind: 'sign_in.failed', origin: { address: attempt.address, userAgent: attempt.userAgent, requestId: attempt.requestId }, detail: { reason: 'wrong password' } });
  if (result === undefined) return { ok: false, reason: 'invalid_credentials', userId: named };
  if (result.status !== 'active') return { ok: false, reason: 'account_unusable', userId: named, unusable: { ...result, status: result.status } };
  if (rightHash !== undefined) {
    const rehashed = await rehashIfOutdated(deps, result.id, rightHash, attempt.password, askedBy);
    if (!(await stillSignsIn(deps, account, [rightHash, rehashed], attempt.password, askedBy))) return { ok: false, reason: 'invalid_credentials', userId: named };
  }
  return { ok: true, user: result, deviceCookie: await deps.deviceCookies.afterSignIn(attempt.deviceCookie, account) };
}

/**
 * A right password whose stored hash was made with other parameters than today's is hashed again
 * with them (`hashIsCurrent`), so a change of parameters reaches each account at its next
 * sign-in, as only then is the password known. A full queue in front of argon2 leaves it for a
 * later sign-in: this one has succeeded. Returns the hash written, if this sign-in's was.
 */
async function rehashIfOutdated(deps: SignInDeps, userId: number, stored: string, password: string, askedBy: HashAsker): Promise<string | undefined> {
  if (hashIsCurrent(stored)) return undefined;
  let rehashed: string;
  try {
    rehashed = await hashPassword(password, askedBy);
  } catch (error) {
    if (error instanceof PasswordsBusyError) return undefined;
    throw error;
  }
  return await deps.stores.users.rehashPassword(userId, stored, rehashed) ? rehashed : undefined;
}

/**
 * Whether the password a sign-in found right still is, read again once it was checked (and its
 * hash replaced): the hash was read before the password's turn in front of argon2, and a rehash
 * waits for a second turn, so a password change or reset could commit in between, end every
 * other session, and be followed by a session the old password started (on another instance,
 * whose queue is its own, or behind a long one here). A hash that is neither the one checked nor
 * the one this sign-in wrote is checked again: another sign-in's rehash of the same password
 * still signs in, a new password does not.
 */
async function stillSignsIn(deps: SignInDeps, account: string, known: Array<string | undefined>, password: string, askedBy: HashAsker): Promise<boolean> {
  const found = await deps.stores.users.findCredentials(account);
  if (found === undefined) return false;
  return known.includes(found.passwordHash) || verifyPassword(found.passwordHash, password, askedBy);
}

/**
 * A sign-in refused because `user`'s account is not active, once its holder showed a factor: the
 * right password (`signIn` writes it), a passkey that verified, a second step passed. The audit
 * event is the password's, with the passkey shown, if one was; the account's log gets no line.
 */
export function recordUnusableSignIn(deps: Pick<SignInDeps, 'audit'>, user: Pick<User, 'id' | 'username'>, origin: Pick<AttemptOrigin, 'address' | 'requestId'>, passkeyId?: string): void {
  deps.audit.record(knownAccountRefusal(user, 'account_unusable', origin, passkeyId), origin.requestId);
}

/** The audit event of a sign-in of `user`'s refused for `reason`, with the passkey shown, if one was. */
function knownAccountRefusal(user: Pick<User, 'id' | 'username'>, reason: SignInFailure, origin: Pick<AttemptOrigin, 'address'>, passkeyId: string | undefined): AuditEvent {
  return { audit: 'sign_in.failed', username: user.username, reason, address: origin.address, userId: user.id, ...(passkeyId ? { passkeyId } : {}) };
}

/** A refusal after the password, or at a passkey: the account is known. */
export type RefusedSignIn = Extract<SignInFailure, 'invalid_second_factor' | 'invalid_passkey' | 'throttled'>;

/** How the account's log words each refusal. */
const REFUSAL_WORDS: Record<RefusedSignIn, string> = {
  invalid_second_factor: 'wrong second-step code',
  invalid_passkey: 'passkey not verified',
  throttled: 'too many wrong second-step codes',
};

/**
 * How many refusals of a kind the account's log tells per window. Neither kind is counted, so
 * each could grow the table at the attacker's pace (a wrong code is bounded by the counters);
 * one line of "too many" tells the owner what matters, that someone holds the password.
 */
const TOLD_PER_WINDOW: Partial<Record<RefusedSignIn, number>> = { throttled: 1, invalid_passkey: SIGN_IN_FAILURES_PER_ACCOUNT };

/**
 * A sign-in of `user`'s refused after the password (a wrong or throttled second step) or at a
 * passkey of theirs: an audit event each time, and a line in the account's log, within
 * `TOLD_PER_WINDOW`.
 */
export async function recordRefusedSignIn(
  deps: SignInDeps,
  user: Pick<User, 'id' | 'username'>,
  origin: AttemptOrigin,
  reason: RefusedSignIn,
  passkeyId?: string,
): Promise<void> {
  const limit = TOLD_PER_WINDOW[reason];
  const told = limit === undefined || (await deps.limiter.hit(`signin:told:${reason}:${user.id}`, limit, SIGN_IN_WINDOW_SECONDS, deps.clock.now())).allowed;
  const audit = knownAccountRefusal(user, reason, origin, passkeyId);
  if (!told) return deps.audit.record(audit, origin.requestId);
  await deps.securityLog.record({
    userId: user.id, kind: 'sign_in.failed', origin: { address: origin.address, userAgent: origin.userAgent, requestId: origin.requestId }, detail: { reason: REFUSAL_WORDS[reason] },
  }, audit);
}

/**
 * Runs `check` for a known account under the same counters as its password sign-ins: a second
 * factor's code after the password, or a re-check before a sensitive action. `undefined` from
 * `check` is a failure and counts; anything else succeeds and is taken back. A `code` is counted
 * on the account's code counter as well, which a reset link's code shares.
 */
export async function countedCheck<T>(
  deps: Omit<SignInDeps, 'securityLog'>,
  user: Pick<User, 'username'>,
  origin: AttemptOrigin,
  check: () => Promise<T | undefined>,
  attempt: 'password' | 'code' = 'password',
): Promise<T | Throttled | undefined> {
  const account = accountKey(user.username);
  const device = await deps.deviceCookies.entryFor(origin.deviceCookie, account);
  return throttledCheck(deps, countersFor(account, origin, device, attempt), check);
}

/**
 * Asks a signed-in user for the password again before a sensitive action (a new personal
 * token, a password change), counted exactly as sign-in is, so the form cannot be used to guess.
 * A right password renews the browser's device cookie, as a sign-in does. One longer than any
 * password (`PASSWORD_MAX_LENGTH`, a paste gone wrong) is wrong untried and uncounted, as the
 * sign-in form sends it back (`tooLongToSignIn`): it guesses nothing, and ten of them locked the
 * browser out of the account.
 */
export async function confirmPassword(
  deps: Omit<SignInDeps, 'securityLog'>,
  user: Pick<User, 'id' | 'username'>,
  password: string,
  origin: AttemptOrigin,
): Promise<{ ok: true; deviceCookie: string } | { ok: false; reason: 'wrong' } | Throttled> {
  if (password.length > PASSWORD_MAX_LENGTH) return { ok: false, reason: 'wrong' };
  const account = accountKey(user.username);
  const result = await countedCheck(deps, user, origin, async () => {
    const found = await deps.stores.users.findCredentials(account);
    return (await verifyPassword(found?.passwordHash, password, { address: origin.address, account })) && found?.user.status === 'active' ? true : undefined;
  });
  if (result === true) return { ok: true, deviceCookie: await deps.deviceCookies.afterSignIn(origin.deviceCookie, account) };
  deps.audit.record({
    audit: 'password_confirm.failed', userId: user.id, reason: result === undefined ? 'wrong_password' : 'throttled', address: origin.address,
  }, origin.requestId);
  return isThrottled(result) ? result : { ok: false, reason: 'wrong' };
}
