/**
 * Redis for tests: TEST_REDIS_URL when set. Without it the Redis suites are skipped with a line
 * saying why; on CI (CI=true) a missing Redis is a failure, as for PostgreSQL.
 * Each run uses a key prefix of its own, so runs and suites never share counters.
 */
import { randomBytes } from 'node:crypto';

export const redisUrl = process.env.TEST_REDIS_URL || undefined;

if (!redisUrl && process.env.CI === 'true') {
  throw new Error('TEST_REDIS_URL is not set: on CI every Redis test must run');
}

/** `false` when Redis is available, else the reason the suite is skipped. */
export const skipWithoutRedis: string | false = redisUrl ? false : 'TEST_REDIS_URL is not set: Redis suite skipped';

/**
 * The command timeout of the limiters the tests share between instances. On a loaded machine
 * Redis itself can be off the CPU for longer than the service's 500 ms (`GuardedRedis`), which is
 * then rightly taken for a stall: that instance counts in memory, apart, and a test of counts
 * shared by instances would fail for it. These tests are not about stalls, so they give Redis
 * ample time. A test of Redis being away or stalling sets a timeout of its own.
 */
export const SHARED_LIMITER_COMMAND_TIMEOUT_MS = 30_000;

export function uniqueKeyPrefix(): string {
  return `svc-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

/**
 * Holds the event loop for `ms`: synchronous work, a long GC, a process off the CPU, which the
 * Redis connection's timers must not take for Redis not answering (src/redis/connect.ts).
 */
export function holdEventLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}
