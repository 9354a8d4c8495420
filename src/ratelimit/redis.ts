/**
 * Fixed-window counters in Redis, shared by every instance of the service.
 * - One round trip per hit: a Lua script increments the window's counter and sets its expiry
 *   atomically. Keys carry the window's start (aligned to multiples of its length), so every
 *   instance counts into the same key for the same window.
 * - Commands have a bounded timeout; a dead Redis never hangs a request.
 * - When Redis cannot be reached the limiter keeps answering from in-memory counters (per
 *   instance), logs that once, and goes back to Redis as soon as the connection is ready again.
 */
import type { Redis } from 'ioredis';
import { type GuardedRedis, type RedisConnection, type RedisUse, connectionOf, scriptBothWays } from '../redis/connect.js';
import type { RateLimitDecision, RateLimiter, RateLimiterState } from '../core/rate-limiter.js';
import type { Instant } from '../core/time.js';
import { MemoryRateLimiter, decision } from './memory.js';

/** Increments KEYS[1]; on the first hit of a window sets its expiry (ARGV[1] seconds). */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count
`;

/** The count of KEYS[1], 0 when the window has none yet. */
const PEEK_SCRIPT = `
return tonumber(redis.call('GET', KEYS[1]) or '0')
`;

/** Takes back one hit on KEYS[1] if its window is still counted (a sign-in that succeeded). */
const REFUND_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0
`;

/** What the limiter sends Redis (`RedisUse`): its scripts, on a key of its names that expires within seconds. */
export const rateLimiterUse: RedisUse = {
  name: 'the rate limiter',
  meanwhile: 'rate limits count in memory per instance',
  send: (client) => [HIT_SCRIPT, PEEK_SCRIPT, REFUND_SCRIPT].flatMap((script) => scriptBothWays(client, script, ['svc:rl:start-check'], [1])),
};

/** The limiter's connection (`RedisConnection`), and its keys' prefix. */
export type RedisRateLimiterOptions = {
  /** Prepended to every key; tests use a unique one per run. */
  keyPrefix?: string;
} & RedisConnection;

interface HitCommand {
  svcRateLimitHit(key: string, ttlSeconds: number): Promise<number>;
  svcRateLimitPeek(key: string): Promise<number>;
  svcRateLimitRefund(key: string): Promise<number>;
}

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: GuardedRedis;
  private readonly ownsConnection: boolean;
  private readonly client: Redis & HitCommand;
  private readonly fallback = new MemoryRateLimiter();
  /**
   * The decisions answered from `fallback`: their hits were counted in memory, so a refund of one
   * goes there, never to Redis, which did not count it, even once Redis is back; and a refund of
   * a hit Redis counted goes to Redis or nowhere, never to memory.
   */
  private readonly countedInMemory = new WeakSet<RateLimitDecision>();
  private readonly keyPrefix: string;

  constructor(options: RedisRateLimiterOptions) {
    this.keyPrefix = options.keyPrefix ?? 'svc:rl:';
    ({ redis: this.redis, owned: this.ownsConnection } = connectionOf(options, rateLimiterUse));
    this.client = this.redis.client as Redis & HitCommand;
    this.client.defineCommand('svcRateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.client.defineCommand('svcRateLimitPeek', { numberOfKeys: 1, lua: PEEK_SCRIPT });
    this.client.defineCommand('svcRateLimitRefund', { numberOfKeys: 1, lua: REFUND_SCRIPT });
  }

  async hit(key: string, limit: number, windowSeconds: number, now: Instant): Promise<RateLimitDecision> {
    const windowStart = windowStartOf(now, windowSeconds);
    const resetAt = windowStart + windowSeconds;
    // Expiry is relative (Redis's own clock), twice the window so a late hit never resets a count.
    const answer = await this.redis.ask(() => this.client.svcRateLimitHit(`${this.keyPrefix}${key}:${windowStart}`, windowSeconds * 2), rateLimiterUse);
    if (answer === undefined) {
      const decision = this.fallback.hitSync(key, limit, windowSeconds, now);
      this.countedInMemory.add(decision);
      return decision;
    }
    return decision(Number(answer), limit, resetAt);
  }

  async peek(key: string, limit: number, windowSeconds: number, now: Instant): Promise<RateLimitDecision> {
    const windowStart = windowStartOf(now, windowSeconds);
    const answer = await this.redis.ask(() => this.client.svcRateLimitPeek(`${this.keyPrefix}${key}:${windowStart}`), rateLimiterUse);
    // Redis away: what this instance counted meanwhile, as `hit` answers then.
    if (answer === undefined) return this.fallback.peekSync(key, limit, windowSeconds, now);
    return decision(Number(answer), limit, windowStart + windowSeconds);
  }

  async refund(key: string, windowSeconds: number, now: Instant, counted: RateLimitDecision): Promise<void> {
    if (this.countedInMemory.has(counted)) return this.fallback.refundSync(key, windowSeconds, now);
    // Redis away now: the hit stays counted there, erring towards the limit for one window.
    await this.redis.ask(() => this.client.svcRateLimitRefund(`${this.keyPrefix}${key}:${windowStartOf(now, windowSeconds)}`), rateLimiterUse);
  }

  state(): RateLimiterState {
    return this.redis.isDegradedFor(rateLimiterUse) ? 'degraded' : 'redis';
  }

  async close(): Promise<void> {
    if (this.ownsConnection) this.redis.close();
  }
}

function windowStartOf(now: Instant, windowSeconds: number): number {
  return Math.floor(Math.floor(now / 1000) / windowSeconds) * windowSeconds;
}
