/**
 * The service's connection to Redis (REDIS_URL), shared by the rate limiter and the DPoP replay
 * cache, with the guards both need: every command has a bounded timeout and is tried once; the
 * client reconnects for ever, at most every 2 s; and while Redis is known to be down its users are
 * told so (`usable`), so no request waits for a timeout, and each answers from its fallback (the
 * limiter from memory, the replay cache from the database) until the connection is ready again,
 * or, after a stall on a connection that stayed open, until Redis answers a command again. The
 * outage and the return are logged once each. ioredis is loaded on the first connection:
 * without REDIS_URL its modules never take memory (docs/performance.md, decision 19).
 */
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

export interface RedisLogger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface GuardedRedisOptions {
  /** Longest wait for one command, in milliseconds (500 when not given). */
  commandTimeoutMs?: number | undefined;
  logger?: RedisLogger | undefined;
  /** What the users of the connection do while Redis is away, for the log line. */
  meanwhile: string;
}

/**
 * How a user of Redis (the limiter, the replay cache) gets its connection: the service's shared
 * one (`redis`), or one of its own for `url` (tests, the command line), which it closes.
 */
export type RedisConnection = { redis: GuardedRedis } | { url: string; commandTimeoutMs?: number; logger?: RedisLogger };

/** The connection `options` names; `owned` when it is made here, for its user to close. */
export function connectionOf(options: RedisConnection, meanwhile: string): { redis: GuardedRedis; owned: boolean } {
  if ('redis' in options) return { redis: options.redis, owned: false };
  return { redis: new GuardedRedis(options.url, { meanwhile, commandTimeoutMs: options.commandTimeoutMs, logger: options.logger }), owned: true };
}

export class GuardedRedis {
  readonly client: Redis;
  private readonly logger: RedisLogger | undefined;
  private readonly meanwhile: string;
  private degraded = false;
  private everReady = false;
  private closed = false;

  constructor(url: string, options: GuardedRedisOptions) {
    const timeout = options.commandTimeoutMs ?? 500;
    this.logger = options.logger;
    this.meanwhile = options.meanwhile;
    const { Redis: Client } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    this.client = new Client(url, {
      commandTimeout: timeout,
      connectTimeout: Math.max(timeout, 1000),
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 100, 2000),
      // Commands issued in the same tick (concurrent requests) leave in one write (issue 8).
      enableAutoPipelining: true,
    });
    // Without a listener an unreachable Redis would crash the process with an unhandled 'error'.
    this.client.on('error', (error: Error) => this.failed(error));
    this.client.on('close', () => {
      if (this.everReady) this.failed(new Error('connection closed'));
    });
    this.client.on('ready', () => {
      this.everReady = true;
      this.recovered();
    });
  }

  /** False while Redis is known to be down: use the fallback without trying. */
  get usable(): boolean {
    return !this.degraded || this.client.status === 'ready';
  }

  /** Whether an outage was noticed and the connection is not back yet. */
  get isDegraded(): boolean {
    return this.degraded;
  }

  /** A command failed, or the connection did: the users fall back until it is ready again. */
  failed(error: unknown): void {
    if (this.degraded || this.closed) return;
    this.degraded = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger?.warn({ reason }, `Redis unreachable; ${this.meanwhile} until it is back`);
  }

  /**
   * Redis answered a command. After a timeout on a connection that stayed open (a stall, a slow
   * command) no 'ready' follows, so this is what ends that outage: without it `/readyz` would say
   * degraded, and the next real outage go unlogged, until the connection happened to be remade.
   */
  answered(): void {
    if (this.degraded && this.client.status === 'ready') this.recovered();
  }

  private recovered(): void {
    if (!this.degraded || this.closed) return;
    this.degraded = false;
    this.logger?.info({}, 'Redis is reachable again');
  }

  close(): void {
    this.closed = true;
    this.client.disconnect();
  }
}
