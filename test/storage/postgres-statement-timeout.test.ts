/**
 * PostgreSQL ends a statement before the pool stops waiting for it (`statement_timeout` under
 * `query_timeout`, src/storage/database.ts): a statement left running on the server after its
 * caller was told it failed would commit later (attack93: a flush of views added two and three
 * times) and hold the connection the pool lends out next. Migrations have no such limit: an
 * upgrade's index or count over large tables takes what it takes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { dropSchema, postgresUrl, withSearchPath } from '../support/databases.js';

describe('PostgreSQL statement timeout', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set: PostgreSQL test skipped' }, () => {
  const schema = `t_${process.pid}_timeout`;
  const table = 'locked';
  let handle: DatabaseHandle;
  let holder: pg.Client;
  before(async () => {
    holder = new pg.Client({ connectionString: postgresUrl });
    await holder.connect();
    await holder.query(`create schema ${schema}`);
    await holder.query(`create table ${schema}.${table} (n integer)`);
    handle = openDatabase({ kind: 'postgres', url: withSearchPath(postgresUrl!, schema) });
  });
  after(async () => {
    await handle.close();
    await dropSchema(holder, schema);
    await holder.end();
  });

  test('a statement waiting for a lock longer than the pool waits is ended by the server, and runs no more', async () => {
    await holder.query('begin');
    await holder.query(`lock table ${schema}.${table} in exclusive mode`);
    try {
      await assert.rejects(sql`insert into ${sql.table(table)} values (1)`.execute(handle.db), (error: { code?: string }) => error.code === '57014');
      const { rows } = await holder.query(`select count(*)::int as waiting from pg_stat_activity where state <> 'idle' and query like $1 and pid <> pg_backend_pid()`, [`insert into "${table}"%`]);
      assert.equal(rows[0].waiting, 0, 'nothing of it left on the server');
    } finally {
      await holder.query('commit');
    }
    const { rows } = await holder.query(`select count(*)::int as n from ${schema}.${table}`);
    assert.equal(rows[0].n, 0, 'and it never committed');
  });

  test('a statement of the migrations outlasts both limits of a request', async () => {
    const slept = await handle.inMigrationTurn(async (db) => {
      await sql`select pg_sleep(10.5)`.execute(db);
      return true;
    });
    assert.equal(slept, true);
  });
});
