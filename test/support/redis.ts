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

export function uniqueKeyPrefix(): string {
  return `svc-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
}
