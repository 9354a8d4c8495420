/** Time as the service sees it: instants are epoch milliseconds (UTC); the clock is injected. */

/** Epoch milliseconds, UTC. */
export type Instant = number;

export interface Clock {
  now(): Instant;
}

export const systemClock: Clock = { now: () => Date.now() };

const UTC_PLUS_8_MS = 8 * 3600 * 1000;

/** Seed section 8: ISO-8601 local time in UTC+8 without offset, e.g. `2026-11-22T08:30:48`. */
export function formatLocalTimestamp(instant: Instant): string {
  return new Date(instant + UTC_PLUS_8_MS).toISOString().slice(0, 19);
}

/** ISO-8601 UTC with `Z`, to the second, for the command line and logs. */
export function formatUtc(instant: Instant): string {
  return new Date(Math.floor(instant / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** "Last used" times (of tokens, personal tokens and grants) are written at most once per this interval. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export function seconds(n: number): number {
  return n * 1000;
}

export function days(n: number): number {
  return n * 86_400_000;
}
