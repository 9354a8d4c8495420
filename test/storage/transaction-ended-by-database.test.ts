/**
 * A transaction the database ended by itself reports the error that ended it. SQLite rolls a
 * transaction back on its own when the disk is full (SQLITE_FULL, at a write or at COMMIT); the
 * ROLLBACK that followed failed with "cannot rollback - no transaction is active", and that
 * was what the request's log line said, never that the disk was full. A ROLLBACK sent inside the
 * work stands in here for the full disk, which a test cannot make.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { type DatabaseHandle, inTransaction } from '../../src/storage/database.js';
import { forEachDatabase } from '../support/databases.js';
import { storesForSuite } from '../support/stores.js';

class DiskFull extends Error {
  readonly code = 'SQLITE_FULL';
}

forEachDatabase('a transaction the database ended', (database) => {
  let handle: DatabaseHandle;
  storesForSuite(database, (_stores, h) => { handle = h; });

  test('the error that ended it is what the caller sees, and the connection serves the next one', async () => {
    await assert.rejects(
      inTransaction(handle.db, async (trx) => {
        await trx.insertInto('server_secrets').values({ name: 'lost', value: 'v', created_at: 1 }).execute();
        await sql`rollback`.execute(trx);
        throw new DiskFull('database or disk is full');
      }),
      (error: unknown) => error instanceof DiskFull,
    );

    await inTransaction(handle.db, (trx) => trx.insertInto('server_secrets').values({ name: 'kept', value: 'v', created_at: 1 }).execute());
    const names = (await handle.db.selectFrom('server_secrets').select('name').where('name', 'in', ['lost', 'kept']).execute()).map((r) => r.name);
    assert.deepEqual(names, ['kept']);
  });
});
