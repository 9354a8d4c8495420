/**
 * The DPoP replay cache in Redis (with REDIS_URL): `SET key 1 NX PX ttl`, one round trip that of
 * racing instances exactly one wins. Commands have a bounded timeout; while Redis cannot be
 * reached the database's store answers (the same rule, one INSERT that fails on conflict), so a
 * dead Redis never fails a request and never lets a proof through twice from then on. A proof
 * recorded in Redis just before it went away could be accepted once more from the database
 * during the outage, within its few minutes of life: docs/oauth.md, "DPoP".
 */
import { Redis } from 'ioredis';
import type { DpopReplayStore } from '../core/ports.js';
import type { Instant } from '../core/time.js';

export interface ReplayLogger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface RedisReplayStoreOptions {
  url: string;
  /** Where claims go while Redis is away: the database's store. */
  fallback: DpopReplayStore;
  /** Prepended to every key; tests use a unique one per run. */
  keyPrefix?: string;
  commandTimeoutMs?: number;
  logger?: ReplayLogger;
}

export class RedisReplayStore implements DpopReplayStore {
  private readonly client: Redis;
  private readonly fallback: DpopReplayStore;
  private readonly keyPrefix: string;
  private readonly logger: ReplayLogger | undefined;
  private degraded = false;
  private closed = false;

  constructor(options: RedisReplayStoreOptions) {
    this.fallback = options.fallback;
    this.keyPrefix = options.keyPrefix ?? 'svc:dpop:';
    this.logger = options.logger;
    const timeout = options.commandTimeoutMs ?? 500;
    this.client = new Redis(options.url, {
      commandTimeout: timeout,
      connectTimeout: Math.max(timeout, 1000),
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 100, 2000),
      enableAutoPipelining: true,
    });
    this.client.on('error', (error: Error) => this.markDegraded(error));
    this.client.on('ready', () => {
      if (this.degraded) {
        this.degraded = false;
        this.logger?.info({}, 'DPoP replay cache: Redis is reachable again');
      }
    });
  }

  async claim(key: string, expiresAt: Instant, now: Instant): Promise<boolean> {
    if (this.degraded && this.client.status !== 'ready') return this.fallback.claim(key, expiresAt, now);
    try {
      const answer = await this.client.set(`${this.keyPrefix}${key}`, '1', 'PX', Math.max(1, expiresAt - now), 'NX');
      return answer === 'OK';
    } catch (error) {
      this.markDegraded(error);
      return this.fallback.claim(key, expiresAt, now);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.client.disconnect();
  }

  private markDegraded(error: unknown): void {
    if (this.degraded || this.closed) return;
    this.degraded = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger?.warn({ reason }, 'DPoP replay cache: Redis unreachable; recording proofs in the database until it is back');
  }
}
