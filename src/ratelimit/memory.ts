/** Fixed-window counters in this process's memory: the default, and the fallback when Redis is gone. */
import type { RateLimitDecision, RateLimiter, RateLimiterState } from '../core/rate-limiter.js';
import type { Instant } from '../core/time.js';

interface Window {
  count: number;
  limit: number;
  /** Epoch seconds when the window ends. */
  resetAt: number;
}

/**
 * Counters held at most: about 15 MB. Each new key is a failed sign-in or a valid token's
 * request, so the bound is reached only by a crowd of addresses; past it old counters go first
 * (those nearest the end of their window), counters that refuse someone last.
 */
export const MEMORY_LIMITER_MAX_KEYS = 100_000;
/** How many of the oldest counters are looked at for one that is not refusing anyone. */
const EVICTION_CANDIDATES = 64;

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(private readonly maxKeys = MEMORY_LIMITER_MAX_KEYS) {}

  state(): RateLimiterState {
    return 'memory';
  }

  /** Counters held now, never above the bound. */
  get size(): number {
    return this.windows.size;
  }

  async hit(key: string, limit: number, windowSeconds: number, now: Instant): Promise<RateLimitDecision> {
    return this.hitSync(key, limit, windowSeconds, now);
  }

  async peek(key: string, limit: number, windowSeconds: number, now: Instant): Promise<RateLimitDecision> {
    return this.peekSync(key, limit, windowSeconds, now);
  }

  async refund(key: string, windowSeconds: number, now: Instant): Promise<void> {
    this.refundSync(key, windowSeconds, now);
  }

  hitSync(key: string, limit: number, windowSeconds: number, now: Instant): RateLimitDecision {
    const nowSeconds = Math.floor(now / 1000);
    this.sweep(nowSeconds);
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= nowSeconds) {
      // Windows are aligned to multiples of their length, as the Redis limiter's keys are.
      window = { count: 0, limit, resetAt: windowEnd(nowSeconds, windowSeconds) };
      this.windows.delete(key);
      this.makeRoom();
      this.windows.set(key, window);
    }
    window.count += 1;
    return decision(window.count, limit, window.resetAt);
  }

  peekSync(key: string, limit: number, windowSeconds: number, now: Instant): RateLimitDecision {
    const resetAt = windowEnd(Math.floor(now / 1000), windowSeconds);
    const window = this.windows.get(key);
    return decision(window !== undefined && window.resetAt === resetAt ? window.count : 0, limit, resetAt);
  }

  refundSync(key: string, windowSeconds: number, now: Instant): void {
    const window = this.windows.get(key);
    if (window !== undefined && window.resetAt === windowEnd(Math.floor(now / 1000), windowSeconds) && window.count > 0) window.count -= 1;
  }

  /** Drops ended windows at most once a second, so memory follows the number of active keys. */
  private sweep(nowSeconds: number): void {
    if (nowSeconds === this.lastSweep) return;
    this.lastSweep = nowSeconds;
    for (const [key, window] of this.windows) {
      if (window.resetAt <= nowSeconds) this.windows.delete(key);
    }
  }

  /**
   * At the bound, one of the oldest counters goes (a Map iterates in insertion order): the first
   * of the oldest few that is still under its limit, so a flood of new keys cannot wipe out the
   * counters that are refusing someone (a locked account, a throttled address); only when all of
   * those are refusing does the oldest go.
   */
  private makeRoom(): void {
    if (this.windows.size < this.maxKeys) return;
    let oldest: string | undefined;
    let looked = 0;
    for (const [key, window] of this.windows) {
      oldest ??= key;
      if (window.count < window.limit) {
        this.windows.delete(key);
        return;
      }
      if (++looked === EVICTION_CANDIDATES) break;
    }
    if (oldest !== undefined) this.windows.delete(oldest);
  }
}

/** A counter's standing at `count`, as both limiters answer it. */
export function decision(count: number, limit: number, resetAt: number): RateLimitDecision {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetAt };
}

function windowEnd(nowSeconds: number, windowSeconds: number): number {
  return (Math.floor(nowSeconds / windowSeconds) + 1) * windowSeconds;
}
