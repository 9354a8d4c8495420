/**
 * The DPoP replay cache in Redis (with REDIS_URL): `SET key 1 NX PX ttl`, one round trip that of
 * racing instances exactly one wins. Commands have a bounded timeout; while Redis cannot be
 * reached the database's store answers (the same rule, one INSERT that fails on conflict), so a
 * dead Redis never fails a request and never lets a proof through twice from then on. A proof
 * recorded in Redis just before it went away could be accepted once more from the database
 * during the outage, within its few minutes of life: docs/oauth.md, "DPoP". The other way is
 * closed: until the last proof the database accepted has expired, a claim Redis accepts is
 * also claimed in the database, so a proof accepted during the outage is not accepted again by
 * this instance once Redis is back; and then the proofs it accepted from the database are
 * recorded in Redis too, so no other instance, which may never have lost Redis and so never asks
 * the database, accepts them again either. Only during the outage itself can another instance
 * still accept a proof this one took from the database.
 */
import { type GuardedRedis, type RedisConnection, type RedisUse, connectionOf } from '../redis/connect.js';
import type { DpopReplayStore } from '../core/oauth/ports.js';
import type { Instant } from '../core/time.js';

/** Proofs accepted from the database that wait for Redis to be back, at most: a long outage keeps the newest. */
const UNPUBLISHED_MAX = 100_000;
/** Proofs told to Redis per write when it is back. */
const PUBLISH_BATCH = 500;

/** What the cache sends Redis (`RedisUse`): its claim, on a key of its names that expires within a second. */
export const replayUse: RedisUse = {
  name: 'the DPoP replay cache',
  meanwhile: 'DPoP proofs are recorded in the database',
  send: (client) => [client.set('svc:dpop:start-check', '1', 'PX', 1000, 'NX')],
};

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
  /**
   * The proofs accepted from the database that Redis does not know yet, with when each expires,
   * oldest first: told to Redis once it is back (`publish`), so other instances refuse them too.
   */
  private readonly unpublished = new Map<string, Instant>();
  /** The latest `now` of a claim: the clock `publish` counts the proofs' remaining life by. */
  private latest = 0;
  private readonly stopListening: () => void;

  constructor(options: RedisReplayStoreOptions) {
    this.fallback = options.fallback;
    this.keyPrefix = options.keyPrefix ?? 'svc:dpop:';
    ({ redis: this.redis, owned: this.ownsConnection } = connectionOf(options, replayUse));
    this.stopListening = this.redis.onRecovered(() => void this.publish());
  }

  async claim(key: string, expiresAt: Instant, now: Instant): Promise<boolean> {
    this.latest = Math.max(this.latest, now);
    const answer = await this.redis.ask(() => this.redis.client.set(`${this.keyPrefix}${key}`, '1', 'PX', Math.max(1, expiresAt - now), 'NX'), replayUse);
    if (answer === undefined) return this.claimInDatabase(key, expiresAt, now);
    if (answer !== 'OK') return false;
    return now < this.databaseUntil ? this.fallback.claim(key, expiresAt, now) : true;
  }

  private async claimInDatabase(key: string, expiresAt: Instant, now: Instant): Promise<boolean> {
    this.databaseUntil = Math.max(this.databaseUntil, expiresAt);
    const accepted = await this.fallback.claim(key, expiresAt, now);
    if (accepted) {
      for (const [oldest, until] of this.unpublished) {
        if (until > now && this.unpublished.size < UNPUBLISHED_MAX) break;
        this.unpublished.delete(oldest);
      }
      this.unpublished.set(key, expiresAt);
    }
    return accepted;
  }

  /**
   * Records in Redis the proofs the database accepted while it was away and that are still alive,
   * a few hundred to a write: all at once, a long outage's many could outlast the command timeout
   * and drop the connection they were meant for.
   */
  private async publish(): Promise<void> {
    const now = this.latest;
    const alive: Array<[string, Instant]> = [];
    for (const [key, expiresAt] of this.unpublished) {
      if (expiresAt > now) alive.push([key, expiresAt]);
      else this.unpublished.delete(key);
    }
    for (let i = 0; i < alive.length; i += PUBLISH_BATCH) {
      const answers = await Promise.all(alive.slice(i, i + PUBLISH_BATCH).map(async ([key, expiresAt]) => {
        const answer = await this.redis.ask(() => this.redis.client.set(`${this.keyPrefix}${key}`, '1', 'PX', expiresAt - now, 'NX'), replayUse);
        if (answer !== undefined) this.unpublished.delete(key);
        return answer;
      }));
      // Unanswered: Redis is away again, and its next return publishes the rest.
      if (answers.includes(undefined)) return;
    }
  }

  async close(): Promise<void> {
    this.stopListening();
    if (this.ownsConnection) this.redis.close();
  }
}
