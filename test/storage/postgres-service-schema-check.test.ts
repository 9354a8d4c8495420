/**
 * The start's check that the current schema is the one holding the service's tables (attack
 * helper-74). Each test fails on the code of commit 8cbf510.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openDatabase } from '../../src/storage/database.js';
import { migrateToLatest, tablesSchema } from '../../src/storage/migrate.js';
import { dropSchema, postgresUrl, withSearchPath } from '../support/databases.js';

describe('PostgreSQL: the check for the service\'s schema', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set: PostgreSQL test skipped' }, () => {
  const prefix = `t_${process.pid}_${randomBytes(3).toString('hex')}`;
  const made: string[] = [];
  let admin: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
  });
  after(async () => {
    for (const name of made) await dropSchema(admin, name);
    await admin.end();
  });
  const migrate = async (url: string) => {
    const handle = openDatabase({ kind: 'postgres', url });
    try {
      await handle.inMigrationTurn((db) => migrateToLatest(db));
    } finally {
      await handle.close();
    }
  };

  test('a lock held on the deployment\'s kysely_migration does not let a start make a second, empty set of tables in a schema ahead of it', async () => {
    // The check reads each later schema's kysely_migration and takes any error as "not ours":
    // a VACUUM FULL, CLUSTER or LOCK TABLE on it for the 5 s of lock_timeout made the start
    // migrate the empty schema ahead, and serve an empty service from it.
    const home = `${prefix}_home`;
    const ahead = `${prefix}_ahead`;
    made.push(home, ahead);
    await admin.query(`create schema ${home}`);
    await migrate(withSearchPath(postgresUrl!, home));
    await admin.query(`create schema ${ahead}`);
    const holder = new pg.Client({ connectionString: postgresUrl });
    await holder.connect();
    try {
      await holder.query(`begin; lock table ${home}.kysely_migration in access exclusive mode`);
      await migrate(withSearchPath(postgresUrl!, `${ahead},${home}`)).catch(() => {});
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    const { rows } = await admin.query('select count(*)::int as tables from pg_tables where schemaname = $1', [ahead]);
    assert.equal(rows[0].tables, 0, `a start made ${rows[0].tables} tables in ${ahead} beside the deployment's in ${home}`);
  });

  test('the search path the refusal advises finds a schema whose name needs quoting', async () => {
    // The advice put the name in search_path unquoted: PostgreSQL folds it to lower case, and
    // the start then said no schema on the search path exists, and to create one.
    const home = `${prefix}_Quoted`;
    const ahead = `${prefix}_ahead2`;
    made.push(`"${home}"`, ahead);
    await admin.query(`create schema "${home}"`);
    await migrate(withSearchPath(postgresUrl!, `"${home}"`));
    await admin.query(`create schema ${ahead}`);
    const refusal = await migrate(withSearchPath(postgresUrl!, `${ahead},"${home}"`)).then(() => undefined, (error: Error) => error.message);
    const advised = /\(options=(\S+)\)$/.exec(refusal ?? '')?.[1];
    assert.ok(advised, `no search path advised: ${refusal}`);
    const url = new URL(postgresUrl!);
    url.searchParams.set('options', decodeURIComponent(advised));
    const handle = openDatabase({ kind: 'postgres', url: url.toString() });
    try {
      await handle.inMigrationTurn((db) => migrateToLatest(db));
      assert.equal(await tablesSchema(handle.db), home);
    } finally {
      await handle.close();
    }
  });
});
