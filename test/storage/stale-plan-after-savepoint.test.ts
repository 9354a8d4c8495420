/**
 * A savepoint rolled back to leaves the transaction open: a statement made stale by a newer
 * release's migration after it has aborted that transaction, so it must not be sent again inside
 * it ("current transaction is aborted", 25P02, which nothing runs again) but reach `inTransaction`,
 * which runs the transaction again. `withNamedStatements` took `rollback to savepoint` for the
 * end of the transaction.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { type DatabaseHandle, inTransaction, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { forEachDatabase } from '../support/databases.js';

forEachDatabase('a stale statement after a savepoint', (database) => {
  let serving: DatabaseHandle;
  let newer: DatabaseHandle;

  before(async () => {
    serving = openDatabase(database.target, { poolSize: 1 });
    newer = openDatabase(database.target);
    await migrateToLatest(newer.db);
    await serving.db.insertInto('server_secrets').values({ name: 'savepoint', value: 'v', created_at: 1 }).execute();
  });

  after(async () => {
    await serving.close();
    await newer.close();
  });

  const read = (db: DatabaseHandle['db']) =>
    db.selectFrom('server_secrets').selectAll().where('name', '=', 'savepoint').executeTakeFirstOrThrow();

  test('the transaction is run again, not refused as aborted', async () => {
    assert.equal((await read(serving.db)).value, 'v');
    await sql`alter table server_secrets add column later_release text`.execute(newer.db);
    let attempts = 0;
    const row = await inTransaction(serving.db, async (trx) => {
      attempts++;
      await sql`savepoint before_read`.execute(trx);
      await sql`rollback to savepoint before_read`.execute(trx);
      return read(trx);
    });
    assert.equal(row.value, 'v');
    assert.equal(attempts, database.name === 'postgres' ? 2 : 1);
  });
});
