/**
 * The rate limiter contract, run on the in-memory limiter and on Redis; and what the Redis
 * limiter does when Redis goes away and comes back.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { RateLimiter } from '../../src/core/rate-limiter.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import type { RedisLogger } from '../../src/redis/connect.js';
import { redisUrl, skipWithoutRedis, uniqueKeyPrefix } from '../support/redis.js';
import { TcpRelay } from '../support/relay.js';
import { until } from '../support/eventually.js';
import { freePort } from '../support/instances.js';

const T0 = Date.UTC(2026, 10, 22, 0, 30, 48); // 48 s into its minute
const WINDOW_END = Math.floor(T0 / 60_000) * 60 + 60;

function contract(name: string, make: () => RateLimiter, cleanup: () => Promise<void>) {
  describe(`rate limiter contract [${name}]`, { skip: name === 'redis' ? skipWithoutRedis : false }, () => {
    after(cleanup);

    test('counts hits in a window aligned to its length and refuses past the limit', async () => {
      const limiter = make();
      for (let i = 1; i <= 3; i++) {
        assert.deepEqual(await limiter.hit('k1', 3, 60, T0), { allowed: true, limit: 3, remaining: 3 - i, resetAt: WINDOW_END });
      }
      assert.deepEqual(await limiter.hit('k1', 3, 60, T0 + 5_000), { allowed: false, limit: 3, remaining: 0, resetAt: WINDOW_END });
    });

    test('a peek answers as the last hit did and counts nothing; a window not hit yet stands at zero', async () => {
      const limiter = make();
      assert.deepEqual(await limiter.peek('k7', 2, 60, T0), { allowed: true, limit: 2, remaining: 2, resetAt: WINDOW_END });
      for (let i = 0; i < 3; i++) await limiter.hit('k7', 2, 60, T0);
      for (let i = 0; i < 2; i++) assert.deepEqual(await limiter.peek('k7', 2, 60, T0 + 1_000), { allowed: false, limit: 2, remaining: 0, resetAt: WINDOW_END });
      assert.deepEqual(await limiter.peek('k7', 3, 60, T0), { allowed: true, limit: 3, remaining: 0, resetAt: WINDOW_END }, 'three hits, no more');
      assert.deepEqual(await limiter.peek('k7', 2, 60, WINDOW_END * 1000), { allowed: true, limit: 2, remaining: 2, resetAt: WINDOW_END + 60 });
    });

    test('a new window starts a new count', async () => {
      const limiter = make();
      for (let i = 0; i < 2; i++) await limiter.hit('k2', 2, 60, T0);
      assert.equal((await limiter.hit('k2', 2, 60, T0)).allowed, false);
      const next = await limiter.hit('k2', 2, 60, WINDOW_END * 1000);
      assert.deepEqual(next, { allowed: true, limit: 2, remaining: 1, resetAt: WINDOW_END + 60 });
    });

    test('a refund takes one hit back in the same window, never below zero', async () => {
      const limiter = make();
      await limiter.hit('k5', 2, 60, T0);
      await limiter.refund('k5', 60, T0, await limiter.hit('k5', 2, 60, T0));
      assert.equal((await limiter.hit('k5', 2, 60, T0)).remaining, 0, 'two hits and a refund leave one, and this hit is the second');
      // A hit on k6's counter that is gone: the refund finds nothing to take back.
      const gone = await limiter.hit('k6', 1, 60, WINDOW_END * 1000 - 120_000);
      await limiter.refund('k6', 60, T0, gone);
      assert.equal((await limiter.hit('k6', 1, 60, T0)).remaining, 0, 'a refund on nothing counts nothing');
    });

    test('a refund after the window ended leaves the new window alone', async () => {
      const limiter = make();
      const first = await limiter.hit('k7', 5, 60, T0);
      await limiter.hit('k7', 5, 60, WINDOW_END * 1000);
      await limiter.refund('k7', 60, T0, first);
      assert.equal((await limiter.hit('k7', 5, 60, WINDOW_END * 1000)).remaining, 3);
    });

    test('keys are counted apart', async () => {
      const limiter = make();
      await limiter.hit('k3', 1, 60, T0);
      assert.equal((await limiter.hit('k3', 1, 60, T0)).allowed, false);
      assert.equal((await limiter.hit('k4', 1, 60, T0)).allowed, true);
    });
  });
}

contract('memory', () => new MemoryRateLimiter(), async () => {});

test('a flood of new counters does not evict the counters that are refusing someone', async () => {
  const limiter = new MemoryRateLimiter(1000);
  for (let i = 0; i < 11; i++) await limiter.hit('signin:account:victim', 10, 900, T0);
  for (let i = 0; i < 5000; i++) await limiter.hit(`flood:${i}`, 10, 900, T0);
  assert.equal(limiter.size, 1000);
  assert.equal((await limiter.hit('signin:account:victim', 10, 900, T0)).allowed, false, 'the locked account stays locked');
});

test('the in-memory limiter holds at most its bound of counters, dropping the oldest first', async () => {
  const limiter = new MemoryRateLimiter(1000);
  for (let i = 0; i < 5000; i++) await limiter.hit(`flood:${i}`, 10, 900, T0);
  assert.equal(limiter.size, 1000);
  assert.equal((await limiter.hit('flood:4999', 10, 900, T0)).remaining, 8, 'the newest counters are kept');
  assert.equal((await limiter.hit('flood:0', 10, 900, T0)).remaining, 9, 'the oldest was dropped');
});

const redisLimiters: RedisRateLimiter[] = [];
const prefix = uniqueKeyPrefix();
contract('redis', () => {
  const limiter = new RedisRateLimiter({ url: redisUrl!, keyPrefix: `${prefix}${redisLimiters.length}:` });
  redisLimiters.push(limiter);
  return limiter;
}, async () => {
  await Promise.all(redisLimiters.map((l) => l.close()));
});

function recordingLogger() {
  const lines: Array<{ level: 'warn' | 'info'; message: string }> = [];
  const logger: RedisLogger = {
    warn: (_details, message) => lines.push({ level: 'warn', message }),
    info: (_details, message) => lines.push({ level: 'info', message }),
  };
  return { lines, logger };
}

describe('Redis limiter when Redis is unreachable', () => {
  test('with nothing behind the port it keeps answering from memory, degraded, and logs it once', async () => {
    const { lines, logger } = recordingLogger();
    const limiter = new RedisRateLimiter({ url: `redis://127.0.0.1:${await freePort()}`, keyPrefix: uniqueKeyPrefix(), logger, commandTimeoutMs: 200 });
    try {
      for (let i = 1; i <= 3; i++) {
        assert.deepEqual(await limiter.hit('k', 2, 60, T0), { allowed: i <= 2, limit: 2, remaining: Math.max(0, 2 - i), resetAt: WINDOW_END });
      }
      assert.equal(limiter.state(), 'degraded');
      assert.equal(lines.filter((l) => l.level === 'warn').length, 1);
    } finally {
      await limiter.close();
    }
  });

  test('it goes back to Redis when Redis returns', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
    const proxy = new TcpRelay({ host: new URL(redisUrl!).hostname, port: Number(new URL(redisUrl!).port || 6379) }, await freePort());
    await proxy.open();
    const { lines, logger } = recordingLogger();
    const keyPrefix = uniqueKeyPrefix();
    const limiter = new RedisRateLimiter({ url: `redis://127.0.0.1:${proxy.port}`, keyPrefix, logger, commandTimeoutMs: 300 });
    const witness = new RedisRateLimiter({ url: redisUrl!, keyPrefix });
    try {
      await limiter.hit('k', 100, 60, T0);
      assert.equal(limiter.state(), 'redis');
      await proxy.cut();
      // Degraded once the connection is cut.
      await until(() => limiter.state() === 'degraded');
      assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'served from memory meanwhile');
      await proxy.open();
      // Back to Redis once it is reachable.
      await until(() => limiter.state() === 'redis');
      // The count continues in Redis: the hit made while degraded was counted in memory only.
      assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 98);
      assert.equal((await witness.hit('k', 100, 60, T0)).remaining, 97, 'another instance sees the same count');
      assert.deepEqual(lines.map((l) => l.level), ['warn', 'info']);
    } finally {
      await limiter.close();
      await witness.close();
      await proxy.cut();
    }
  });

  /** A limiter through a relay to Redis (cut and opened by the test), and one straight to Redis on the same keys. */
  async function relayedLimiter() {
    const proxy = new TcpRelay({ host: new URL(redisUrl!).hostname, port: Number(new URL(redisUrl!).port || 6379) }, await freePort());
    await proxy.open();
    const keyPrefix = uniqueKeyPrefix();
    const limiter = new RedisRateLimiter({ url: `redis://127.0.0.1:${proxy.port}`, keyPrefix, logger: recordingLogger().logger, commandTimeoutMs: 300 });
    const witness = new RedisRateLimiter({ url: redisUrl!, keyPrefix });
    return {
      proxy, limiter, witness,
      async close() {
        await limiter.close();
        await witness.close();
        await proxy.cut();
      },
    };
  }

  test('a refund goes only where its hit was counted: a hit counted in memory while Redis was away takes nothing off Redis once it is back', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
    const { proxy, limiter, witness, close } = await relayedLimiter();
    try {
      await limiter.hit('k', 100, 60, T0);
      await proxy.cut();
      // Degraded once the connection is cut.
      await until(() => limiter.state() === 'degraded');
      const inMemory = await limiter.hit('k', 100, 60, T0);
      await proxy.open();
      // Back to Redis once it is reachable.
      await until(() => limiter.state() === 'redis');
      await limiter.refund('k', 60, T0, inMemory);
      assert.equal((await witness.hit('k', 100, 60, T0)).remaining, 98, 'Redis keeps the one hit it counted, and counts this one');
    } finally {
      await close();
    }
  });

  test('a refund goes only where its hit was counted: a hit Redis counted is not taken off the memory counts while Redis is away', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
    const { proxy, limiter, close } = await relayedLimiter();
    try {
      const inRedis = await limiter.hit('k', 100, 60, T0);
      await proxy.cut();
      // Degraded once the connection is cut.
      await until(() => limiter.state() === 'degraded');
      assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'counted in memory');
      await limiter.refund('k', 60, T0, inRedis);
      assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 98, 'the hit memory counted stays counted');
    } finally {
      await close();
    }
  });
});
