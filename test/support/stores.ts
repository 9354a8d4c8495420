/** The stores over a migrated test database, for a storage contract suite: opened before it, closed after. */
import { after, before } from 'node:test';
import type { PurgeOptions, Stores } from '../../src/core/stores.js';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { createStores } from '../../src/storage/stores.js';
import type { TestDatabase } from './databases.js';

/** Registers the suite's `before` and `after`; `use` receives the stores (and the handle) once they are open. */
export function storesForSuite(database: TestDatabase, use: (stores: Stores, handle: DatabaseHandle) => void): void {
  let handle: DatabaseHandle;
  before(async () => {
    handle = openDatabase(database.target);
    await migrateToLatest(handle.db);
    use(createStores(handle.db, handle.queries), handle);
  });
  after(() => handle.close());
}

const DAY = 86_400_000;

/**
 * The janitor's options as a deployment keeps them by default (a day of audit, a 30-day refresh
 * lifetime, 90 days of security log, the longest replay window and a minute), with a test's own
 * `overrides`.
 */
export function purgeOptions(overrides: Partial<PurgeOptions> = {}): PurgeOptions {
  return {
    auditWindowMs: DAY, batchSize: 500, grantLifetimeMs: 30 * DAY, deliveryMaxAgeMs: DAY, mailMaxAgeMs: DAY,
    securityLogWindowMs: 90 * DAY, selfRegisteredGraceMs: 30 * DAY, documentClientGraceMs: DAY, sealedAnswerMaxAgeMs: 300_000,
    ...overrides,
  };
}
