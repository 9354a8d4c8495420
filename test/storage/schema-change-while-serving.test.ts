/**
 * A rolling upgrade: the next release migrates the database while this one serves. A column it
 * adds must not break this release's statements, `select *` and `returning *` included, whether
 * they run alone or inside a transaction. On PostgreSQL, each pooled connection had prepared
 * them, and PostgreSQL refuses a prepared statement whose result columns changed ("cached plan
 * must not change result type") on every use, so every token request failed until the instance
 * was stopped.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { type DatabaseHandle, inTransaction, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { forEachDatabase } from '../support/databases.js';

forEachDatabase('a column added by a newer release while this one serves', (database) => {
  let serving: DatabaseHandle;
  let newer: DatabaseHandle;

  before(async () => {
    serving = openDatabase(database.target);
    newer = openDatabase(database.target);
    await migrateToLatest(serving.db);
    await serving.db.insertInto('server_secrets').values({ name: 'rolling', value: 'v', created_at: 1 }).execute();
  });

  after(async () => {
    await serving.close();
    await newer.close();
  });

  const readAlone = () => serving.db.selectFrom('server_secrets').selectAll().where('name', '=', 'rolling').executeTakeFirstOrThrow();
  const readInTransaction = () => inTransaction(serving.db, async (trx) => {
    // Held a moment, so that concurrent transactions each take a pooled connection of their own.
    if (database.name === 'postgres') await sql`select pg_sleep(0.02)`.execute(trx);
    return trx.selectFrom('server_secrets').selectAll().where('name', '=', 'rolling').executeTakeFirstOrThrow();
  });
  const everyWay = () => Promise.all([
    ...Array.from({ length: 10 }, readInTransaction),
    ...Array.from({ length: 10 }, readAlone),
  ]);

  test('this release\'s statements keep answering, alone and in transactions, on every connection', async () => {
    // Prepared on every connection of the pool, as a serving instance has them.
    for (const row of await everyWay()) assert.equal(row.value, 'v');

    await sql`alter table server_secrets add column later_release text`.execute(newer.db);

    for (const row of await everyWay()) assert.equal(row.value, 'v');
    for (const row of await everyWay()) assert.equal(row.value, 'v');
  });
});
