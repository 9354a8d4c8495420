/**
 * Fixed-window counters in Redis, shared by every instance of the service.
 * - One round trip per hit: a Lua script increments the window's counter and sets its expiry
 *   atomically. Keys carry the window's start (aligned to multiples of its length), so every
 *   instance counts into the same key for the same window.
 * - Commands have a bounded timeout; a dead Redis never hangs a request.
 * - When Redis cannot be reached the limiter keeps answering from in-memory counters (per
 *   instance), logs that once, and goes back to Redis as soon as the connection is ready again.
 */
import { Redis } from 'ioredis';
import type { RateLimitDecision, RateLimiter, RateLimiterState } from '../core/ports.js';
import type { Instant } from '../core/time.js';
import { MemoryRateLimiter } from './memory.js';

/** Increments KEYS[1]; on the first hit of a window sets its expiry (ARGV[1] seconds). */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count
`;

/** Takes back one hit on KEYS[1] if its window is still counted (a sign-in that succeeded). */
const REFUND_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0
`;

export interface LimiterLogger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface RedisRateLimiterOptions {
  url: string;
  /** Prepended to every key; tests use a unique one per run. */
  keyPrefix?: string;
  /** Longest wait for one command, in milliseconds, before the in-memory counters answer. */
  commandTimeoutMs?: number;
  logger?: LimiterLogger;
}

interface HitCommand {
  svcRateLimitHit(key: string, ttlSeconds: number): Promise<number>;
  svcRateLimitRefund(key: string): Promise<number>;
}

export class RedisRateLimiter implements RateLimiter {
  private readonly client: Redis & HitCommand;
  private readonly fallback = new MemoryRateLimiter();
  private readonly keyPrefix: string;
  private readonly logger: LimiterLogger | undefined;
  private degraded = false;
  private everReady = false;
  private closed = false;

  constructor(options: RedisRateLimiterOptions) {
    this.keyPrefix = options.keyPrefix ?? 'svc:rl:';
    this.logger = options.logger;
    const timeout = options.commandTimeoutMs ?? 500;
    this.client = new Redis(options.url, {
      commandTimeout: timeout,
      connectTimeout: Math.max(timeout, 1000),
      maxRetriesPerRequest: 1,
      // Reconnect for ever, at most every 2 s, so the limiter comes back when Redis does.
      retryStrategy: (times) => Math.min(times * 100, 2000),
      // Hits issued in the same tick (concurrent requests) leave in one write (issue 8).
      enableAutoPipelining: true,
    }) as Redis & HitCommand;
    this.client.defineCommand('svcRateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.client.defineCommand('svcRateLimitRefund', { numberOfKeys: 1, lua: REFUND_SCRIPT });
    // Without a listener an unreachable Redis would crash the process with an unhandled 'error'.
    this.client.on('error', (error: Error) => this.markDegraded(error));
    this.client.on('close', () => {
      if (this.everReady) this.markDegraded(new Error('connection closed'));
    });
    this.client.on('ready', () => {
      this.everReady = true;
      if (this.degraded) {
        this.degraded = false;
        this.logger?.info({}, 'rate limiter: Redis is reachable again; counting in Redis');
      }
    });
  }

  async hit(key: string, limit: number, windowSeconds: number, now: Instant): Promise<RateLimitDecision> {
    // While Redis is known to be down, skip it: no request waits for a timeout.
    if (this.degraded && this.client.status !== 'ready') return this.fallback.hitSync(key, limit, windowSeconds, now);
    const windowStart = windowStartOf(now, windowSeconds);
    const resetAt = windowStart + windowSeconds;
    try {
      // Expiry is relative (Redis's own clock), twice the window so a late hit never resets a count.
      const count = Number(await this.client.svcRateLimitHit(`${this.keyPrefix}${key}:${windowStart}`, windowSeconds * 2));
      return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetAt };
    } catch (error) {
      this.markDegraded(error);
      return this.fallback.hitSync(key, limit, windowSeconds, now);
    }
  }

  async refund(key: string, windowSeconds: number, now: Instant): Promise<void> {
    if (this.degraded && this.client.status !== 'ready') return this.fallback.refundSync(key, windowSeconds, now);
    try {
      await this.client.svcRateLimitRefund(`${this.keyPrefix}${key}:${windowStartOf(now, windowSeconds)}`);
    } catch (error) {
      this.markDegraded(error);
      this.fallback.refundSync(key, windowSeconds, now);
    }
  }

  state(): RateLimiterState {
    return this.degraded ? 'degraded' : 'redis';
  }

  async close(): Promise<void> {
    this.closed = true;
    this.client.disconnect();
  }

  private markDegraded(error: unknown): void {
    if (this.degraded || this.closed) return;
    this.degraded = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger?.warn({ reason }, 'rate limiter: Redis unreachable; counting in memory per instance until it is back');
  }
}

function windowStartOf(now: Instant, windowSeconds: number): number {
  return Math.floor(Math.floor(now / 1000) / windowSeconds) * windowSeconds;
}
