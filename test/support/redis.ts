/**
 * Redis for tests: TEST_REDIS_URL when set. Without it the Redis suites are skipped with a line
 * saying why; on CI (CI=true) a missing Redis is a failure, as for PostgreSQL.
 * Each run uses a key prefix of its own, so runs and suites never share counters.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { type Socket, connect, createServer } from 'node:net';
import { join } from 'node:path';
import type { RedisLogger } from '../../src/redis/connect.js';
import { freePort } from './ports.js';

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

/** `false` when `redis-server` and `redis-cli` can be run, for a Redis of a test's own; else the reason it is skipped. */
export const skipWithoutRedisServer: string | false = ['redis-server', 'redis-cli'].every((program) => spawnSync(program, ['--version']).status === 0) ? false
  : 'redis-server or redis-cli is not installed: tests of a Redis of their own skipped';

/** A Redis the test started (`scratchRedis`), on `port`, with nothing saved to disk. */
export interface ScratchRedis {
  port: number;
  /** Sends one command with `redis-cli`, authenticated with `password`; its answer. */
  command(password: string, ...args: string[]): string;
  stop(): Promise<void>;
}

/** Starts `redis-server` on a free port with `args` (`--requirepass x`), once it accepts connections. */
export function scratchRedis(...args: string[]): Promise<ScratchRedis> {
  return startRedisServer([], args);
}

/**
 * Starts Redis Sentinel on a free port, monitoring the primary on `primaryPort` (as `mymaster`):
 * its configuration is written in `dir`, which Sentinel rewrites.
 */
export function scratchSentinel(dir: string, primaryPort: number): Promise<ScratchRedis> {
  const config = join(dir, 'sentinel.conf');
  writeFileSync(config, `sentinel monitor mymaster 127.0.0.1 ${primaryPort} 1\n`);
  return startRedisServer([config, '--sentinel'], []);
}

/** `redis-server` with `leading` (a configuration file comes first), on a free port, then `args`. */
async function startRedisServer(leading: string[], args: string[]): Promise<ScratchRedis> {
  const port = await freePort();
  const server = spawn('redis-server', [...leading, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const stop = async () => {
    server.kill('SIGTERM');
    await exited;
  };
  for (let accepted = false; !accepted;) {
    accepted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true); });
      socket.on('error', () => setTimeout(() => resolve(false), 20));
    });
    if (!accepted && server.exitCode !== null) throw new Error(`redis-server exited (${server.exitCode})`);
  }
  return {
    port,
    stop,
    command: (password, ...command) => spawnSync('redis-cli', ['-p', String(port), '--no-auth-warning', '-a', password, ...command], { encoding: 'utf8' }).stdout.trim(),
  };
}

/** A command a `FakeRedis` was sent, with the connection it came on (0 the first). */
export interface FakeRedisCommand {
  connection: number;
  command: string[];
}

/** A server that speaks Redis's protocol (RESP) as a test makes it answer (`fakeRedis`). */
export interface FakeRedis {
  port: number;
  /** Every command sent so far, in order. */
  readonly sent: FakeRedisCommand[];
  /** How many connections the client closed so far. */
  closed(): number;
  stop(): Promise<void>;
}

/**
 * A Redis of the test's making on a free port, for what no Redis does on demand (a LOADING answer
 * to one connection, a replica's role to the next): `answer` gives the raw RESP reply to each
 * command of the connection numbered `connection` (0 the first).
 */
export async function fakeRedis(answer: (command: string[], connection: number) => string): Promise<FakeRedis> {
  const sent: FakeRedisCommand[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let closed = 0;
  const server = createServer((socket) => {
    const connection = connections++;
    sockets.add(socket);
    socket.on('close', () => { closed++; sockets.delete(socket); });
    socket.on('error', () => {});
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (let command = parseCommand(buffer); command !== undefined; command = parseCommand(buffer)) {
        buffer = buffer.subarray(command.length);
        sent.push({ connection, command: command.args });
        socket.write(answer(command.args, connection));
      }
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    sent,
    closed: () => closed,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The first whole command in `buffer` (an array of bulk strings, as clients send) and its length in bytes; `undefined` until it is all there. */
function parseCommand(buffer: Buffer): { args: string[]; length: number } | undefined {
  const line = (from: number) => {
    const end = buffer.indexOf('\r\n', from);
    return end === -1 ? undefined : { text: buffer.toString('latin1', from, end), next: end + 2 };
  };
  const head = line(0);
  if (head === undefined) return undefined;
  const args: string[] = [];
  let at = head.next;
  for (let i = 0; i < Number(head.text.slice(1)); i++) {
    const size = line(at);
    if (size === undefined) return undefined;
    const end = size.next + Number(size.text.slice(1));
    if (buffer.length < end + 2) return undefined;
    args.push(buffer.toString('utf8', size.next, end));
    at = end + 2;
  }
  return { args, length: at };
}

/** A `RedisLogger` that keeps each line it is told, in order, as `warn: …` or `info: …`. */
export function loggedLines(): { lines: string[]; logger: RedisLogger } {
  const lines: string[] = [];
  return { lines, logger: { warn: (_d, message) => lines.push(`warn: ${message}`), info: (_d, message) => lines.push(`info: ${message}`) } };
}
