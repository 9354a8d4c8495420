/**
 * Redis for tests: TEST_REDIS_URL when set. Without it the Redis suites are skipped with a line
 * saying why; on CI (CI=true) a missing Redis is a failure, as for PostgreSQL.
 * Each run uses a key prefix of its own, so runs and suites never share counters.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
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
export async function scratchRedis(...args: string[]): Promise<ScratchRedis> {
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' });
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
