/**
 * The part of `Deps` that everything touching the database needs, and nothing more: settings, the
 * database and its stores, the clock, the audit sink. `createDeps` (src/deps.ts) adds what the
 * server needs besides (limiter, metrics, signing keys, device cookies); the command line runs on
 * this alone, so a command loads neither the metrics nor the Redis client (issue 21: ≤ 1.5 s).
 */
import type { Settings } from './config/settings.js';
import type { AuditSink } from './core/audit.js';
import type { Stores } from './core/stores.js';
import { checkStoredSecretsOpen, withSealedServerSecrets } from './core/credentials/secrets-at-rest.js';
import { SharedKeys } from './core/credentials/shared-keys.js';
import { TokenMarks } from './core/credentials/token-marks.js';
import { checkKeysSealedAlike } from './core/oidc/keys.js';
import { type Clock, systemClock } from './core/time.js';
import { pinoAuditSink } from './observability/audit.js';
import { type DatabaseHandle, openDatabase } from './storage/database.js';
import { inSchemaTurn, migrateToLatest } from './storage/migrate.js';
import { createStores } from './storage/stores.js';

export interface BaseDeps {
  readonly settings: Settings;
  readonly database: DatabaseHandle;
  readonly stores: Stores;
  readonly clock: Clock;
  /** Where audit events go (src/core/audit.ts): the log, as JSON lines. */
  readonly audit: AuditSink;
  /** The HMAC keys every instance shares (src/core/credentials/shared-keys.ts). */
  readonly sharedKeys: SharedKeys;
  /** The service's mark in the access and personal tokens it issues (src/core/credentials/token-marks.ts). */
  readonly tokenMarks: TokenMarks;
  /** Releases every connection; the process can then exit. */
  close(): Promise<void>;
}

export interface BaseDepsOverrides {
  clock?: Clock;
  /** Standard output by default; the command line writes its events to standard error. */
  audit?: AuditSink;
}

export function createBaseDeps(settings: Settings, overrides: BaseDepsOverrides = {}): BaseDeps {
  const database = openDatabase(settings.database);
  const stores = withSealedServerSecrets(createStores(database.db, database.queries), settings.keysSecret);
  const clock = overrides.clock ?? systemClock;
  const sharedKeys = new SharedKeys(stores.serverSecrets, clock);
  return {
    settings,
    database,
    stores,
    clock,
    sharedKeys,
    tokenMarks: new TokenMarks(sharedKeys),
    audit: overrides.audit ?? pinoAuditSink({ logLevel: settings.logLevel, destination: 1 }),
    close: () => database.close(),
  };
}

/**
 * Brings the schema up to date. `seed` runs after the migrations inside their turn (an advisory
 * lock on PostgreSQL, a lock file beside a SQLite file), so an instance starting at the same
 * moment waits for it and finds what it wrote; it decides for itself whether there is anything
 * to seed.
 */
export async function prepareDatabase(deps: Pick<BaseDeps, 'database'>, seed?: () => Promise<void>): Promise<void> {
  await deps.database.inMigrationTurn((db) => migrateToLatest(db, seed));
}

/**
 * Runs `work` in the same turn as `prepareDatabase`'s, with nothing to migrate: starting instances
 * wait for each other's. `stop` ends a wait on PostgreSQL (`inSchemaTurn`); SQLite's for the lock
 * file holds no connection a stop waits for.
 */
export async function inStartTurn<T>(deps: Pick<BaseDeps, 'database'>, work: () => Promise<T>, stop?: AbortSignal): Promise<T> {
  return deps.database.inMigrationTurn((db) => inSchemaTurn(db, work, stop));
}

/**
 * Reads the shared HMAC keys for a command that uses one (`svc token create`'s token mark), as a
 * start does: in the start turn, after the start's check that KEYS_SECRET opens what is stored,
 * and `keys rotate`'s that the servers run with it (`checkKeysSealedAlike`: a key made sealed among
 * plain ones would refuse the servers' next start, attack138 F7). On a database no server has
 * started on yet, the command makes them. Outside the turn, a command under another KEYS_SECRET
 * could make one between a starting server's check and its own read of the keys, and the
 * database would hold secrets under two (attack136 F1).
 */
export async function readSharedKeysInStartTurn(deps: Pick<BaseDeps, 'database' | 'stores' | 'settings' | 'sharedKeys'>): Promise<void> {
  const { keysSecret } = deps.settings;
  await inStartTurn(deps, async () => {
    await checkStoredSecretsOpen(deps.stores, keysSecret);
    await checkKeysSealedAlike(deps.stores, keysSecret);
    await deps.sharedKeys.readAll();
  });
}
