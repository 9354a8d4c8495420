/**
 * REDIS_URL as an operator writes it: a database number is the one way to keep two deployments'
 * counters apart in one Redis, so one the Redis does not have is refused at start and, met later,
 * never exchanged for database 0; a Redis down at start is logged once.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import type { Redis } from 'ioredis';
import { loadSettings } from '../../src/config/settings.js';
import { demoCredentialsPath } from '../../src/demo.js';
import { REDIS_USES } from '../../src/deps.js';
import { RedisRateLimiter, rateLimiterUse } from '../../src/ratelimit/redis.js';
import { checkRedisDatabase, GuardedRedis, type RedisLogger } from '../../src/redis/connect.js';
import { RedisReplayStore } from '../../src/replay/redis.js';
import { openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { prepareMigrationTurnFile } from '../../src/storage/sqlite-migration-turn.js';
import { createStores } from '../../src/storage/stores.js';
import { startTestApp } from '../support/app.js';
import { temporarySqliteDatabase, temporarySqlitePath } from '../support/databases.js';
import { compiled, run, SERVICE_ENTRY } from '../support/processes.js';
import { type ScratchRedis, fakeRedis, holdEventLoop, loggedLines, redisUrl, scratchRedis, scratchSentinel, skipWithoutRedis, skipWithoutRedisServer, uniqueKeyPrefix } from '../support/redis.js';
import { TestSmtpServer } from '../support/smtp.js';
import { freePort, twoFreePorts } from '../support/ports.js';
import { TcpRelay } from '../support/relay.js';
import { until } from '../support/eventually.js';

const T0 = Date.UTC(2026, 10, 23, 8, 0, 0);

/** TEST_REDIS_URL with database `db` (Redis has 16 by default: 0 to 15). */
function withDatabase(db: number): string {
  const url = new URL(redisUrl!);
  url.pathname = `/${db}`;
  return url.toString();
}

test('a REDIS_URL database the Redis does not have is never exchanged for database 0: counters stay in memory, the limiter says degraded', { skip: skipWithoutRedis }, async () => {
  const { lines, logger } = loggedLines();
  const redis = new GuardedRedis(withDatabase(99), { logger, meanwhile: 'rate limits count in memory per instance' });
  const keyPrefix = uniqueKeyPrefix();
  const limiter = new RedisRateLimiter({ redis, keyPrefix });
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const databaseZero = new Redis(redisUrl!);
  try {
    for (let i = 0; i < 3; i++) assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99 - i);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 96, 'still counted in memory after the handshake');
    assert.equal(limiter.state(), 'degraded');
    assert.deepEqual(await databaseZero.keys(`${keyPrefix}*`), [], 'nothing written to database 0');
    assert.deepEqual(lines, ['warn: REDIS_URL names database 99, which this Redis does not have; rate limits count in memory per instance until it does']);
  } finally {
    await limiter.close();
    redis.close();
    databaseZero.disconnect();
  }
});

test('a REDIS_URL database the Redis does not have stops the start with one line naming the setting, exit 2', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  compiled();
  const server = run(process.execPath, [SERVICE_ENTRY], {
    DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(await freePort()), REDIS_URL: withDatabase(99), LOG_LEVEL: 'warn',
  });
  assert.equal(await server.exited, 2, server.output());
  assert.equal(server.output(), 'invalid setting REDIS_URL: this Redis has no database 99 (ERR DB index is out of range); the number after HOST:PORT/ must name one it has (0 to 15 with Redis\'s default databases 16)\n');
});

/**
 * An ACL user made for a test (`admin` deletes it), allowed everything, and the URL of database 12
 * (the tests' own) as that user.
 */
async function aclUser(admin: Redis): Promise<{ user: string; url: string }> {
  const user = `svc-test-${randomBytes(4).toString('hex')}`;
  assert.equal(await admin.call('ACL', 'SETUSER', user, 'on', `>${user}-password`, '~*', '+@all'), 'OK');
  const url = new URL(withDatabase(12));
  url.username = user;
  url.password = `${user}-password`;
  return { user, url: url.href };
}

/** The service started on REDIS_URL `url`, to its exit: the code and everything it wrote. */
async function startedOn(url: string): Promise<{ code: number | string; output: string }> {
  compiled();
  const server = run(process.execPath, [SERVICE_ENTRY], { DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(await freePort()), REDIS_URL: url, LOG_LEVEL: 'warn' });
  const code = await Promise.race([server.exited, server.waitFor(/Listening on /, 30_000).then(() => 'listening')]);
  if (code === 'listening') {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  return { code, output: server.output() };
}

test('a REDIS_URL password the Redis refuses, or none where it wants one, stops the start with one line naming the setting and not the password, exit 2', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const redis = await scratchRedis('--requirepass', 'right-password');
  try {
    for (const url of [`redis://:WRONG_PASSWORD@127.0.0.1:${redis.port}`, `redis://127.0.0.1:${redis.port}/2`, `redis://someone:WRONG_PASSWORD@127.0.0.1:${redis.port}`]) {
      const { code, output } = await startedOn(url);
      assert.equal(code, 2, output);
      assert.match(output, /^invalid setting REDIS_URL: this Redis refuses its credentials \((WRONGPASS|NOAUTH) [^\n]*\); give the password Redis requires[^\n]*\n$/, url);
      assert.doesNotMatch(output, /WRONG_PASSWORD|someone/);
    }
  } finally {
    await redis.stop();
  }
});

test('a REDIS_URL user the Redis does not let run the service\'s commands stops the start with one line naming the setting, exit 2', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const redis = await scratchRedis('--requirepass', 'right-password');
  try {
    // May connect and be told its INFO, and nothing the service sends.
    assert.equal(redis.command('right-password', 'ACL', 'SETUSER', 'reader', 'on', '>reader-password', '~*', '+@connection', '+info', '+client', '+select'), 'OK');
    const { code, output } = await startedOn(`redis://reader:reader-password@127.0.0.1:${redis.port}`);
    assert.equal(code, 2, output);
    assert.match(output, /^invalid setting REDIS_URL: this Redis's user may not run the service's commands \(NOPERM [^\n]*\); it needs EVAL[^\n]*\n$/);
    assert.doesNotMatch(output, /reader-password/);
  } finally {
    await redis.stop();
  }
});

test('a REDIS_URL user the Redis does not let run EVALSHA, or a command the service\'s scripts run, stops the start with one line naming the setting, exit 2', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const redis = await scratchRedis('--requirepass', 'right-password');
  try {
    // Each may run a script once (EVAL, the first on a connection) and not what follows at run time.
    for (const [name, refused, reason] of [['no-evalsha', '-evalsha', /^NOPERM [^\n]*'evalsha'/], ['no-incr', '-incr', /^ERR The user executing the script can't run this command/]] as const) {
      assert.equal(redis.command('right-password', 'ACL', 'SETUSER', name, 'on', `>${name}-password`, '~*', '+@all', refused), 'OK');
      const { code, output } = await startedOn(`redis://${name}:${name}-password@127.0.0.1:${redis.port}`);
      assert.equal(code, 2, output);
      const [, told] = /^invalid setting REDIS_URL: this Redis's user may not run the service's commands \(([^\n]*)\); it needs EVAL[^\n]*\n$/.exec(output) ?? [];
      assert.match(told ?? output, reason, name);
    }
  } finally {
    await redis.stop();
  }
});

test('a Redis with a command the service sends renamed away stops the start with one line naming the setting, exit 2; one renamed once running is told once, not as an outage flapping at each request', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  for (const [renamed, told] of [['EVALSHA', /^ERR unknown command 'evalsha'/i], ['INCR', /^ERR Unknown Redis command called from script/]] as const) {
    const redis = await scratchRedis('--rename-command', renamed, '');
    try {
      const { code, output } = await startedOn(`redis://127.0.0.1:${redis.port}`);
      assert.equal(code, 2, output);
      const [, reason] = /^invalid setting REDIS_URL: this Redis's user may not run the service's commands \(([^\n]*)\); it needs EVAL[^\n]*\n$/.exec(output) ?? [];
      assert.match(reason ?? output, told, renamed);
    } finally {
      await redis.stop();
    }
  }
  // Running: the replay cache's SET answered between the limiter's refused EVALSHAs.
  const redis = await scratchRedis('--rename-command', 'EVALSHA', '');
  const { lines, logger } = loggedLines();
  const shared = new GuardedRedis(`redis://127.0.0.1:${redis.port}`, { logger, uses: REDIS_USES });
  const limiter = new RedisRateLimiter({ redis: shared });
  const replay = new RedisReplayStore({ redis: shared, fallback: { claim: async () => true } });
  try {
    for (let i = 0; i < 5; i++) {
      await limiter.hit('k', 100, 60, T0);
      await replay.claim(`proof-${i}`, T0 + 60_000, T0);
    }
    assert.deepEqual(lines, ['warn: Redis does not know the command EVALSHA (renamed or disabled); rate limits count in memory per instance until it has it']);
    assert.equal(limiter.state(), 'degraded');
  } finally {
    await limiter.close();
    await replay.close();
    shared.close();
    await redis.stop();
  }
});

test('a Redis whose INFO the ACL user may not run, as managed Redis often has it, starts the service on Redis with nothing written', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const redis = await scratchRedis('--requirepass', 'right-password');
  try {
    assert.equal(redis.command('right-password', 'ACL', 'SETUSER', 'no-info', 'on', '>no-info-password', '~*', '+@all', '-info'), 'OK');
    const { code, output } = await startedOn(`redis://no-info:no-info-password@127.0.0.1:${redis.port}`);
    assert.equal(code, 'listening', output);
    // Neither ioredis's warning that it skips its ready check nor an outage.
    assert.doesNotMatch(output, /INFO|ready check|Redis/, output);
  } finally {
    await redis.stop();
  }
});

test('a Redis with INFO renamed away, as managed Redis often has it, is used: counters are shared in Redis, not kept in memory', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const redis = await scratchRedis('--rename-command', 'INFO', '');
  const { lines, logger } = loggedLines();
  const url = `redis://127.0.0.1:${redis.port}`;
  const keyPrefix = uniqueKeyPrefix();
  const limiter = new RedisRateLimiter({ url, keyPrefix, logger });
  const other = new RedisRateLimiter({ url, keyPrefix, logger });
  try {
    assert.match(redis.command('', 'INFO'), /unknown command/);
    assert.deepEqual(await checkRedisDatabase(url, REDIS_USES), { outcome: 'ok' });
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    assert.equal((await other.hit('k', 100, 60, T0)).remaining, 98, 'another instance counts on in Redis');
    assert.equal(limiter.state(), 'redis');
    assert.deepEqual(lines, []);
  } finally {
    await limiter.close();
    await other.close();
    await redis.stop();
  }
});

test('a Redis that refuses REDIS_URL\'s password once running (restarted with another) is logged once with why, not at each retry, and its users keep to their fallback', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const redis = await scratchRedis('--requirepass', 'first-password');
  const lines: string[] = [];
  const logger: RedisLogger = { warn: (details, message) => lines.push(`warn: ${message} (${(details as { reason: string }).reason.split(' ')[0]})`), info: (_d, message) => lines.push(`info: ${message}`) };
  const limiter = new RedisRateLimiter({ url: `redis://:first-password@127.0.0.1:${redis.port}`, keyPrefix: uniqueKeyPrefix(), logger, commandTimeoutMs: 300 });
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    assert.equal(limiter.state(), 'redis');
    // Failed authentications, as Redis logs them (ACL LOG: a `count` line, then the number, per entry).
    const refusals = () => [...redis.command('second-password', 'ACL', 'LOG').matchAll(/^count\n(\d+)$/gm)].reduce((sum, [, count]) => sum + Number(count), 0);
    assert.equal(redis.command('first-password', 'CONFIG', 'SET', 'requirepass', 'second-password'), 'OK');
    assert.match(redis.command('second-password', 'CLIENT', 'KILL', 'TYPE', 'normal'), /^\d+$/);
    for (let i = 0; i < 400 && refusals() < 3; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.ok(refusals() >= 3, 'the service tried again three times, refused each time');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'counted in memory meanwhile');
    assert.equal(limiter.state(), 'degraded');
    assert.deepEqual(lines, [
      'warn: Redis unreachable; rate limits count in memory per instance until it is back (connection)',
      'warn: Redis refuses the password or user of REDIS_URL; rate limits count in memory per instance until it takes them (WRONGPASS)',
    ]);
  } finally {
    await limiter.close();
    await redis.stop();
  }
});

test('a permission REDIS_URL\'s user loses once running (its ACL changed) is logged once as refused, naming the command, not as an outage; Redis is skipped until it is given back, which is logged as the permission granted again', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  // A database of this test's own, and an ACL user made for it.
  const admin = new Redis(withDatabase(12));
  const { user, url } = await aclUser(admin);
  const { lines, logger } = loggedLines();
  const redis = new GuardedRedis(url, { logger, meanwhile: 'rate limits count in memory per instance', uses: [rateLimiterUse] });
  const keyPrefix = uniqueKeyPrefix();
  const limiter = new RedisRateLimiter({ redis, keyPrefix });
  // The EVALSHAs Redis refused the user, as it logs them (ACL LOG: a `count` line, then the number, per entry).
  const refusals = async () => [...(await admin.call('ACL', 'LOG') as unknown[][])].filter((entry) => entry.includes(user))
    .reduce((sum, entry) => sum + Number(entry[entry.indexOf('count') + 1]), 0);
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'EVAL, the script\'s first run on the connection');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 98, 'EVALSHA from then on');
    assert.equal(await admin.call('ACL', 'SETUSER', user, '-evalsha'), 'OK');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'refused, counted in memory');
    const refused = ['warn: Redis refuses REDIS_URL\'s user the command EVALSHA; rate limits count in memory per instance until it allows it'];
    assert.deepEqual(lines, refused);
    const refusedAt = await refusals();
    // Tried again, each refused.
    await until(async () => (await refusals()) >= refusedAt + 2);
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 98, 'still counted in memory');
    assert.equal(limiter.state(), 'degraded');
    assert.deepEqual(lines, refused, 'told once');

    assert.equal(await admin.call('ACL', 'SETUSER', user, '+evalsha'), 'OK');
    // Back on Redis once the permission is given back.
    await until(() => limiter.state() === 'redis');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 97, 'counted in Redis again, after the two hits it counted');
    assert.deepEqual(lines.slice(1), ['info: Redis allows REDIS_URL\'s user the command EVALSHA again; the rate limiter uses Redis again']);
  } finally {
    await limiter.close();
    redis.close();
    await admin.call('ACL', 'DELUSER', user);
    await admin.del(`${keyPrefix}k:${Math.floor(T0 / 60_000) * 60}`);
    admin.disconnect();
  }
});

test('a Redis down at start is logged as unreachable once, and the start goes on', { timeout: 60_000 }, async () => {
  compiled();
  const server = run(process.execPath, [SERVICE_ENTRY], {
    DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(await freePort()), REDIS_URL: 'redis://127.0.0.1:1/3', LOG_LEVEL: 'warn',
  });
  try {
    await server.waitFor(/Listening on /, 30_000);
    // The second line came from the server's own connection, about 300 ms after the start's.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(server.output().match(/Redis unreachable/g)?.length, 1, server.output());
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
});

test('a Redis that answers the start\'s check while the event loop is held past the check\'s timeout is reachable, not unreachable', { skip: skipWithoutRedis }, async () => {
  const timeout = 200;
  const checked = checkRedisDatabase(redisUrl!, REDIS_USES, timeout);
  // Held once the connection is under way (ioredis makes its socket on the next tick), while Redis answers.
  setImmediate(() => holdEventLoop(3 * timeout));
  assert.deepEqual(await checked, { outcome: 'ok' });
});

test('a Redis 250 ms away passes the start\'s check and is used again after an outage: what the service sends takes one round trip, within one command\'s timeout', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const target = new URL(redisUrl!);
  const relay = new TcpRelay({ host: target.hostname, port: Number(target.port || 6379) });
  relay.delayMs = 250;
  await relay.open();
  const relayed = new URL(target);
  relayed.host = `127.0.0.1:${relay.port}`;
  const { lines, logger } = loggedLines();
  // The handshake and each command have 1 s: four round trips, where the eight scripts and claim one after the other took eight.
  const redis = new GuardedRedis(relayed.href, { logger, meanwhile: 'rate limits count in memory per instance', uses: REDIS_USES, commandTimeoutMs: 1000 });
  const keyPrefix = uniqueKeyPrefix();
  const limiter = new RedisRateLimiter({ redis, keyPrefix });
  try {
    // The start's 1 s: the handshake's round trip and the check's.
    assert.deepEqual(await checkRedisDatabase(relayed.href, REDIS_USES), { outcome: 'ok' });
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    await relay.cut();
    // The cut is noticed.
    await until(() => limiter.state() === 'degraded');
    await relay.open();
    // Back on Redis once it answers.
    await until(() => limiter.state() === 'redis');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 98);
    assert.deepEqual(lines, ['warn: Redis unreachable; rate limits count in memory per instance until it is back', 'info: Redis is reachable again']);
  } finally {
    await limiter.close();
    redis.close();
    await relay.cut();
    const admin = new (createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis(redisUrl!);
    await admin.del(`${keyPrefix}k:${Math.floor(T0 / 60_000) * 60}`);
    admin.disconnect();
  }
});

test('a Redis that becomes a replica once running (a failover) is logged once as such, its connection dropped: the new primary REDIS_URL names since is used', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  // The copy the new replica is sent is written to a directory of the test's own.
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const [first, second] = [await scratchRedis('--dir', dir), await scratchRedis('--dir', dir)];
  // REDIS_URL's name, which a failover points at the new primary.
  const relay = new TcpRelay({ host: '127.0.0.1', port: first.port });
  await relay.open();
  const { lines, logger } = loggedLines();
  const limiter = new RedisRateLimiter({ url: `redis://127.0.0.1:${relay.port}`, logger });
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    assert.equal(first.command('', 'REPLICAOF', '127.0.0.1', String(second.port)), 'OK');
    relay.target = { host: '127.0.0.1', port: second.port };
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'refused a write, counted in memory');
    // On the new primary.
    await until(() => limiter.state() === 'redis');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'counted in the new primary');
    assert.equal(second.command('', 'GET', `svc:rl:k:${Math.floor(T0 / 60_000) * 60}`), '1');
    assert.deepEqual(lines, [
      'warn: REDIS_URL reaches a replica; rate limits count in memory per instance until it reaches a primary',
      'info: REDIS_URL reaches a primary again',
    ]);
  } finally {
    await limiter.close();
    await relay.cut();
    await first.stop();
    await second.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a REDIS_URL naming a replica stops the start with one line saying so, exit 2: the replica says so to ROLE', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  // The copy the replica is sent is written to a directory of the test's own.
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const primary = await scratchRedis('--dir', dir);
  const replica = await scratchRedis('--dir', dir, '--replicaof', '127.0.0.1', String(primary.port));
  try {
    assert.match(replica.command('', 'ROLE'), /^slave\n/);
    const { code, output } = await startedOn(`redis://127.0.0.1:${replica.port}`);
    assert.equal(code, 2, output);
    assert.equal(output, `invalid setting REDIS_URL: it names a replica (ROLE answers slave, of 127.0.0.1:${primary.port}); it must name the primary\n`);
    assert.equal((await startedOn(`redis://127.0.0.1:${primary.port}`)).code, 'listening', 'its primary is taken');
  } finally {
    await replica.stop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a REDIS_URL naming a replica that takes writes (replica-read-only no) stops the start with one line saying so, exit 2: its primary would replace what the service keeps there', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const primary = await scratchRedis('--dir', dir);
  const replica = await scratchRedis('--dir', dir, '--replicaof', '127.0.0.1', String(primary.port), '--replica-read-only', 'no');
  try {
    assert.equal(replica.command('', 'SET', 'written', '1'), 'OK', 'the replica takes writes');
    const { code, output } = await startedOn(`redis://127.0.0.1:${replica.port}`);
    assert.equal(code, 2, output);
    assert.equal(output, `invalid setting REDIS_URL: it names a replica (ROLE answers slave, of 127.0.0.1:${primary.port}); it must name the primary\n`);
  } finally {
    await replica.stop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a REDIS_URL user that may not run ROLE (ACL -role, as managed Redis often has it) is used as any: its primary is taken, at start and after a new connection, and a replica is still told by its READONLY', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const user = ['--user', 'no-role', 'on', '>no-role-password', '~*', '+@all', '-role'];
  const primary = await scratchRedis('--dir', dir, ...user);
  const replica = await scratchRedis('--dir', dir, '--replicaof', '127.0.0.1', String(primary.port), ...user);
  const url = (port: number) => `redis://no-role:no-role-password@127.0.0.1:${port}`;
  const { lines, logger } = loggedLines();
  const limiter = new RedisRateLimiter({ url: url(primary.port), logger });
  try {
    const { code, output } = await startedOn(url(replica.port));
    assert.equal(code, 2, output);
    assert.match(output, /^invalid setting REDIS_URL: it names a replica \(READONLY [^\n]*\); it must name the primary\n$/);
    assert.equal((await startedOn(url(primary.port))).code, 'listening', 'its primary is taken');
    // Running: a new connection's probe, ROLE refused, is answered, and Redis used again.
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    assert.match(primary.command('', 'CLIENT', 'KILL', 'USER', 'no-role'), /^[1-9]/);
    await until(() => lines.length === 2);
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 98, 'counted in Redis');
    assert.deepEqual(lines, ['warn: Redis unreachable; rate limits count in memory per instance until it is back', 'info: Redis is reachable again']);
  } finally {
    await limiter.close();
    await replica.stop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Redis that becomes a replica taking writes (replica-read-only no) in a failover, which closes its clients, is told by its ROLE on the new connection: logged once as a replica, nothing written to it, and used again once it is a primary', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const [first, second] = [await scratchRedis('--dir', dir), await scratchRedis('--dir', dir, '--repl-diskless-sync-delay', '0')];
  const { lines, logger } = loggedLines();
  const limiter = new RedisRateLimiter({ url: `redis://127.0.0.1:${first.port}`, logger });
  const key = `svc:rl:k:${Math.floor(T0 / 60_000) * 60}`;
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    // As Sentinel demotes a primary: a replica now, its clients closed so that they find the new primary.
    assert.equal(first.command('', 'CONFIG', 'SET', 'replica-read-only', 'no'), 'OK');
    assert.equal(first.command('', 'REPLICAOF', '127.0.0.1', String(second.port)), 'OK');
    // Its data replaced by the primary's, where the service's count is not.
    await until(() => /master_link_status:up/.test(first.command('', 'INFO', 'replication')));
    assert.equal(first.command('', 'GET', key), '');
    assert.match(first.command('', 'CLIENT', 'KILL', 'TYPE', 'normal'), /^[1-9]/);
    await until(() => lines.length === 2);
    assert.deepEqual(lines, [
      'warn: Redis unreachable; rate limits count in memory per instance until it is back',
      'warn: REDIS_URL reaches a replica; rate limits count in memory per instance until it reaches a primary',
    ]);
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'counted in memory');
    assert.equal(limiter.state(), 'degraded');
    assert.equal(first.command('', 'GET', key), '', 'nothing written to the replica');
    assert.equal(first.command('', 'REPLICAOF', 'NO', 'ONE'), 'OK');
    await until(() => limiter.state() === 'redis');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'counted in Redis, a primary again');
    assert.equal(first.command('', 'GET', key), '1');
    assert.deepEqual(lines.slice(2), ['info: REDIS_URL reaches a primary again']);
  } finally {
    await limiter.close();
    await first.stop();
    await second.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a REDIS_URL naming a Redis Sentinel stops the start with one line saying so and what to set instead, exit 2: the Sentinel says so to ROLE', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const primary = await scratchRedis('--dir', dir);
  const sentinel = await scratchSentinel(dir, primary.port);
  try {
    assert.match(sentinel.command('', 'ROLE'), /^sentinel\n/);
    const { code, output } = await startedOn(`redis://127.0.0.1:${sentinel.port}`);
    assert.equal(code, 2, output);
    assert.equal(output, 'invalid setting REDIS_URL: it names a Redis Sentinel (ROLE answers sentinel, monitoring mymaster), which serves no data and which the service does not ask; it must name the primary itself, redis://HOST:PORT, by an address a failover moves to the new primary (a DNS name, a proxy)\n');
  } finally {
    await sentinel.stop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a REDIS_URL that reaches a Redis Sentinel once running (its name moved to one) is told once as what it is, not as Redis unreachable, and a new connection is made every 2 s until it reaches a primary', { timeout: 60_000 }, async () => {
  let sentinel = false;
  const moving = await fakeRedis((command) => {
    if (command[0]?.toUpperCase() !== 'ROLE') return '+OK\r\n';
    return sentinel ? '*2\r\n$8\r\nsentinel\r\n*1\r\n$8\r\nmymaster\r\n' : '*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n';
  });
  const { lines, logger } = loggedLines();
  const redis = new GuardedRedis(`redis://127.0.0.1:${moving.port}`, { logger, uses: [rateLimiterUse] });
  try {
    await until(() => moving.sent.some(({ command }) => command[0]?.toUpperCase() === 'ROLE'));
    sentinel = true;
    await until(() => redis.isDegraded);
    const closedThen = moving.closed();
    await new Promise((resolve) => setTimeout(resolve, 5000));
    assert.ok(moving.closed() - closedThen <= 3, `${moving.closed() - closedThen} connections in 5 s`);
    assert.deepEqual(lines, ['warn: REDIS_URL reaches a Redis Sentinel; rate limits count in memory per instance until it reaches a primary']);
    sentinel = false;
    await until(() => !redis.isDegraded);
    assert.deepEqual(lines.slice(1), ['info: REDIS_URL reaches a primary again']);
  } finally {
    redis.close();
    await moving.stop();
  }
});

test('a Redis demoted to a replica that takes writes (replica-read-only no) without closing its clients is told by the ROLE asked on the connection in use: /readyz names it and stays 200, limits count in memory, until it is a primary again', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const [first, second] = [await scratchRedis('--dir', dir), await scratchRedis('--dir', dir, '--repl-diskless-sync-delay', '0')];
  const t = await startTestApp(temporarySqliteDatabase(), { env: { REDIS_URL: `redis://127.0.0.1:${first.port}` } });
  const readiness = async () => {
    const answer = await fetch(`${t.baseUrl}/readyz`);
    return { status: answer.status, checks: (await answer.json() as { checks: Record<string, string> }).checks };
  };
  try {
    await until(async () => (await readiness()).checks.rateLimiter === 'redis');
    assert.equal((await readiness()).status, 200);
    // Demoted by hand: its clients stay connected, and it answers their writes.
    assert.equal(first.command('', 'CONFIG', 'SET', 'replica-read-only', 'no'), 'OK');
    assert.equal(first.command('', 'REPLICAOF', '127.0.0.1', String(second.port)), 'OK');
    await until(async () => (await readiness()).checks.redis !== undefined);
    const { status, checks } = await readiness();
    assert.equal(status, 200, 'served on the fallbacks, as in an outage');
    assert.match(checks.redis ?? '', /^replica: REDIS_URL reaches a replica/);
    assert.equal(checks.rateLimiter, 'degraded');
    assert.equal(first.command('', 'REPLICAOF', 'NO', 'ONE'), 'OK');
    await until(async () => (await readiness()).checks.rateLimiter === 'redis');
    assert.equal((await readiness()).checks.redis, undefined);
  } finally {
    await t.close();
    await first.stop();
    await second.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Redis found a replica that then refuses connections is an outage: logged as Redis unreachable, and no longer named a replica', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const [first, second] = [await scratchRedis('--dir', dir), await scratchRedis('--dir', dir, '--repl-diskless-sync-delay', '0')];
  const { lines, logger } = loggedLines();
  const redis = new GuardedRedis(`redis://127.0.0.1:${first.port}`, { logger, meanwhile: 'rate limits count in memory per instance', uses: [rateLimiterUse] });
  const limiter = new RedisRateLimiter({ redis, keyPrefix: uniqueKeyPrefix() });
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    assert.equal(first.command('', 'REPLICAOF', '127.0.0.1', String(second.port)), 'OK');
    await until(() => redis.reachesReplica);
    // Two more connections, each meeting the replica.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    assert.deepEqual(lines, ['warn: REDIS_URL reaches a replica; rate limits count in memory per instance until it reaches a primary'], 'told once');
    await first.stop();
    await until(() => lines.length === 2);
    assert.equal(lines[1], 'warn: Redis unreachable; rate limits count in memory per instance until it is back');
    assert.equal(redis.reachesReplica, false);
    assert.equal(limiter.state(), 'degraded');
  } finally {
    await limiter.close();
    redis.close();
    await first.stop();
    await second.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A Redis that once started is LOADING its dataset for about `seconds` (a key a millisecond,
 * answering clients in between), with `args`; the dataset is saved in `dir`.
 */
async function loadingRedis(dir: string, seconds: number, ...args: string[]): Promise<ScratchRedis> {
  const saved = await scratchRedis('--dir', dir);
  assert.equal(saved.command('', 'EVAL', `for i = 1, ${seconds * 1000} do redis.call('SET', 'k' .. i, 'v') end`, '0'), '');
  assert.equal(saved.command('', 'SAVE'), 'OK');
  await saved.stop();
  return scratchRedis('--dir', dir, '--key-load-delay', '1000', '--loading-process-events-interval-bytes', '1024', ...args);
}

test('a Redis still LOADING its dataset at start does not keep the service from listening: /healthz answers and /readyz answers 503 until REDIS_URL is checked once Redis serves; then a user it refuses stops the service, exit 2, and one it takes makes it ready, with WORKERS=2 too', { skip: skipWithoutRedisServer, timeout: 180_000 }, async () => {
  compiled();
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  // An ACL user that may run everything but EVALSHA, and the default user, which may run all.
  const user = ['--user', 'no-evalsha', 'on', '>no-evalsha-password', '~*', '+@all', '-evalsha'];
  try {
    for (const [workers, credentials, refused] of [['1', 'no-evalsha:no-evalsha-password@', true], ['1', '', false], ['2', '', false]] as const) {
      const redis = await loadingRedis(dir, 12, ...user);
      const port = await freePort();
      const server = run(process.execPath, [SERVICE_ENTRY], {
        DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(port), REDIS_URL: `redis://${credentials}127.0.0.1:${redis.port}`, LOG_LEVEL: 'warn', WORKERS: workers,
      });
      const readiness = async () => fetch(`http://127.0.0.1:${port}/readyz`);
      try {
        await server.waitFor(/Listening on /);
        assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
        const waiting = await readiness();
        assert.equal(waiting.status, 503);
        assert.match((await waiting.json() as { checks: { redisSettings: string } }).checks.redisSettings, /^checking: Redis answered LOADING/);
        assert.match(redis.command('', 'PING'), /^LOADING/, 'Redis loads still');
        if (refused) {
          assert.equal(await server.exited, 2, server.output());
          assert.match(server.output(), /(?:^|\n)invalid setting REDIS_URL: this Redis's user may not run the service's commands \(NOPERM [^\n]*'evalsha'[^\n]*\); it needs EVAL[^\n]*\n/);
        } else {
          await until(async () => (await readiness()).status === 200);
          // Every worker, each told by the primary (the requests go to each in turn).
          for (let i = 0; i < 4; i++) assert.equal((await readiness()).status, 200);
        }
      } finally {
        if (server.child.exitCode === null) {
          server.child.kill('SIGTERM');
          await server.exited;
        }
        await redis.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('while the start checks REDIS_URL on a Redis LOADING its dataset, the service answers only /healthz and /readyz: every other request, a token request or a sign-in page, is 503 temporarily_unavailable with Retry-After, so nothing is issued or counted by an instance that may yet stop (exit 2); once checked it serves', { skip: skipWithoutRedisServer, timeout: 120_000 }, async () => {
  compiled();
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const redis = await loadingRedis(dir, 12);
  const port = await freePort();
  const server = run(process.execPath, [SERVICE_ENTRY], {
    DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(port), REDIS_URL: `redis://127.0.0.1:${redis.port}`, LOG_LEVEL: 'warn',
  });
  const at = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${port}${path}`, init);
  const tokenRequest = () => at('/api/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=x&client_id=nobody' });
  try {
    await server.waitFor(/Listening on /);
    assert.equal((await at('/readyz')).status, 503);
    assert.equal((await at('/healthz')).status, 200);
    const token = await tokenRequest();
    assert.equal(token.status, 503);
    assert.equal(token.headers.get('retry-after'), '5');
    assert.equal((await token.json() as { error: string }).error, 'temporarily_unavailable');
    const page = await at('/login', { headers: { 'accept-language': 'zh-CN', accept: 'text/html' } });
    assert.equal(page.status, 503);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /服务暂时不可用，请稍后再试。/);
    assert.match(redis.command('', 'PING'), /^LOADING/, 'Redis loads still: the answers above were given while checking');
    await until(async () => (await at('/readyz')).status === 200);
    assert.equal((await tokenRequest()).status, 401, 'served once checked: the client is unknown');
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Redis still LOADING its dataset, or BUSY with a script, at start is waited for and then checked: a permission its user lacks is found, not skipped', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  // An ACL user that may run everything but EVALSHA.
  const user = ['--user', 'no-evalsha', 'on', '>no-evalsha-password', '~*', '+@all', '-evalsha'];
  const url = (port: number) => `redis://no-evalsha:no-evalsha-password@127.0.0.1:${port}/1`;
  const refused = { outcome: 'refused', refused: 'permissions', reason: 'NOPERM this user has no permissions to run the \'evalsha\' command', db: 1 };
  const loading = await loadingRedis(dir, 3, ...user);
  try {
    assert.match(loading.command('', 'PING'), /^LOADING/);
    assert.deepEqual(await checkRedisDatabase(url(loading.port), REDIS_USES), refused);
  } finally {
    await loading.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  // A script past its time limit (50 ms), killed after half a second: Redis answers BUSY meanwhile, to the handshake's SELECT too.
  const busy = await scratchRedis('--busy-reply-threshold', '50', ...user);
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const looping = new Redis(`redis://127.0.0.1:${busy.port}`);
  try {
    const loop = looping.eval('while true do end', 0).then(String, (error: Error) => error.message);
    await until(() => /^BUSY/.test(busy.command('', 'PING')));
    setTimeout(() => busy.command('', 'SCRIPT', 'KILL'), 500);
    assert.deepEqual(await checkRedisDatabase(url(busy.port), REDIS_USES), refused);
    assert.match(await loop, /Script killed/);
  } finally {
    looping.disconnect();
    await busy.stop();
  }
});

test('a permission Redis refuses one user of the shared connection sends only that user to its fallback: the replay cache refused SET, the limiter counts on in Redis, and the other way round', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const admin = new Redis(withDatabase(12));
  const keyPrefix = uniqueKeyPrefix();
  const users: string[] = [];
  try {
    for (const [refusedCommand, line] of [
      ['-set', 'warn: Redis refuses REDIS_URL\'s user the command SET; DPoP proofs are recorded in the database until it allows it'],
      ['-evalsha', 'warn: Redis refuses REDIS_URL\'s user the command EVALSHA; rate limits count in memory per instance until it allows it'],
    ] as const) {
      const { user, url } = await aclUser(admin);
      users.push(user);
      const { lines, logger } = loggedLines();
      const shared = new GuardedRedis(url, { logger, uses: REDIS_USES });
      const limiter = new RedisRateLimiter({ redis: shared, keyPrefix: `${keyPrefix}${user}:` });
      const database = new Set<string>();
      const replay = new RedisReplayStore({ redis: shared, keyPrefix, fallback: {
        claim: async (key: string) => {
          if (database.has(key)) return false;
          database.add(key);
          return true;
        },
      } });
      try {
        // Each has run once (the limiter's EVAL, then EVALSHA from then on).
        assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
        assert.equal(await replay.claim(`${user}-first`, T0 + 60_000, T0), true);
        assert.equal(await admin.call('ACL', 'SETUSER', user, refusedCommand), 'OK');
        const hits = [];
        for (let i = 0; i < 3; i++) {
          hits.push((await limiter.hit('k', 100, 60, T0)).remaining);
          assert.equal(await replay.claim(`${user}-${i}`, T0 + 60_000, T0), true);
        }
        if (refusedCommand === '-set') {
          assert.deepEqual(hits, [98, 97, 96], 'the limiter counts on in Redis');
          assert.equal(limiter.state(), 'redis');
          assert.deepEqual([...database], [`${user}-0`, `${user}-1`, `${user}-2`], 'the replay cache records in the database');
        } else {
          assert.deepEqual(hits, [99, 98, 97], 'the limiter counts in memory');
          assert.equal(limiter.state(), 'degraded');
          assert.deepEqual([...database], [], 'the replay cache records in Redis');
        }
        assert.deepEqual(lines, [line], 'told once, for the user refused');
      } finally {
        await limiter.close();
        await replay.close();
        shared.close();
      }
    }
  } finally {
    for (const user of users) {
      await admin.call('ACL', 'DELUSER', user);
      const keys = await admin.keys(`${keyPrefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
    admin.disconnect();
  }
});

test('a connection made again while Redis refuses the user its scripts (ACL -@scripting) sends only the limiter to its fallback: the replay cache goes back to Redis, the refusal is logged as such, not as an outage', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const admin = new Redis(withDatabase(12));
  const { user, url } = await aclUser(admin);
  const keyPrefix = uniqueKeyPrefix();
  const { lines, logger } = loggedLines();
  const shared = new GuardedRedis(url, { logger, uses: REDIS_USES });
  const limiter = new RedisRateLimiter({ redis: shared, keyPrefix });
  const database: string[] = [];
  const replay = new RedisReplayStore({ redis: shared, keyPrefix, fallback: { claim: async (key: string) => (database.push(key), true) } });
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    assert.equal(await admin.call('ACL', 'SETUSER', user, '-@scripting'), 'OK');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'refused, counted in memory');
    // The connection is made again (a network blip, Redis's timeout for idle clients).
    assert.equal(Number(await admin.call('CLIENT', 'KILL', 'USER', user)) >= 1, true);
    await until(() => shared.isDegraded);
    await until(() => !shared.isDegraded);
    assert.equal(await replay.claim('after', T0 + 60_000, T0), true);
    assert.deepEqual(database, [], 'the replay cache records in Redis');
    assert.equal(await admin.exists(`${keyPrefix}after`), 1);
    assert.equal(limiter.state(), 'degraded');
    assert.deepEqual(lines.filter((line) => !line.startsWith('warn: Redis unreachable') && !line.startsWith('info: Redis is reachable again')), [
      'warn: Redis refuses REDIS_URL\'s user the command EVALSHA; rate limits count in memory per instance until it allows it',
    ]);
  } finally {
    await limiter.close();
    await replay.close();
    shared.close();
    await admin.call('ACL', 'DELUSER', user);
    const keys = await admin.keys(`${keyPrefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    admin.disconnect();
  }
});

test('a Redis BUSY with a script when a connection is made once running is logged as an outage, not as a database it does not have, and its database is used once the script ends', { skip: skipWithoutRedisServer, timeout: 60_000 }, async () => {
  const busy = await scratchRedis('--busy-reply-threshold', '50');
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const looping = new Redis(`redis://127.0.0.1:${busy.port}`);
  looping.on('error', () => {});
  const { lines, logger } = loggedLines();
  let shared: GuardedRedis | undefined;
  let limiter: RedisRateLimiter | undefined;
  try {
    const loop = looping.eval('while true do end', 0).then(String, (error: Error) => error.message);
    await until(() => /^BUSY/.test(busy.command('', 'PING')));
    // BUSY answers the handshake's SELECT of database 1.
    shared = new GuardedRedis(`redis://127.0.0.1:${busy.port}/1`, { logger, uses: REDIS_USES });
    limiter = new RedisRateLimiter({ redis: shared });
    await until(() => lines.length > 0);
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'counted in memory meanwhile');
    busy.command('', 'SCRIPT', 'KILL');
    assert.match(await loop, /Script killed/);
    await until(() => limiter!.state() === 'redis');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'counted in Redis');
    assert.match(busy.command('', 'INFO', 'keyspace'), /^# Keyspace\r?\ndb1:/, 'in database 1, none in database 0');
    assert.deepEqual(lines, [
      'warn: Redis unreachable; rate limits count in memory per instance and DPoP proofs are recorded in the database until it is back',
      'info: Redis is reachable again',
    ]);
  } finally {
    await limiter?.close();
    shared?.close();
    looping.disconnect();
    await busy.stop();
  }
});

test('a REDIS_URL refused while the start prepares a new database stops the start once the preparation is done, not in its middle: the demo is seeded and its credentials kept, exit 2', { timeout: 120_000 }, async () => {
  compiled();
  // LOADING to the start's first check, so the check goes on while the database is prepared; a replica to the next.
  const replica = await fakeRedis((command, connection) => {
    if (connection === 0) return '-LOADING Redis is loading the dataset in memory\r\n';
    return command[0]?.toUpperCase() === 'ROLE' ? '*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:6390\r\n$9\r\nconnected\r\n:0\r\n' : '+OK\r\n';
  });
  const path = temporarySqlitePath();
  writeFileSync(path, '');
  // Another start's migration turn, held until the check has found the replica: the preparation waits for it meanwhile.
  const turn = new SQLite(prepareMigrationTurnFile(path));
  turn.exec('BEGIN EXCLUSIVE');
  const server = run(process.execPath, [SERVICE_ENTRY], { DATABASE_URL: `sqlite:${path}`, PORT: String(await freePort()), REDIS_URL: `redis://127.0.0.1:${replica.port}`, LOG_LEVEL: 'warn' });
  try {
    // Both checks' connections closed, the second's after ROLE answered a replica: the refusal is known.
    await until(() => replica.closed() === 2);
    assert.ok(replica.sent.some(({ connection, command }) => connection === 1 && command[0]?.toUpperCase() === 'ROLE'));
    turn.exec('ROLLBACK');
    assert.equal(await server.exited, 2, server.output());
    assert.match(server.output(), /(?:^|\n)invalid setting REDIS_URL: it names a replica \(ROLE answers slave, of 127\.0\.0\.1:6390\); it must name the primary\n$/);
    assert.ok(existsSync(demoCredentialsPath(loadSettings({ DATABASE_URL: `sqlite:${path}` }))), 'the new demo\'s credentials kept');
  } finally {
    if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await server.exited;
    turn.close();
    await replica.stop();
  }
});

test('while the start checks REDIS_URL on a Redis LOADING its dataset, the instance writes nothing: a queued mail is not sent nor the kept demo app moved to its address by one that then stops for a refusal (exit 2); one whose REDIS_URL passes does both', { skip: skipWithoutRedisServer, timeout: 120_000 }, async () => {
  compiled();
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const path = temporarySqlitePath();
  const kept = demoCredentialsPath(loadSettings({ DATABASE_URL: `sqlite:${path}` }));
  const demoAppAt = () => (JSON.parse(readFileSync(kept, 'utf8')) as { confidentialClient: { redirectUri: string } }).confidentialClient.redirectUri;
  const smtp = await TestSmtpServer.start();
  const start = async (port: number, env: Record<string, string> = {}) => run(process.execPath, [SERVICE_ENTRY], {
    DATABASE_URL: `sqlite:${path}`, PORT: String(port), SMTP_URL: smtp.url, MAIL_DELIVERY_INTERVAL: '1', LOG_LEVEL: 'warn', ...env,
  });
  // The demo seeded by a start on another port, and a mail queued since.
  // Two different ports: the demo app must be seen to stay on the first.
  const [first, second] = await twoFreePorts();
  const seeding = await start(first);
  await seeding.waitFor(/Listening on /);
  seeding.child.kill('SIGTERM');
  assert.equal(await seeding.exited, 0, seeding.output());
  assert.match(demoAppAt(), new RegExp(`^http://localhost:${first}/`));
  const database = openDatabase({ kind: 'sqlite', path });
  const mail = { to: 'someone@example.test', userId: null, kind: 'noticePasswordChanged', subject: 'Queued before the start', text: 'Sent by a started instance.', html: null, language: 'en' } as const;
  assert.equal(await createStores(database.db, database.queries).mailOutbox.enqueue(mail, Date.now()), true);
  await database.close();
  const redis = await loadingRedis(dir, 6, '--user', 'no-evalsha', 'on', '>no-evalsha-password', '~*', '+@all', '-evalsha');
  const refused = await start(second, { REDIS_URL: `redis://no-evalsha:no-evalsha-password@127.0.0.1:${redis.port}` });
  try {
    assert.equal(await refused.exited, 2, refused.output());
    assert.deepEqual(smtp.received, [], 'no mail sent by the instance that stopped');
    assert.match(demoAppAt(), new RegExp(`^http://localhost:${first}/`), 'the demo app left where the first start had it');
    const taken = await start(second, { REDIS_URL: `redis://127.0.0.1:${redis.port}` });
    try {
      await taken.waitFor(/Listening on /);
      assert.match(demoAppAt(), new RegExp(`^http://localhost:${second}/`));
      await until(() => smtp.to(mail.to).length === 1);
      assert.deepEqual(smtp.to(mail.to).map((sent) => sent.subject), [mail.subject]);
    } finally {
      taken.child.kill('SIGTERM');
      await taken.exited;
    }
  } finally {
    if (refused.child.exitCode === null) refused.child.kill('SIGTERM');
    await refused.exited;
    await smtp.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
