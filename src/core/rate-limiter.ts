/** Fixed-window counters, for every rate limit and the sign-in throttle. */
import type { Instant } from './time.js';

/** A fixed-window counter (rate limits and sign-in throttling), in memory or shared in Redis. */
export interface RateLimiter {
  /** Counts one hit on `key` and says whether it is within `limit` for the window. */
  hit(key: string, limit: number, windowSeconds: number, now: Instant): Promise<RateLimitDecision>;
  /**
   * Where `key` stands in the window of `now`, counting nothing: `allowed` while its count is
   * within `limit`, as `hit` answered its last hit. For an instance to learn what the others
   * counted (with Redis) without adding to it.
   */
  peek(key: string, limit: number, windowSeconds: number, now: Instant): Promise<RateLimitDecision>;
  /**
   * Takes back the hit on `key` that `hit` answered with `counted`, in the window of `now` (never
   * below zero), from the counter that counted it, or not at all: a sign-in is counted before its
   * password is checked, so racing guesses cannot pass the limit, and a success is then taken
   * back, so successes never count (INTERFACE section 4).
   */
  refund(key: string, windowSeconds: number, now: Instant, counted: RateLimitDecision): Promise<void>;
  /** Where the counters live right now, for readiness: `degraded` is Redis unreachable, memory in use. */
  state?(): RateLimiterState;
}

export type RateLimiterState = 'memory' | 'redis' | 'degraded';

/**
 * Whether two instants fall in one window of a fixed-window limit (windows start at multiples of
 * their length): a hit made in an earlier window is no longer in the counter, so nothing of it
 * can be taken back.
 */
export function sameWindow(a: Instant, b: Instant, windowSeconds: number): boolean {
  return Math.floor(a / 1000 / windowSeconds) === Math.floor(b / 1000 / windowSeconds);
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the window ends, epoch seconds. */
  resetAt: number;
}
