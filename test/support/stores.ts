/** The stores over a migrated test database, for a storage contract suite: opened before it, closed after. */
import { after, before } from 'node:test';
import type { Stores } from '../../src/core/stores.js';
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
