/**
 * The DPoP replay cache in Redis (with REDIS_URL): `SET key 1 NX PX ttl`, one round trip that of
 * racing instances exactly one wins. Commands have a bounded timeout; while Redis cannot be
 * reached the database's store answers (the same rule, one INSERT that fails on conflict), so a
 * dead Redis never fails a request and never lets a proof through twice from then on. A proof
 * recorded in Redis just before it went away could be accepted once more from the database
 * during the outage, within its few minutes of life: docs/oauth.md, "DPoP". The other way is
 * closed: until the last proof the database accepted has expired, a claim Redis accepts is
 * also claimed in the database, so a proof accepted during the outage is not accepted again by
 * this instance once Redis is back.
 */
import { type GuardedRedis, type RedisConnection, connectionOf } from '../redis/connect.js';
import type { DpopReplayStore } from '../core/ports.js';
import type { Instant } from '../core/time.js';

/** The cache's connection (`RedisConnection`); either way claims go to `fallback` while Redis is away. */
export type RedisReplayStoreOptions = {
  /** Where claims go while Redis is away: the database's store. */
  fallback: DpopReplayStore;
  /** Prepended to every key; tests use a unique one per run. */
  keyPrefix?: string;
} & RedisConnection;

export class RedisReplayStore implements DpopReplayStore {
  private readonly redis: GuardedRedis;
  private readonly ownsConnection: boolean;
  private readonly fallback: DpopReplayStore;
  private readonly keyPrefix: string;
  /**
   * Until when a proof accepted from the database (while Redis was away) could still be replayed:
   * Redis does not know those proofs, so until then a claim Redis accepts must be accepted by
   * the database too.
   */
  private databaseUntil = 0;

  constructor(options: RedisReplayStoreOptions) {
    this.fallback = options.fallback;
    this.keyPrefix = options.keyPrefix ?? 'svc:dpop:';
    ({ redis: this.redis, owned: this.ownsConnection } = connectionOf(options, 'DPoP proofs are recorded in the database'));
  }

  async claim(key: string, expiresAt: Instant, now: Instant): Promise<boolean> {
    const answer = await this.redis.ask(() => this.redis.client.set(`${this.keyPrefix}${key}`, '1', 'PX', Math.max(1, expiresAt - now), 'NX'));
    if (answer === undefined) return this.claimInDatabase(key, expiresAt, now);
    if (answer !== 'OK') return false;
    return now < this.databaseUntil ? this.fallback.claim(key, expiresAt, now) : true;
  }

  private claimInDatabase(key: string, expiresAt: Instant, now: Instant): Promise<boolean> {
    this.databaseUntil = Math.max(this.databaseUntil, expiresAt);
    return this.fallback.claim(key, expiresAt, now);
  }

  async close(): Promise<void> {
    if (this.ownsConnection) this.redis.close();
  }
}
