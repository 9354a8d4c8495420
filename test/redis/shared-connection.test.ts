/**
 * The service's one connection to Redis (src/redis/connect.ts), shared by the rate limiter and
 * the DPoP replay cache: when Redis goes away (the connection cut, or Redis stalled with it left
 * open) both fall back together (the limiter to memory, the replay cache to the database) without
 * waiting for Redis, the outage and the return are logged once, and both are back on Redis
 * together.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { test } from 'node:test';
import type { DpopReplayStore } from '../../src/core/oauth/ports.js';
import { REDIS_USES } from '../../src/deps.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import { checkRedisDatabase, GuardedRedis, type RedisLogger } from '../../src/redis/connect.js';
import { RedisReplayStore } from '../../src/replay/redis.js';
import { holdEventLoop, loggedLines, redisUrl, skipWithoutRedis, uniqueKeyPrefix } from '../support/redis.js';
import { TcpRelay } from '../support/relay.js';
import { until } from '../support/eventually.js';

const T0 = Date.UTC(2026, 10, 23, 8, 0, 0);

/** The database's replay store, as far as the cache sees it: each key claimed once. */
class RecordingStore implements DpopReplayStore {
  readonly claimed = new Set<string>();
  async claim(key: string): Promise<boolean> {
    if (this.claimed.has(key)) return false;
    this.claimed.add(key);
    return true;
  }
}


/** A guarded connection to `url` whose log lines are kept in `lines` (`warn: …`, `info: …`). */
function loggedRedis(url: string, commandTimeoutMs: number): { redis: GuardedRedis; lines: string[] } {
  const { lines, logger } = loggedLines();
  return { redis: new GuardedRedis(url, { logger, meanwhile: 'both fall back', commandTimeoutMs }), lines };
}

/**
 * A guarded connection to Redis through a relay a test can cut or stall; `stalled` stalls it
 * before the connection is made, its handshake unanswered until the test resumes it.
 */
async function loggedRedisThroughRelay(commandTimeoutMs: number, { stalled = false } = {}) {
  const target = new URL(redisUrl!);
  const relay = new TcpRelay({ host: target.hostname, port: Number(target.port || 6379) });
  await relay.open();
  if (stalled) relay.stall();
  // The server's database, user and password as TEST_REDIS_URL names them: only the address is the relay's.
  const relayed = new URL(target);
  relayed.host = `127.0.0.1:${relay.port}`;
  return { relay, ...loggedRedis(relayed.href, commandTimeoutMs) };
}

/** A limiter and a replay cache sharing one guarded connection to Redis through a relay a test can cut or stall. */
async function sharedThroughRelay(commandTimeoutMs: number) {
  const { relay, redis, lines } = await loggedRedisThroughRelay(commandTimeoutMs);
  const keyPrefix = uniqueKeyPrefix();
  const limiter = new RedisRateLimiter({ redis, keyPrefix });
  const database = new RecordingStore();
  const replay = new RedisReplayStore({ redis, fallback: database, keyPrefix });
  const close = async () => {
    await limiter.close();
    await replay.close();
    redis.close();
    await relay.cut();
  };
  return { relay, lines, redis, limiter, database, replay, keyPrefix, close };
}

test('the limiter and the replay cache fall back together when the shared connection is cut, log it once, and come back together', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { relay, lines, limiter, database, replay, close } = await sharedThroughRelay(300);
  try {
    assert.equal(await replay.claim('before', T0 + 60_000, T0), true);
    assert.equal(await replay.claim('before', T0 + 60_000, T0), false, 'Redis remembers the proof');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    assert.equal(database.claimed.size, 0, 'nothing went to the database while Redis answered');

    await relay.cut();
    // The limiter falls back once the connection is cut.
    await until(() => limiter.state() === 'degraded');
    assert.equal(await replay.claim('during', T0 + 60_000, T0), true);
    assert.equal(await replay.claim('during', T0 + 60_000, T0), false, 'the database remembers the proof meanwhile');
    assert.deepEqual([...database.claimed], ['during']);
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'counted in memory meanwhile');

    await relay.open();
    // Back on Redis once it is reachable.
    await until(() => limiter.state() === 'redis');
    // Once the proof the database accepted has expired (below: the database is asked meanwhile).
    const later = T0 + 60_000;
    assert.equal(await replay.claim('after', later + 60_000, later), true);
    assert.deepEqual([...database.claimed], ['during'], 'the replay cache is back on Redis too');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back', 'info: Redis is reachable again']);

    // Closing a user of the shared connection leaves it open for the other.
    await limiter.close();
    assert.equal(await replay.claim('still', later + 60_000, later), true);
    assert.deepEqual([...database.claimed], ['during']);
  } finally {
    await close();
  }
});

test('a stall longer than the command timeout, the connection kept, is not reported as an outage for ever once Redis answers again', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { relay, lines, limiter, database, replay, close } = await sharedThroughRelay(200);
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    relay.stall();
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'answered from memory after the timeout');
    assert.equal(limiter.state(), 'degraded');
    relay.resume();
    // /readyz says Redis again once Redis answers.
    await until(() => limiter.state() === 'redis');
    assert.equal(await replay.claim('after', T0 + 60_000, T0), true);
    assert.equal(database.claimed.size, 0, 'the claim was answered by Redis');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back', 'info: Redis is reachable again']);

    // A later outage is noticed and logged as one.
    await relay.cut();
    // The next outage is noticed.
    await until(() => limiter.state() === 'degraded');
    assert.equal(lines.length, 3);
    assert.equal(lines[2], 'warn: Redis unreachable; both fall back until it is back');
  } finally {
    await close();
  }
});

test('a proof accepted from the database while Redis was away is not accepted again from Redis once it is back', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { relay, limiter, database, replay, close } = await sharedThroughRelay(300);
  try {
    assert.equal(await replay.claim('warm', T0 + 60_000, T0), true);
    await relay.cut();
    // The outage is noticed.
    await until(() => limiter.state() === 'degraded');
    assert.equal(await replay.claim('proof', T0 + 300_000, T0), true, 'accepted from the database during the outage');

    await relay.open();
    // Back on Redis.
    await until(() => limiter.state() === 'redis');
    assert.equal(await replay.claim('proof', T0 + 300_000, T0 + 10_000), false, 'the same proof, replayed just after Redis is back');
    assert.equal(await replay.claim('fresh', T0 + 310_000, T0 + 10_000), true, 'a new proof is accepted');
    assert.equal(await replay.claim('fresh', T0 + 310_000, T0 + 10_000), false, 'and only once');
    // Once every proof the database accepted has expired, Redis alone answers again.
    assert.equal(await replay.claim('later', T0 + 700_000, T0 + 400_000), true);
    assert.equal(database.claimed.has('later'), false, 'the database is no longer asked');
  } finally {
    await close();
  }
});

test('a proof accepted from the database while Redis was away is not accepted by another instance once Redis is back', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { relay, limiter, database, replay, keyPrefix, close } = await sharedThroughRelay(200);
  // Another instance, straight to Redis, that never lost it; both share the database.
  const other = new RedisReplayStore({ url: redisUrl!, fallback: database, keyPrefix });
  try {
    assert.equal(await replay.claim('warm', T0 + 300_000, T0), true);
    relay.stall();
    assert.equal(await replay.claim('timed-out', T0 + 300_000, T0), true, 'the claim that finds the stall, from the database');
    // From now on this instance does not ask Redis: the proof is recorded in the database only.
    assert.equal(await replay.claim('proof', T0 + 300_000, T0), true, 'accepted from the database during the stall');
    assert.ok(database.claimed.has('proof'));

    relay.resume();
    // Back on Redis.
    await until(() => limiter.state() === 'redis');
    assert.equal(await replay.claim('fresh', T0 + 310_000, T0 + 10_000), true, 'this instance answers from Redis again');
    assert.equal(await other.claim('proof', T0 + 300_000, T0 + 10_000), false, 'the same proof, replayed to the other instance');
    assert.equal(await other.claim('new', T0 + 310_000, T0 + 10_000), true, 'a new proof is accepted there');
  } finally {
    await other.close();
    await close();
  }
});

test('while Redis is stalled with the connection open, requests answer from the fallback without waiting for Redis, and Redis is used again once it answers', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { relay, lines, limiter, database, replay, keyPrefix, close } = await sharedThroughRelay(200);
  // Another instance, straight to Redis: it sees the counts this one leaves there.
  const witness = new RedisRateLimiter({ url: redisUrl!, keyPrefix });
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    relay.stall();
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'the first request after the stall waits for the timeout, then counts in memory');

    // From now on no request asks Redis: nothing the client sends carries one of their keys.
    const sent: Buffer[] = [];
    relay.onClientData = (chunk) => sent.push(chunk);
    const burst = 20;
    const [hits, claims] = await Promise.all([
      Promise.all(Array.from({ length: burst }, () => limiter.hit('k', 100, 60, T0))),
      Promise.all(Array.from({ length: burst }, (_, i) => replay.claim(`stalled-${i}`, T0 + 60_000, T0))),
    ]);
    assert.deepEqual(hits.map((d) => d.remaining).sort((a, b) => b - a), Array.from({ length: burst }, (_, i) => 98 - i), 'counted in memory');
    assert.deepEqual(claims, Array(burst).fill(true));
    assert.equal(database.claimed.size, burst, 'the proofs are recorded in the database');
    assert.equal(Buffer.concat(sent).includes(keyPrefix), false, 'no request of the burst reached Redis');
    // While the stall lasts the client tries new connections; none is taken for Redis being back.
    // New connections are tried while Redis is stalled: a handshake unanswered is given up too.
    await until(() => relay.accepted > 2);
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 98 - burst, 'still counted in memory');
    assert.equal(Buffer.concat(sent).includes(keyPrefix), false, 'no request reached Redis while it was stalled');
    assert.equal(limiter.state(), 'degraded', '/readyz says degraded while the stall lasts');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back']);

    relay.resume();
    // Back on Redis once it answers.
    await until(() => limiter.state() === 'redis');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back', 'info: Redis is reachable again']);
    // In Redis: the hit before the stall, and the one that timed out (Redis ran it, its answer
    // was held), not run twice; the hits answered from memory never went there.
    assert.equal((await witness.hit('k', 100, 60, T0)).remaining, 97, 'another instance sees the count in Redis');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 96, 'and this one counts there again');
    const later = T0 + 60_000;
    assert.equal(await replay.claim('after', later + 60_000, later), true);
    assert.equal(database.claimed.has('after'), false, 'the replay cache is back on Redis too');
  } finally {
    await witness.close();
    await close();
  }
});

/**
 * A Redis that answers a connection's handshake (HELLO refused, CLIENT, INFO) but no other command
 * until `answer()`: what a Redis pausing writes (CLIENT PAUSE WRITE, as in a failover) looks like
 * to a client whose ready check is a read. Or, restarted (`restart`), one that answers every other
 * command LOADING, as Redis does while it loads its dataset, until `loaded()`.
 */
class HandshakeOnlyRedis {
  private readonly server: Server = createServer((socket) => this.serve(socket));
  private readonly sockets = new Set<Socket>();
  port = 0;
  /** Commands other than the handshake's received so far, per connection in the order accepted. */
  readonly commands: number[] = [];
  /** The names of those commands, per connection. */
  readonly names: string[][] = [];
  private answering = false;
  private loading = false;
  /** Commands answered LOADING so far. */
  loadingAnswers = 0;
  private readonly held = new Map<Socket, number>();

  async open(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    const connection = this.commands.push(0) - 1;
    this.names.push([]);
    onCommands(socket, (name) => {
      if (name === 'HELLO') socket.write('-NOPROTO this server speaks RESP2 only\r\n');
      else if (name === 'CLIENT') socket.write('+OK\r\n');
      else if (name === 'INFO') socket.write(bulk(`# Server\r\nloading:${this.loading ? 1 : 0}\r\n`));
      else if (this.loading) {
        this.loadingAnswers += 1;
        socket.write('-LOADING Redis is loading the dataset in memory\r\n');
      } else {
        this.commands[connection]! += 1;
        this.names[connection]!.push(name);
        if (this.answering) socket.write('+PONG\r\n');
        else this.held.set(socket, (this.held.get(socket) ?? 0) + 1);
      }
    });
  }

  /** Answers from now on, the commands held first, in order, as Redis does once a pause ends. */
  answer(): void {
    this.answering = true;
    for (const [socket, count] of this.held) socket.write('+PONG\r\n'.repeat(count));
    this.held.clear();
  }

  /** Closes every connection, as a restart does, and loads its dataset until `loaded()`. */
  restart(): void {
    this.loading = true;
    for (const socket of this.sockets) socket.destroy();
  }

  loaded(): void {
    this.loading = false;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function bulk(text: string): string {
  return `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
}

/** Calls `command` with the name (in capitals) of each RESP command `socket` receives, in order. */
function onCommands(socket: Socket, command: (name: string) => void): void {
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (let parsed = parseCommand(buffered); parsed; parsed = parseCommand(buffered)) {
      buffered = buffered.subarray(parsed.length);
      command(parsed.args[0]!.toUpperCase());
    }
  });
}

/** One RESP command (an array of bulk strings) from the start of `buffer`, or undefined until it is whole. */
function parseCommand(buffer: Buffer): { args: string[]; length: number } | undefined {
  const line = (from: number) => {
    const end = buffer.indexOf('\r\n', from);
    return end < 0 ? undefined : { text: buffer.toString('latin1', from + 1, end), next: end + 2 };
  };
  const header = line(0);
  if (!header) return undefined;
  const args: string[] = [];
  let at = header.next;
  for (let i = 0; i < Number(header.text); i++) {
    const size = line(at);
    if (!size || buffer.length < size.next + Number(size.text) + 2) return undefined;
    args.push(buffer.toString('latin1', size.next, size.next + Number(size.text)));
    at = size.next + Number(size.text) + 2;
  }
  return { args, length: at };
}

test('after a stall, a new connection whose handshake Redis answers is not taken for Redis being back until a command is answered', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const server = new HandshakeOnlyRedis();
  await server.open();
  const { redis, lines } = loggedRedis(`redis://127.0.0.1:${server.port}`, 100);
  const ping = () => redis.ask(() => redis.client.ping());
  try {
    assert.equal(await ping(), undefined, 'the first command waits for the timeout, unanswered');
    assert.equal(redis.isDegraded, true);
    // Commands are asked until one goes out on a connection made after the first was dropped:
    // that connection's handshake was answered, and it was taken as ready.
    for (let i = 0; i < 200 && server.commands.slice(1).every((n) => n === 0); i++) {
      await ping();
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(server.commands.slice(1).some((n) => n > 0), 'a command went out on a new connection');
    assert.equal(redis.isDegraded, true, '/readyz still says degraded: no command was answered');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back'], 'no return, and no second outage, in the log');

    server.answer();
    // A command answered ends the outage, with no request meanwhile.
    await until(() => !redis.isDegraded);
    assert.equal(lines.at(-1), 'info: Redis is reachable again');
    assert.equal(await ping(), 'PONG');
  } finally {
    redis.close();
    await server.close();
  }
});

test('after a stall, requests keep to their fallback without asking a new connection until its script is answered: a Redis pausing writes holds none of them for the timeout', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const server = new HandshakeOnlyRedis();
  await server.open();
  const { redis, lines } = loggedRedis(`redis://127.0.0.1:${server.port}`, 100);
  const ping = () => redis.ask(() => redis.client.ping());
  const probed = () => server.names.slice(1).filter((names) => names.includes('EVAL')).length;
  try {
    assert.equal(await ping(), undefined, 'the first command waits for the timeout, unanswered');
    // Requests keep coming while new connections are made, handshaken, and probed, three times.
    for (let i = 0; i < 300 && probed() < 3; i++) {
      assert.equal(await ping(), undefined);
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(probed() >= 3, 'new connections were probed');
    // The probe's script and ROLE alone.
    assert.deepEqual(server.names.slice(1).flat().filter((name) => name !== 'EVAL' && name !== 'ROLE'), [], 'no request went out on a connection whose script was unanswered');
    assert.equal(redis.isDegraded, true);

    server.answer();
    // The script answered ends the outage.
    await until(() => !redis.isDegraded);
    assert.equal(await ping(), 'PONG', 'and requests ask Redis again');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back', 'info: Redis is reachable again']);
  } finally {
    redis.close();
    await server.close();
  }
});

test('a Redis restarted and still loading its dataset is not taken for Redis being back: requests keep to their fallback, and /readyz says degraded, until it answers', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const server = new HandshakeOnlyRedis();
  await server.open();
  server.answer();
  const { redis, lines } = loggedRedis(`redis://127.0.0.1:${server.port}`, 100);
  const ping = () => redis.ask(() => redis.client.ping());
  try {
    assert.equal(await ping(), 'PONG');
    server.restart();
    // The restart is noticed.
    await until(() => redis.isDegraded);
    // New connections are made, their handshake answered, while Redis loads.
    for (let i = 0; i < 100 && server.loadingAnswers < 3; i++) {
      assert.equal(await ping(), undefined, 'answered from the fallback');
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(redis.isDegraded, true);
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back'], 'not back while it loads');

    server.loaded();
    // Back once loaded.
    await until(() => !redis.isDegraded);
    assert.equal(await ping(), 'PONG');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back', 'info: Redis is reachable again']);
  } finally {
    redis.close();
    await server.close();
  }
});

test('a command unanswered when its connection closes is answered from the fallback then, and reports no new outage once Redis is back', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { relay, lines, limiter, close } = await sharedThroughRelay(1000);
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    relay.stall();
    const pending = limiter.hit('k', 100, 60, T0);
    await relay.cut();
    relay.resume();
    assert.equal((await pending).remaining, 99, 'the hit sent before the cut is answered from memory');
    assert.equal(limiter.state(), 'degraded');
    await relay.open();
    // Back on Redis on a new connection.
    await until(() => limiter.state() === 'redis');
    assert.equal(limiter.state(), 'redis', 'the failure of the command is not news: the connection it was sent on is gone');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back', 'info: Redis is reachable again']);
    assert.equal(relay.accepted, 2, 'the new connection is kept');
  } finally {
    await close();
  }
});

test('an error Redis answers with is logged as an outage until its next answer, and the connection is kept', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const { relay, lines, redis, limiter, close } = await sharedThroughRelay(300);
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    // A script's error, as out of memory would be (a command Redis does not know is a setting at fault: redis-url.test.ts).
    assert.equal(await redis.ask(() => redis.client.eval("return redis.error_reply('ERR a script failed')", 0)), undefined, 'the caller uses its fallback');
    assert.equal(limiter.state(), 'degraded');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 98, 'Redis is still asked, and answers');
    assert.equal(limiter.state(), 'redis');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back', 'info: Redis is reachable again']);
    assert.equal(relay.accepted, 1, 'on the same connection');
  } finally {
    await close();
  }
});

test('an answer waiting in the socket while the event loop was held past the command timeout is Redis\'s, not an outage', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const timeout = 200;
  const { redis, lines } = loggedRedis(redisUrl!, timeout);
  try {
    assert.equal(await redis.ask(() => redis.client.ping('ready')), 'ready');
    // Held once the command is written (ioredis writes a turn's commands in a setImmediate queued
    // when the first is asked: this one runs after it), while Redis answers.
    const written = redis.ask(() => redis.client.ping('held after the write'));
    setImmediate(() => holdEventLoop(3 * timeout));
    assert.equal(await written, 'held after the write');
    // Held in the turn that asks, before the command is even written.
    const asked = redis.ask(() => redis.client.ping('held before the write'));
    holdEventLoop(3 * timeout);
    assert.equal(await asked, 'held before the write');
    assert.equal(redis.isDegraded, false);
    assert.deepEqual(lines, [], 'no outage logged');
    assert.equal(await redis.ask(() => redis.client.ping('after')), 'after', 'the connection is kept');
  } finally {
    redis.close();
  }
});

test('a command written as a hold of the event loop ends, however close to the timeout the hold ended, is given the whole timeout to be answered', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const timeout = 200;
  const { redis, lines } = loggedRedis(redisUrl!, timeout);
  try {
    assert.equal(await redis.ask(() => redis.client.ping('ready')), 'ready');
    // Asked in the check phase, the command is written in the next one, after the timers phase
    // that runs the timeout's timer; held just past the timeout (less than a tenth late), the
    // timer alone does not tell that the loop was held, and the command, written only then, had
    // no time at all to be answered.
    let asked: Promise<string | undefined> | undefined;
    await new Promise<void>((resolve) => setImmediate(() => {
      asked = redis.ask(() => redis.client.ping('written as the hold ends'));
      holdEventLoop(timeout * 1.02);
      resolve();
    }));
    assert.equal(await asked, 'written as the hold ends');
    assert.equal(redis.isDegraded, false);
    assert.deepEqual(lines, [], 'no outage logged');
  } finally {
    redis.close();
  }
});

test('a command Redis does not answer still times out and degrades when the event loop was held past the timeout meanwhile', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const timeout = 200;
  const { relay, lines, limiter, close } = await sharedThroughRelay(timeout);
  try {
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    relay.stall();
    const stalled = limiter.hit('k', 100, 60, T0);
    setImmediate(() => holdEventLoop(3 * timeout));
    assert.equal((await stalled).remaining, 99, 'answered from memory');
    assert.equal(limiter.state(), 'degraded');
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back']);
    relay.resume();
    // Back on Redis once it answers.
    await until(() => limiter.state() === 'redis');
  } finally {
    await close();
  }
});

test('a connection made while the event loop was held past the connect timeout is Redis\'s, not an outage', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const timeout = 200;
  const { redis, lines } = loggedRedis(redisUrl!, timeout);
  // Held once the socket is made and its connection under way (ioredis makes the socket on the
  // tick after telling 'connecting', and sets it up in a promise's callback), before that
  // connection is read, for longer than the connect timeout (1 s at least).
  redis.client.once('connecting', () => process.nextTick(() => queueMicrotask(() => holdEventLoop(2000))));
  try {
    // Connected.
    await until(() => redis.client.status === 'ready');
    assert.equal(await redis.ask(() => redis.client.ping('after the hold')), 'after the hold');
    assert.equal(redis.isDegraded, false);
    assert.deepEqual(lines, [], 'no outage logged');
  } finally {
    redis.close();
  }
});

test('a command asked before the first connection is ready, and answered from the fallback meanwhile, is never sent to Redis', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const timeout = 200;
  const { relay, redis, lines } = await loggedRedisThroughRelay(timeout, { stalled: true });
  const limiter = new RedisRateLimiter({ redis, keyPrefix: uniqueKeyPrefix() });
  try {
    const connected = once(redis.client, 'connect');
    const early = limiter.hit('k', 100, 60, T0);
    // The hit's timeout started before the handshake's; a hold before the socket is even made
    // spends the one fresh start the hit's timeout has (afterLoopTime), so that the hold below,
    // during the handshake Redis does not answer, ends the hit's timeout and restarts the
    // handshake's: the hit is answered from memory while its connection is still to be ready.
    holdEventLoop(timeout / 2);
    await connected;
    holdEventLoop(1.5 * timeout);
    assert.equal((await early).remaining, 99, 'answered from memory');
    assert.equal(redis.client.status, 'connect', 'the handshake is still under way');
    relay.resume();
    // The handshake answered.
    await until(() => redis.client.status === 'ready');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99, 'the hit answered from memory was not counted in Redis too');
    assert.deepEqual(lines, [], 'no outage: the connection was made in time, and the hit never went out');
  } finally {
    await limiter.close();
    redis.close();
    await relay.cut();
  }
});

test('closing the connection to a Redis that does not answer closes its socket at once: the process is not kept waiting for Redis to close its end', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  // Accepts connections and answers nothing, not even their end: a Redis frozen, or a network dropping packets.
  const silent = createServer({ allowHalfOpen: true }, (socket) => socket.on('error', () => {}));
  const accepted: Socket[] = [];
  silent.on('connection', (socket: Socket) => accepted.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { redis } = loggedRedis(`redis://127.0.0.1:${(silent.address() as { port: number }).port}`, 30_000);
  try {
    // Connected, the handshake unanswered.
    await until(() => redis.client.status === 'connect');
    const socket = redis.client.stream;
    redis.close();
    // Due after the timer closing sets to end the socket, when it does not wait for Redis (0 ms, set first).
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(socket.destroyed, true, 'the socket is closed, not left to ioredis\'s 2 s wait');
  } finally {
    redis.close();
    for (const socket of accepted) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test('a Redis that closes each connection before it is ready (at its client limit) is an outage: a command waiting for that connection is answered from the fallback when it closes, never sent', { timeout: 60_000 }, async () => {
  // What Redis does with a client over its `maxclients`: an error, then the end of the connection.
  const received: Buffer[] = [];
  const full = createServer((socket) => {
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => {});
    socket.end('-ERR max number of clients reached\r\n');
  });
  await new Promise<void>((resolve) => full.listen(0, '127.0.0.1', resolve));
  const { redis, lines } = loggedRedis(`redis://127.0.0.1:${(full.address() as { port: number }).port}`, 30_000);
  try {
    assert.equal(redis.client.status, 'connecting');
    let answered = false;
    const early = redis.ask(() => redis.client.incr('never-sent')).finally(() => (answered = true));
    // Answered once the connection closed, not after the 30 s command timeout.
    await until(() => answered);
    assert.equal(await early, undefined, 'answered from the fallback');
    assert.equal(redis.isDegraded, true);
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back']);
    assert.ok(!Buffer.concat(received).toString().includes('never-sent'), 'the command never went out');
  } finally {
    redis.close();
    await new Promise((resolve) => full.close(resolve));
  }
});

test('a command that waited for its connection has the whole command timeout for Redis\'s answer once sent: an answer in time is Redis\'s, not a stall', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  const timeout = 1000;
  const { relay, redis, lines } = await loggedRedisThroughRelay(timeout, { stalled: true });
  try {
    // Redis answers a BLPOP of an empty list when its own timeout ends (half the command's),
    // blocking only this connection.
    const asked = redis.ask(() => redis.client.blpop(`${uniqueKeyPrefix()}empty`, timeout / 2000));
    // The handshake, unanswered, holds the command back for most of its timeout (within the handshake's).
    await new Promise((resolve) => setTimeout(resolve, 0.7 * timeout));
    relay.resume();
    assert.equal(await asked, null, 'Redis\'s answer, not the fallback');
    assert.equal(redis.client.status, 'ready');
    assert.deepEqual(lines, [], 'no outage');
  } finally {
    redis.close();
    await relay.cut();
  }
});

/**
 * A port whose connections are never made: a process listens on it with the shortest accept
 * queue (backlog 1, which Linux takes as two connections; Node takes 0 for its default, 511) and
 * never accepts, its event loop held; once two connections fill that queue the kernel drops the
 * SYNs of the next ones, which stay pending, as behind a firewall that drops packets.
 */
async function unacceptedPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const listener = spawn(process.execPath, ['-e', `
    require('node:net').createServer().listen({ host: '127.0.0.1', port: 0, backlog: 1 }, function () {
      process.stdout.write(this.address().port + '\\n', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0));
    });`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(listener, 'exit');
  const [line] = (await once(listener.stdout!, 'data')) as [Buffer];
  const port = Number(line.toString().trim());
  const fillers = [connect(port, '127.0.0.1'), connect(port, '127.0.0.1')];
  for (const filler of fillers) {
    filler.on('error', () => {});
    await once(filler, 'connect');
  }
  return {
    port,
    close: async () => {
      for (const filler of fillers) filler.destroy();
      listener.kill('SIGKILL');
      await exited;
    },
  };
}

test('a connection that is never made is given up after the connect timeout, logged once as not made, and tried again; commands meanwhile answer from the fallback', { timeout: 60_000 }, async () => {
  const unaccepted = await unacceptedPort();
  const reasons: string[] = [];
  const lines: string[] = [];
  const logger: RedisLogger = {
    warn: (details, message) => {
      lines.push(`warn: ${message}`);
      reasons.push((details as { reason: string }).reason);
    },
    info: (_d, message) => lines.push(`info: ${message}`),
  };
  const redis = new GuardedRedis(`redis://127.0.0.1:${unaccepted.port}`, { logger, meanwhile: 'both fall back', commandTimeoutMs: 100 });
  let attempts = 0;
  redis.client.on('connecting', () => attempts++);
  try {
    assert.equal(await redis.ask(() => redis.client.incr('never-sent')), undefined, 'answered from the fallback');
    assert.equal(redis.client.status, 'connecting', 'the connection is still not made');
    // The connection is given up and tried again.
    await until(() => attempts >= 3);
    assert.equal(redis.isDegraded, true);
    assert.deepEqual(lines, ['warn: Redis unreachable; both fall back until it is back'], 'logged once');
    assert.deepEqual(reasons, ['connection not made']);
  } finally {
    redis.close();
    await unaccepted.close();
  }
});

test('a replica of Redis 6, whose scripts answer a write refused as ERR Error running script … -READONLY, is a replica: the start\'s check refuses it and, running, it is logged as one', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  // Answers as a Redis 6 replica does: a plain write READONLY, a script's write wrapped in the script's error.
  const replica = createServer((socket) => {
    socket.on('error', () => {});
    onCommands(socket, (name) => {
      if (name === 'EVAL' || name === 'EVALSHA') {
        socket.write('-ERR Error running script (call to f_0123456789abcdef0123456789abcdef01234567): @user_script:2: @user_script: 2: -READONLY You can\'t write against a read only replica.\r\n');
      } else if (name === 'SET') socket.write('-READONLY You can\'t write against a read only replica.\r\n');
      else socket.write('+OK\r\n');
    });
  });
  await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
  const url = `redis://127.0.0.1:${(replica.address() as { port: number }).port}`;
  const { lines, logger } = loggedLines();
  const redis = new GuardedRedis(url, { logger, uses: REDIS_USES });
  const limiter = new RedisRateLimiter({ redis, keyPrefix: uniqueKeyPrefix() });
  try {
    const checked = await checkRedisDatabase(url, REDIS_USES);
    assert.equal(checked.outcome === 'refused' && checked.refused, 'replica');
    assert.equal((await limiter.hit('k', 100, 60, T0)).remaining, 99);
    assert.deepEqual(lines, ['warn: REDIS_URL reaches a replica; rate limits count in memory per instance and DPoP proofs are recorded in the database until it reaches a primary']);
  } finally {
    await limiter.close();
    redis.close();
    await new Promise<void>((resolve) => replica.close(() => resolve()));
  }
});

test('a Dragonfly replica, whose ROLE answers "replica" where Redis answers "slave", is a replica: the start\'s check refuses it, even where it answers writes', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  // ROLE as Dragonfly's replica answers it (its docs, "ROLE"); every other command answered.
  const replica = createServer((socket) => {
    socket.on('error', () => {});
    onCommands(socket, (name) => {
      if (name === 'ROLE') socket.write('*4\r\n$7\r\nreplica\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n$11\r\nstable_sync\r\n');
      else socket.write('+OK\r\n');
    });
  });
  await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
  try {
    const checked = await checkRedisDatabase(`redis://127.0.0.1:${(replica.address() as { port: number }).port}`, REDIS_USES);
    assert.deepEqual(checked, { outcome: 'refused', refused: 'replica', reason: 'ROLE answers replica, of 127.0.0.1:6379', db: 0 });
  } finally {
    await new Promise<void>((resolve) => replica.close(() => resolve()));
  }
});

test('a Redis LOADING at start that then misses one check\'s time is still waited for and checked, not taken for gone: the check is not skipped', { skip: skipWithoutRedis, timeout: 60_000 }, async () => {
  // The first connection is answered LOADING, the second not at all (Redis between chunks of its
  // dataset), the ones after as a replica, which the check refuses.
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    socket.on('error', () => {});
    const connection = sockets.push(socket);
    onCommands(socket, (name) => {
      if (connection === 2) return;
      if (name === 'CLIENT') socket.write('+OK\r\n');
      else if (connection === 1) socket.write('-LOADING Redis is loading the dataset in memory\r\n');
      else if (name === 'SET') socket.write('-READONLY You can\'t write against a read only replica.\r\n');
      else socket.write(':1\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const checked = await checkRedisDatabase(`redis://127.0.0.1:${(server.address() as { port: number }).port}`, REDIS_USES);
    assert.equal(checked.outcome === 'refused' && checked.refused, 'replica', JSON.stringify(checked));
    assert.equal(sockets.length, 3);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
