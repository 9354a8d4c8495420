/**
 * A migration on PostgreSQL waits for a table's lock a few seconds at a time
 * (`MIGRATION_LOCK_WAIT_MS`, src/storage/database.ts), and tries again (`migrateToLatest`): while a
 * statement waits for a lock every query of the table queues behind it, and attack95 saw each page
 * of the site a 503 for as long as another session kept its transaction open. And the migrations read
 * their own schema alone (`OwnSchemaPostgresDialect`), so other schemas' changes cannot fail them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { type DatabaseHandle, MIGRATION_LOCK_WAIT_MS, openDatabase } from '../../src/storage/database.js';
import { MIGRATION_NAMES, migrateTo, migrateToLatest } from '../../src/storage/migrate.js';
import { dropSchema, postgresUrl, withSearchPath } from '../support/databases.js';

/** The release before migration `2026-11-28-0030-bigint-counters`, which alters `posts`. */
const BEFORE = '2026-11-28-0020-mail-language';

describe('PostgreSQL migrations and other sessions\' locks', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set: PostgreSQL test skipped' }, () => {
  const schema = `t_${process.pid}_migration_locks`;
  let handle: DatabaseHandle;
  let admin: pg.Client;
  let holder: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: postgresUrl });
    holder = new pg.Client({ connectionString: postgresUrl });
    await Promise.all([admin.connect(), holder.connect()]);
    await admin.query(`create schema ${schema}`);
    handle = openDatabase({ kind: 'postgres', url: withSearchPath(postgresUrl!, schema) });
    await migrateTo(handle.db, BEFORE);
  });
  after(async () => {
    await handle.close();
    await dropSchema(admin, schema);
    await Promise.all([admin.end(), holder.end()]);
  });

  test('what the migrator reads of the database is the current schema alone: a table another schema drops meanwhile cannot fail a start', async () => {
    // Kysely's own reading looked up every schema's tables by name, and one dropped in that instant
    // failed a start's migrations with 'relation … does not exist' (CI, beside the other tests' schemas).
    const other = `t_${process.pid}_another_application`;
    await admin.query(`create schema ${other}; create table ${other}.items (id serial primary key)`);
    try {
      const tables = await handle.db.introspection.getTables({ withInternalKyselyTables: true });
      assert.deepEqual([...new Set(tables.map((table) => table.schema))], [schema]);
      assert.ok(tables.some((table) => table.name === 'kysely_migration'));
      const posts = tables.find((table) => table.name === 'posts')!;
      assert.deepEqual(posts.columns.find((column) => column.name === 'id'), {
        name: 'id', dataType: 'int4', dataTypeSchema: 'pg_catalog', isNullable: false, hasDefaultValue: false, isAutoIncrementing: true,
      });
      assert.ok(!(await handle.db.introspection.getTables()).some((table) => table.name.startsWith('kysely_')));
    } finally {
      await dropSchema(admin, other);
    }
  });

  test('a migration waiting for a table another session holds lets the site read it between tries, and is applied once the lock is let go', async () => {
    await holder.query('begin');
    await holder.query(`select count(*) from ${schema}.posts`);
    const migrating = handle.inMigrationTurn((db) => migrateToLatest(db));
    await new Promise((resolve) => setTimeout(resolve, 500));
    try {
      // Queued behind the migration's `alter table`, the read goes on when that wait ends; were the
      // wait endless, the read would be, until its own statement timeout failed it.
      await sql`select count(*) from posts`.execute(handle.db);
      await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_WAIT_MS));
    } finally {
      await holder.query('commit');
    }
    const { applied } = await migrating;
    assert.deepEqual(applied, MIGRATION_NAMES.filter((name) => name > BEFORE));
    const { rows } = await admin.query(`select data_type from information_schema.columns where table_schema = $1 and table_name = 'posts' and column_name = 'view_count'`, [schema]);
    assert.equal(rows[0].data_type, 'bigint');
  });
});
