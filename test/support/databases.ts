/**
 * Runs a suite once per database: embedded SQLite always, PostgreSQL when TEST_DATABASE_URL is
 * set (each suite in a fresh schema of its own, dropped afterwards). Without it the PostgreSQL
 * suite is skipped with a line saying why; on CI (CI=true) a missing database is a failure.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseTarget } from '../../src/config/settings.js';
import { SCHEMA_CHANGE_LOCK } from '../../src/storage/migrate.js';

export interface TestDatabase {
  readonly name: 'sqlite' | 'postgres';
  /** Valid inside tests and hooks, after the suite's `before` ran. */
  readonly target: DatabaseTarget;
  /** The same target as a DATABASE_URL, for child processes. */
  readonly url: string;
  /**
   * PostgreSQL: the suite's schema, which every connection to `url` also gives as its
   * `application_name`, so a test can tell the suite's backends in `pg_stat_activity` from those
   * of suites running beside it.
   */
  readonly schema?: string;
}

export const postgresUrl = process.env.TEST_DATABASE_URL;

if (!postgresUrl && process.env.CI === 'true') {
  throw new Error('TEST_DATABASE_URL is not set: on CI every PostgreSQL test must run');
}

/** A temporary SQLite file (a file, not :memory:, so child processes and WAL behave as in production). */
export function temporarySqlitePath(): string {
  return join(mkdtempSync(join(tmpdir(), 'svc-test-')), 'svc.sqlite');
}

/** A database in a fresh temporary SQLite file, for a suite that runs on SQLite alone (a browser's, the server's timeouts). */
export function temporarySqliteDatabase(): TestDatabase {
  const path = temporarySqlitePath();
  return { name: 'sqlite', target: { kind: 'sqlite', path }, url: `sqlite:${path}` };
}

/** `url` with every connection's search path set to `schema`. */
export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** Drops a test schema under the lock migrations hold, so no migrator is reading the catalog then. */
export async function dropSchema(admin: pg.Client, schema: string): Promise<void> {
  await admin.query('select pg_advisory_lock($1)', [SCHEMA_CHANGE_LOCK]);
  try {
    await admin.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await admin.query('select pg_advisory_unlock($1)', [SCHEMA_CHANGE_LOCK]);
  }
}

export function forEachDatabase(title: string, suite: (database: TestDatabase) => void): void {
  describe(`${title} [sqlite]`, () => {
    suite(temporarySqliteDatabase());
  });
  onPostgres(title, suite);
}

/**
 * Runs a suite on PostgreSQL alone, in a fresh schema of its own: for a rule only PostgreSQL can
 * break (a second connection between a read and a write), which SQLite's one writer rules out.
 */
export function onPostgres(title: string, suite: (database: TestDatabase) => void): void {
  const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  describe(`${title} [postgres]`, { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set: PostgreSQL suite skipped' }, () => {
    if (!postgresUrl) return;
    const named = new URL(withSearchPath(postgresUrl, schema));
    named.searchParams.set('application_name', schema);
    const url = named.toString();
    const admin = new pg.Client({ connectionString: postgresUrl });
    before(async () => {
      await admin.connect();
      await admin.query(`create schema ${schema}`);
    });
    after(async () => {
      await dropSchema(admin, schema);
      await admin.end();
    });
    suite({ name: 'postgres', target: { kind: 'postgres', url }, url, schema });
  });
}

/**
 * Runs `work` while every `statement` (an insert or an update) of `table` fails, as a statement
 * timeout or a lost connection would fail it: a trigger raising an error, dropped afterwards.
 */
export async function whileWritesFail<T>(db: Kysely<any>, database: TestDatabase, table: string, statement: 'insert' | 'update', work: () => Promise<T>): Promise<T> {
  const name = sql.raw(`refuse_${statement}_${table}`);
  const event = sql.raw(statement);
  if (database.name === 'sqlite') {
    await sql`create trigger ${name} before ${event} on ${sql.table(table)} begin select raise(abort, 'refused by the test'); end`.execute(db);
  } else {
    await sql`create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`.execute(db);
    await sql`create trigger ${name} before ${event} on ${sql.table(table)} for each row execute function ${name}()`.execute(db);
  }
  try {
    return await work();
  } finally {
    await sql`drop trigger ${name}${database.name === 'sqlite' ? sql`` : sql` on ${sql.table(table)}`}`.execute(db);
    if (database.name === 'postgres') await sql`drop function ${name}()`.execute(db);
  }
}

/** `whileWritesFail` for inserts. */
export function whileInsertsFail<T>(db: Kysely<any>, database: TestDatabase, table: string, work: () => Promise<T>): Promise<T> {
  return whileWritesFail(db, database, table, 'insert', work);
}

/**
 * A connection of another process to `database` (PostgreSQL) for the calling suite, opened in its
 * `before` and closed in its `after`: it holds rows, or revokes grants, while a request races it.
 * A test that leaves a transaction open rolls it back itself.
 */
export function outsideConnection(database: TestDatabase): () => pg.Client {
  let client: pg.Client | undefined;
  before(async () => {
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  after(() => client?.end());
  return () => client!;
}

/**
 * Resolves once another connection waits on a row written by `holder`'s open transaction (PostgreSQL):
 * a statement that has reached that row, not merely been sent. Fails after `timeoutMs`.
 */
export async function untilWaitedOn(holder: pg.Client, timeoutMs = 15_000): Promise<void> {
  for (const start = Date.now(); ;) {
    const { rows } = await holder.query<{ n: number }>(`select count(*)::int as n from pg_locks w join pg_locks h
      on h.locktype = 'transactionid' and h.transactionid = w.transactionid and h.granted and h.pid = pg_backend_pid() where not w.granted`);
    if (rows[0]!.n > 0) return;
    if (Date.now() - start > timeoutMs) throw new Error(`no connection waited on this transaction's rows in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Revokes grant `grantId` for `reason` in an open transaction of `holder` (PostgreSQL), sends
 * `request` meanwhile, and once its statement waits on the grant's row runs `meanwhile` (the
 * grant's erasure, say) and commits: the request's answer, which raced the revocation.
 */
export async function racingGrantRevocation(
  holder: pg.Client, grantId: number, reason: string, at: number, request: () => Promise<Response>, meanwhile: () => Promise<unknown> = async () => undefined,
): Promise<Response> {
  await holder.query('begin');
  try {
    await holder.query('update grants set revoked_at = $1, revoked_reason = $2 where id = $3', [at, reason, grantId]);
    const answer = request();
    await untilWaitedOn(holder);
    await meanwhile();
    await holder.query('commit');
    return await answer;
  } finally {
    await holder.query('rollback').catch(() => undefined);
  }
}
