/** Fixed-window counters in this process's memory: the default, and the fallback when Redis is gone. */
import type { RateLimitDecision, RateLimiter, RateLimiterState } from '../core/ports.js';
import type { Instant } from '../core/time.js';

interface Window {
  count: number;
  /** Epoch seconds when the window ends. */
  resetAt: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  state(): RateLimiterState {
    return 'memory';
  }

  async hit(key: string, limit: number, windowSeconds: number, now: Instant): Promise<RateLimitDecision> {
    return this.hitSync(key, limit, windowSeconds, now);
  }

  hitSync(key: string, limit: number, windowSeconds: number, now: Instant): RateLimitDecision {
    const nowSeconds = Math.floor(now / 1000);
    this.sweep(nowSeconds);
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= nowSeconds) {
      // Windows are aligned to multiples of their length, as the Redis limiter's keys are.
      window = { count: 0, resetAt: (Math.floor(nowSeconds / windowSeconds) + 1) * windowSeconds };
      this.windows.set(key, window);
    }
    window.count += 1;
    return {
      allowed: window.count <= limit,
      limit,
      remaining: Math.max(0, limit - window.count),
      resetAt: window.resetAt,
    };
  }

  /** Drops ended windows at most once a second, so memory follows the number of active keys. */
  private sweep(nowSeconds: number): void {
    if (nowSeconds === this.lastSweep) return;
    this.lastSweep = nowSeconds;
    for (const [key, window] of this.windows) {
      if (window.resetAt <= nowSeconds) this.windows.delete(key);
    }
  }
}
