/**
 * The one place that knows the concrete classes: database, stores, limiter, clock, metrics.
 * Everything else receives `Deps` (or the part of it that it needs).
 */
import type { Settings } from './config/settings.js';
import type { AuditSink } from './core/audit.js';
import { DeviceCookies } from './core/device-cookies.js';
import { KeyRing } from './core/oidc/key-ring.js';
import type { RateLimiter, Stores } from './core/ports.js';
import { type Clock, systemClock } from './core/time.js';
import { pinoAuditSink } from './observability/audit.js';
import { type Metrics, createMetrics } from './observability/metrics.js';
import pino from 'pino';
import { MemoryRateLimiter } from './ratelimit/memory.js';
import { RedisRateLimiter } from './ratelimit/redis.js';
import { type DatabaseHandle, openDatabase } from './storage/database.js';
import { migrateToLatest } from './storage/migrate.js';
import { createStores } from './storage/stores.js';

export interface Deps {
  readonly settings: Settings;
  readonly database: DatabaseHandle;
  readonly stores: Stores;
  readonly clock: Clock;
  readonly limiter: RateLimiter;
  readonly metrics: Metrics;
  /** Where audit events go (src/core/audit.ts): the log, as JSON lines. */
  readonly audit: AuditSink;
  /** id_token signing keys and the JWKS, shared by every request. */
  readonly keys: KeyRing;
  /** Signs and reads the device cookies of sign-in throttling. */
  readonly deviceCookies: DeviceCookies;
  /** Releases every connection; the process can then exit. */
  close(): Promise<void>;
}

export interface DepsOverrides {
  clock?: Clock;
  limiter?: RateLimiter;
  /** Standard output by default; the command line writes its events to standard error. */
  audit?: AuditSink;
}

/** Redis when REDIS_URL is set (counters shared by every instance), memory otherwise. */
function createLimiter(settings: Settings): RateLimiter {
  if (settings.redisUrl === undefined) return new MemoryRateLimiter();
  return new RedisRateLimiter({ url: settings.redisUrl, logger: pino({ level: settings.logLevel, name: 'ratelimit' }) });
}

export function createDeps(settings: Settings, overrides: DepsOverrides = {}): Deps {
  const database = openDatabase(settings.database);
  const stores = createStores(database.db, database.queries);
  const clock = overrides.clock ?? systemClock;
  const limiter = overrides.limiter ?? createLimiter(settings);
  return {
    settings,
    database,
    stores,
    clock,
    keys: new KeyRing(stores, clock, settings.keysSecret),
    deviceCookies: new DeviceCookies(stores.serverSecrets, clock),
    limiter,
    metrics: createMetrics(),
    audit: overrides.audit ?? pinoAuditSink({ logLevel: settings.logLevel, destination: 1 }),
    close: async () => {
      if (!overrides.limiter && limiter instanceof RedisRateLimiter) await limiter.close();
      await database.close();
    },
  };
}

/** Brings the schema up to date; says whether the database was new (nothing applied before). */
export async function prepareDatabase(deps: Deps): Promise<{ isNew: boolean }> {
  const { applied } = await migrateToLatest(deps.database.db);
  return { isNew: applied.includes('2026-11-22-0001-initial') };
}
