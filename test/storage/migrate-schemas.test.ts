/**
 * Migrations on PostgreSQL land in the connection's own schema even when another schema is already
 * migrated, and starts that meet on a new database take turns, on PostgreSQL and on SQLite.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { prepareDatabase } from '../../src/base-deps.js';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { inSchemaTurn, MIGRATION_NAMES, migrateToLatest, SCHEMA_CHANGE_LOCK } from '../../src/storage/migrate.js';
import { dropSchema, temporarySqlitePath } from '../support/databases.js';

const postgresUrl = process.env.TEST_DATABASE_URL;

test('a new schema is migrated while another schema already holds the migration tables', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, async () => {
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  const schemas = [0, 1].map(() => `m_${randomBytes(4).toString('hex')}`);
  try {
    for (const schema of schemas) {
      await admin.query(`create schema ${schema}`);
      const url = new URL(postgresUrl!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const handle = openDatabase({ kind: 'postgres', url: url.toString() });
      try {
        assert.deepEqual(await migrateToLatest(handle.db), { applied: [...MIGRATION_NAMES] });
        assert.deepEqual(await migrateToLatest(handle.db), { applied: [] });
      } finally {
        await handle.close();
      }
    }
  } finally {
    for (const schema of schemas) await dropSchema(admin, schema);
    await admin.end();
  }
});

/**
 * Two starts on one new database, each with its own connections, as two instances have: the first
 * seeds while the second waits for the migrations' turn, then finds what the seed wrote and
 * seeds nothing (each seeds only what is not there, as a start seeds the demo only where no
 * account is).
 */
async function seededInTurn(first: DatabaseHandle, second: DatabaseHandle): Promise<void> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  const seededBy: string[] = [];
  const seedAs = (handle: DatabaseHandle, name: string, wait?: Promise<void>) => async () => {
    if (await handle.db.selectFrom('server_secrets').select('name').executeTakeFirst()) return;
    seededBy.push(name);
    await wait;
    await handle.db.insertInto('server_secrets').values({ name: 'seeded', value: `by the ${name} start`, created_at: 0 }).execute();
  };
  const firstStart = prepareDatabase({ database: first }, seedAs(first, 'first', gate));
  for (let waited = 0; seededBy.length === 0; waited += 10) {
    assert.ok(waited < 20_000, 'the first start seeds the new database');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  let secondDone = false;
  const secondStart = prepareDatabase({ database: second }, seedAs(second, 'second')).finally(() => { secondDone = true; });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(secondDone, false, 'the second start waits while the first seeds');
  release();
  await firstStart;
  await secondStart;
  assert.deepEqual(seededBy, ['first'], 'only the start that found nothing seeded');
  const rows = await second.db.selectFrom('server_secrets').select(['name', 'value']).execute();
  assert.deepEqual(rows, [{ name: 'seeded', value: 'by the first start' }], 'what the seed wrote is there when the second start goes on');
}

test('a new database is seeded in the migrations\' turn: a start at the same moment waits for the seed, and finds what it wrote', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, async () => {
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  const schema = `m_${randomBytes(4).toString('hex')}`;
  await admin.query(`create schema ${schema}`);
  const url = new URL(postgresUrl!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const [first, second] = [0, 1].map(() => openDatabase({ kind: 'postgres', url: url.toString() })) as [DatabaseHandle, DatabaseHandle];
  try {
    await seededInTurn(first, second);
  } finally {
    await first.close();
    await second.close();
    await dropSchema(admin, schema);
    await admin.end();
  }
});

test('a start waits for another\'s turn on PostgreSQL longer than a query may take: the turn is not one query the pool\'s timeout ends', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, async () => {
  const holder = new pg.Client({ connectionString: postgresUrl });
  await holder.connect();
  // A pool whose queries time out after 300 ms, as the service's do after 10 s (src/storage/database.ts).
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl, max: 1, query_timeout: 300 }) }) });
  try {
    await holder.query('select pg_advisory_lock($1)', [SCHEMA_CHANGE_LOCK]);
    let done = false;
    const waiting = inSchemaTurn(db, async () => 'my turn').finally(() => { done = true; });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(done, false, 'still waiting for the turn');
    await holder.query('select pg_advisory_unlock($1)', [SCHEMA_CHANGE_LOCK]);
    assert.equal(await waiting, 'my turn');
    const held = await holder.query('select count(*)::int as n from pg_locks where locktype = \'advisory\' and objid = $1', [SCHEMA_CHANGE_LOCK]);
    assert.equal(held.rows[0].n, 0, 'the turn is given back, and no wait is left behind');
  } finally {
    await db.destroy();
    await holder.end();
  }
});

test('a wait for another\'s turn on PostgreSQL ends when its stop is signalled, and gives its connection back', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, async () => {
  const holder = new pg.Client({ connectionString: postgresUrl });
  await holder.connect();
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl, max: 1 }) }) });
  try {
    await holder.query('select pg_advisory_lock($1)', [SCHEMA_CHANGE_LOCK]);
    const stop = new AbortController();
    let ran = false;
    const waiting = inSchemaTurn(db, async () => { ran = true; }, stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop.abort();
    await assert.rejects(Promise.race([waiting, new Promise((resolve) => setTimeout(resolve, 5000, 'still waiting 5 s later'))]), { name: 'AbortError' });
    assert.equal(ran, false);
    // The pool's one connection is free again: a query gets it while the turn is still held.
    assert.deepEqual((await sql<{ one: number }>`select 1 as one`.execute(db)).rows, [{ one: 1 }]);
  } finally {
    await holder.query('select pg_advisory_unlock($1)', [SCHEMA_CHANGE_LOCK]);
    await db.destroy();
    await holder.end();
  }
});

test('a new SQLite file is migrated and seeded in turns too: a start at the same moment waits for the seed, and finds what it wrote', async () => {
  const path = temporarySqlitePath();
  const [first, second] = [0, 1].map(() => openDatabase({ kind: 'sqlite', path })) as [DatabaseHandle, DatabaseHandle];
  try {
    await seededInTurn(first, second);
  } finally {
    await first.close();
    await second.close();
  }
});

test('on SQLite a start\'s migrations land all or none: one that fails (or a start killed midway) leaves none applied, and the next start applies them all', async () => {
  const path = temporarySqlitePath();
  const handle = openDatabase({ kind: 'sqlite', path });
  try {
    // A table a later migration creates, there already: that migration fails.
    await sql`create table mail_outbox (x integer)`.execute(handle.db);
    await assert.rejects(migrateToLatest(handle.db), /mail_outbox/);
    const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name = 'users'`.execute(handle.db);
    assert.deepEqual(tables.rows, [], 'the migrations before it were rolled back with it');
    assert.deepEqual((await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(handle.db)).rows, [{ n: 0 }]);
    await sql`drop table mail_outbox`.execute(handle.db);
    assert.deepEqual(await migrateToLatest(handle.db), { applied: [...MIGRATION_NAMES] });
  } finally {
    await handle.close();
  }
});
