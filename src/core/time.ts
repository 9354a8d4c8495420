/** Time as the service sees it: instants are epoch milliseconds (UTC); the clock is injected. */

/** Epoch milliseconds, UTC. */
export type Instant = number;

export interface Clock {
  now(): Instant;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * How far apart the clocks of the service's instances, and the janitor's, are assumed to be at most
 * (docs/operations.md, "Clocks"). A single-use thing that each instance judges by its own clock is
 * kept as used this much past its end, so an instance running behind still finds it spent.
 */
export const CLOCK_SKEW_MS = 60_000;

const UTC_PLUS_8_MS = 8 * 3600 * 1000;

const DAY_MS = 86_400_000;
/** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z: between them `toISOString` writes four-digit years. */
const FIRST_YEAR_0000 = -62_167_219_200_000;
const FIRST_YEAR_10000 = 253_402_300_800_000;
const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);
/** The date part of the day last formatted: a page of posts is mostly of a few days. */
let lastDay = Number.NaN;
let lastDate = '';

/**
 * Seed section 8: ISO-8601 local time in UTC+8 without offset, e.g. `2026-11-22T08:30:48`. The
 * time of day is arithmetic on the day's date (a page formats twenty; `Date` was a thirtieth
 * of a page's CPU).
 */
export function formatLocalTimestamp(instant: Instant): string {
  const local = instant + UTC_PLUS_8_MS;
  // A fraction of a millisecond (Date truncates toward zero), a year outside 0000-9999 (written
  // with a sign and six digits) or an instant Date refuses (it throws): Date's own answer.
  if (!(local >= FIRST_YEAR_0000 && local < FIRST_YEAR_10000) || !Number.isInteger(local)) {
    return new Date(local).toISOString().slice(0, 19);
  }
  const day = Math.floor(local / DAY_MS);
  if (day !== lastDay) {
    lastDate = new Date(day * DAY_MS).toISOString().slice(0, 10);
    lastDay = day;
  }
  const secondOfDay = Math.floor((local - day * DAY_MS) / 1000);
  return `${lastDate}T${two(Math.floor(secondOfDay / 3600))}:${two(Math.floor(secondOfDay / 60) % 60)}:${two(secondOfDay % 60)}`;
}

/** ISO-8601 UTC with `Z`, to the second, for the command line and logs. */
export function formatUtc(instant: Instant): string {
  return new Date(Math.floor(instant / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * Whether a credential that lasts until `expiresAt` (`null`: no expiry) has expired at `now`: from
 * that instant on. The one rule wherever code reads an expiry (the bearer gate, the token lists,
 * codes, refresh tokens, sessions, a previous client secret, a pushed request's marker, a kept
 * metadata document); the storage's queries keep alive what has `expires_at > now`, the same rule.
 */
export function hasExpired(expiresAt: Instant | null, now: Instant): boolean {
  return expiresAt !== null && expiresAt <= now;
}

/** "Last used" times (of tokens, personal tokens and grants) are written at most once per this interval. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Whether a "last used" time (a session's, a grant's, a token's) written at `last` is due to be
 * written again at `now`: an interval on. The stores move it only forward, so at a `now` before
 * `last` (a clock set back, or another instance's ahead) a write would change nothing, and the
 * time read again at each use would make one at each use until the clock caught up: none is due.
 */
export function lastUseDue(last: Instant, now: Instant, intervalMs = LAST_USED_RESOLUTION_MS): boolean {
  return now - last >= intervalMs;
}

export function seconds(n: number): number {
  return n * 1000;
}

export function days(n: number): number {
  return n * 86_400_000;
}

/**
 * How long to wait, as the catalogs' "try again" messages take it (`unit`, `wait`, `minutes`):
 * seconds under a minute; whole minutes, rounded up, under an hour; past that hours (`wait`) and
 * the minutes left over (`minutes`, 0 for none), so a day's limit reads "10 hours and 1 minute",
 * not "601 minutes". Rounded up: the wait said is never shorter than `Retry-After`.
 */
export function retryWait(retryAfterSeconds: number): { unit: 'seconds' | 'minutes' | 'hours'; wait: number; minutes: number } {
  if (retryAfterSeconds < 60) return { unit: 'seconds', wait: retryAfterSeconds, minutes: 0 };
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return minutes < 60 ? { unit: 'minutes', wait: minutes, minutes: 0 } : { unit: 'hours', wait: Math.floor(minutes / 60), minutes: minutes % 60 };
}
