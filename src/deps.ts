/**
 * The one place that knows the concrete classes: database, stores, limiter, clock, metrics.
 * Everything else receives `Deps` (or the part of it that it needs).
 */
import type { Settings } from './config/settings.js';
import { DeviceCookies } from './core/device-cookies.js';
import { SEND_TIMEOUT_MS } from './core/logout/delivery.js';
import { KeyRing } from './core/oidc/key-ring.js';
import type { RateLimiter, Stores } from './core/ports.js';
import { SecurityLog } from './core/security/security-log.js';
import { type Clock, systemClock } from './core/time.js';
import { LogoutDeliveryWorker } from './logout-deliveries.js';
import { type Metrics, createMetrics } from './observability/metrics.js';
import { HttpLogoutSender } from './outbound/logout-sender.js';
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
  /** id_token signing keys and the JWKS, shared by every request. */
  readonly keys: KeyRing;
  /** Signs and reads the device cookies of sign-in throttling. */
  readonly deviceCookies: DeviceCookies;
  /** Sends the queued back-channel logouts while the app listens (`buildApp` starts and stops it). */
  readonly logoutDeliveries: LogoutDeliveryWorker;
  /** The accounts' security log; `buildApp` points its audit lines at the server log. */
  readonly securityLog: SecurityLog;
  /** Releases every connection; the process can then exit. */
  close(): Promise<void>;
}

export interface DepsOverrides {
  clock?: Clock;
  limiter?: RateLimiter;
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
  const keys = new KeyRing(stores, clock, settings.keysSecret);
  const metrics = createMetrics();
  const sender = new HttpLogoutSender({ allowPrivateAddresses: settings.backchannelAllowPrivate, timeoutMs: SEND_TIMEOUT_MS });
  return {
    settings,
    database,
    stores,
    clock,
    keys,
    deviceCookies: new DeviceCookies(stores.serverSecrets, clock),
    logoutDeliveries: new LogoutDeliveryWorker({ stores, clock, keys, settings, metrics }, sender, settings.logoutDeliveryIntervalSeconds * 1000),
    securityLog: new SecurityLog(stores.securityEvents, clock),
    limiter,
    metrics,
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
