/** User passwords: argon2id (INTERFACE section 2), with parameters of OWASP's equal-defence set. */
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { hash, verify } from '@node-rs/argon2';
import { siteKey } from '../addresses.js';
import { BoundedQueue, QueueFullError } from '../bounded-queue.js';
import { OAuthError } from '../errors.js';

/** `Algorithm.Argon2id`, spelled out: the package exports it as an ambient const enum. */
const ARGON2ID = 2;

/**
 * 12 MiB, three passes, one lane: one of the settings OWASP's Password Storage Cheat Sheet lists
 * as equal in defence (19 MiB and two passes is another, 9 MiB and four a third). Of those it
 * costs the least here: its block is 7 MB less on the process's peak than 19 MiB's, and it takes
 * 6.8 ms of CPU a hash against 13 (docs/performance.md, decision 66). Hashes stored with other
 * parameters still verify and are replaced at the next sign-in (`hashIsCurrent`).
 */
const PARAMETERS = { algorithm: ARGON2ID, memoryCost: 12_288, timeCost: 3, parallelism: 1 };

/** The PHC string's head that `hash` writes with `PARAMETERS` (RFC 9106 uses version 0x13, 19). */
const CURRENT_HEAD = `$argon2id$v=19$m=${PARAMETERS.memoryCost},t=${PARAMETERS.timeCost},p=${PARAMETERS.parallelism}$`;

/** Whether `passwordHash` was made with today's algorithm and parameters. */
export function hashIsCurrent(passwordHash: string): boolean {
  return passwordHash.startsWith(CURRENT_HEAD);
}

/**
 * A wrong password's answer is held until this long after its verification began (a timer, not
 * the turn in front of argon2: it costs no CPU and keeps no one waiting). Verifications differ by
 * the parameters of the hash checked: one of decision 66's earlier set (19 MiB, two passes) takes
 * about 1.8 times today's (12 vs 7 ms on the bench's host), so without it a wrong password told
 * anyone whose member had not signed in since the change (threat model T72). A floor, not a hold
 * by measured ratios: the times of each set's verifications are the attacker's to skew, by
 * sending wrong passwords to an earlier-set account while the server is busy, and a hold built on
 * them told the sets apart as well as no hold did (helper-251). Four times the earlier set's time
 * here, so it stays above both on a host that slow; a member who mistypes waits 50 ms.
 */
export const WRONG_PASSWORD_FLOOR_MS = 50;

/**
 * How much longer a verification of decision 66's earlier set takes than one of today's: 12.2
 * against 7.0 ms on the bench's host, 9.8 against 5.7 ms between two answers over HTTP
 * (helper-252). A wrong password against today's set keeps its turn in front of argon2 this much
 * longer (a timer), so the next verification in line starts as late after it as after an earlier
 * hash: the floor holds an answer from its own start, and a made-up username's wrong password
 * sent right behind a target's was answered 4 ms later after an earlier-set account than after
 * today's (AUC 0.987). Over HTTP, 140 pairs a set: 1.75 left AUC 0.57 to 0.61, 1.85 0.44, 1.8
 * 0.54 (medians 10.87 and 10.83 ms). A ratio of the verification's own time, fixed, so a busy
 * machine holds in proportion and no outsider moves it; a fixed 25 ms turn closed the gap too,
 * but cut the line's pace for wrong passwords from about 140 a second to 40, where this keeps
 * about 80.
 */
const EARLIER_SET_SLOWDOWN = 1.8;

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

/**
 * Argon2 computations at once in this process. Each holds its block (12 MiB, `PARAMETERS`)
 * outside V8's heap while it runs, so this is the bound on that memory: one, so that a burst of
 * sign-ins adds one block to the peak, not one per sign-in in flight (decision 20) nor two at
 * once (docs/performance.md, decision 39: what sign-in adds to the peak went from 39.6 to 20.2
 * MB, with sign-ins a second within the noise on one core and on two, where two computations at
 * once slow each other).
 * The block comes from the allocator the argon2 binding links in (mimalloc), and is handed back
 * after each computation. Every hash and verification of the process goes through it: sign-in,
 * re-confirmation, sign-up, password change and reset, accounts made by staff or the CLI, the
 * decoy.
 */
export const PASSWORD_HASHES_AT_ONCE = 1;

/**
 * Computations that wait their turn, at most: at about 7 ms of CPU each (a wrong password's turn
 * held to 12, `EARLIER_SET_SLOWDOWN`), under a second of waiting. Past it a password is not
 * checked at all and the request is refused with 503 and `Retry-After` (`PasswordsBusyError`):
 * unbounded waiting would let a flood of sign-ins, each costing its sender nothing, delay
 * everyone's without end.
 */
export const PASSWORD_HASHES_WAITING = 64;

/**
 * Waiting places one address may hold. A right password is never counted against any limit
 * (INTERFACE section 4), so without a share one sender holding a password, its own, could keep
 * every place full and have everyone else's sign-ins refused. Eight places drain in about 50 ms
 * (right passwords; wrong ones in about 100), so members behind one shared address (a school, a
 * carrier's NAT) are turned away only when more than nine of them press the button within the
 * same few hundredths of a second. Eight addresses within their shares fill the line, so a
 * newcomer pushes out a place of the address holding the most (`BoundedQueue`): to keep one out
 * takes 64 addresses, one place each. An address is its site here (`siteKey`: an IPv6 /48), as a
 * home user's /56 alone holds 256 /64s.
 */
export const PASSWORD_HASHES_WAITING_PER_ADDRESS = 8;

/** Seconds a refused request is told to wait (RFC 9110 10.2.3): the queue drains well within it. */
export const PASSWORDS_BUSY_RETRY_AFTER_SECONDS = 1;

/** The process's one queue in front of argon2 (exported for tests, which hold its turns). */
export const passwordHashQueue = new BoundedQueue(PASSWORD_HASHES_AT_ONCE, PASSWORD_HASHES_WAITING, PASSWORD_HASHES_WAITING_PER_ADDRESS);

/**
 * The refusal when `PASSWORD_HASHES_WAITING` computations already wait, or the asking address's
 * `PASSWORD_HASHES_WAITING_PER_ADDRESS` do: 503
 * `temporarily_unavailable` (RFC 6749 4.1.2.1's code for a server that cannot serve for now),
 * an error page on the site's forms. The password was not checked, so a sign-in refused so is
 * neither a success nor a failure (`throttledCheck` takes its count back).
 */
export class PasswordsBusyError extends OAuthError {
  constructor() {
    super('temporarily_unavailable', 'Too many passwords are being checked right now; try again in a moment.', {
      headers: { 'retry-after': String(PASSWORDS_BUSY_RETRY_AFTER_SECONDS) },
    });
  }
}

/** How many computations hold a turn and how many wait for one (for tests and diagnostics). */
export function hashSlots(): { running: number; waiting: number } {
  return passwordHashQueue.state;
}

/**
 * Who asks for a computation: the client address of the request that needs it, and the account the
 * password is for (`accountKey`: the username tried at sign-in, the one chosen at sign-up). None
 * for the CLI and start-up, which no stranger can drive.
 */
export interface HashAsker {
  address: string;
  account: string;
}

/** `work` in its turn of the queue, counted against the share of `askedBy`'s address and, within it, its account. */
async function withHashSlot<T>(work: () => Promise<T>, askedBy: HashAsker | undefined): Promise<T> {
  try {
    return await passwordHashQueue.run(work, { asker: askedBy && siteKey(askedBy.address), onBehalfOf: askedBy?.account });
  } catch (error) {
    throw error instanceof QueueFullError ? new PasswordsBusyError() : error;
  }
}

/** Hashes `password`; `askedBy` is who sets it (see `HashAsker`). */
export function hashPassword(password: string, askedBy?: HashAsker): Promise<string> {
  return withHashSlot(() => hash(password, PARAMETERS), askedBy);
}

/**
 * How long a wrong password's verification against `passwordHash`, which took `ms`, keeps its turn
 * after it: an earlier set's slowdown beyond it for today's set (`EARLIER_SET_SLOWDOWN`), none
 * for any other, which takes at least as long already.
 */
export function wrongPasswordTurnHold(passwordHash: string, ms: number): number {
  return hashIsCurrent(passwordHash) ? ms * (EARLIER_SET_SLOWDOWN - 1) : 0;
}

/**
 * A hash of nothing anyone knows, verified when the account is unknown so both cases cost the
 * same. Made at start: made on first need, the first unknown account would cost two computations.
 */
const decoyHash = hashPassword('decoy password that matches no account');

/**
 * Verifies `password` against `passwordHash`, or spends the same time when there is no hash. A
 * wrong answer comes no sooner than `WRONG_PASSWORD_FLOOR_MS` after its verification began, and
 * against today's set keeps its turn as long as an earlier set's would (`EARLIER_SET_SLOWDOWN`).
 * Throws `PasswordsBusyError`, having checked nothing, when the queue in front of argon2, or the
 * share of it `askedBy` may hold, is full.
 */
export async function verifyPassword(passwordHash: string | undefined, password: string, askedBy?: HashAsker): Promise<boolean> {
  const against = passwordHash ?? (await decoyHash);
  let began = 0;
  // A stored hash argon2 cannot read is a wrong password; a full queue is `PasswordsBusyError`.
  const valid = await withHashSlot(async () => {
    began = performance.now();
    const right = await verify(against, password).catch(() => false);
    if (!right) await delay(wrongPasswordTurnHold(against, performance.now() - began));
    return right;
  }, askedBy);
  if (valid && passwordHash !== undefined) return true;
  // Again while short: Node counts a timer from the event loop's clock, read at its turn's start,
  // so one may fire as much sooner as the turn had run before it was set.
  const until = began + WRONG_PASSWORD_FLOOR_MS;
  while (performance.now() < until) await delay(until - performance.now());
  return false;
}
