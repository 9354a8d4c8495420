/**
 * The staff console (INTERFACE section 14): every account's role, the staff log, which the
 * service only ever appends to, the overview's daily figures, and whether staff verified an app. Triggers refuse an update or a delete of a log row on both
 * databases, so no code path (a repository, housekeeping, a later migration's slip) can rewrite
 * what staff did. The log names people by id and by the username they had then, with no foreign
 * key, so it outlives what it names.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.alterTable('users').addColumn('role', 'text', (c) => c.notNull().defaultTo('member')).execute();
  // Staff are few: the partial index lists them without reading every member.
  await db.schema.createIndex('users_staff').on('users').column('role').where(sql<boolean>`role <> 'member'`).execute();

  const table = db.schema.createTable('staff_log');
  await (sqlite
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity()))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // Who acted: an account, or the command line (`actor_id` null, `actor_name` "cli").
    .addColumn('actor_id', 'integer')
    .addColumn('actor_name', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    // On what: `member` (a user id), `app` (a client id) or `keys`; the name it had then.
    .addColumn('target_kind', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('target_name', 'text', (c) => c.notNull().defaultTo(''))
    // A small JSON object: what the action set (a status, a role); never a secret.
    .addColumn('detail', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('reason', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('staff_log_by_target').on('staff_log').columns(['target_kind', 'target_id', 'id']).execute();

  // The overview's counts, a row per day and figure, added to by each instance every few seconds.
  await db.schema.createTable('daily_figures')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('figure', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('daily_figures_pk', ['day', 'figure'])
    .execute();
  // An app staff marked verified: its consent page says "Verified by" the site. None is by default.
  await db.schema.alterTable('clients').addColumn('verified_at', 'bigint').execute();
  // An app's tokens of the last 24 hours, counted without a pass over every token.
  await db.schema.createIndex('access_tokens_by_client').on('access_tokens').columns(['client_id', 'created_at']).execute();
  // New members of the last days, read without a pass over every account.
  await db.schema.createIndex('users_created').on('users').column('created_at').execute();

  if (sqlite) {
    for (const operation of ['update', 'delete']) {
      await sql`create trigger ${sql.raw(`staff_log_no_${operation}`)} before ${sql.raw(operation)} on staff_log
        begin select raise(abort, 'the staff log is append-only'); end`.execute(db);
    }
  } else {
    await sql`create function staff_log_append_only() returns trigger language plpgsql as $$
      begin raise exception 'the staff log is append-only'; end $$`.execute(db);
    await sql`create trigger staff_log_append_only before update or delete on staff_log
      for each row execute function staff_log_append_only()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.dropIndex('users_created').execute();
  await db.schema.dropIndex('access_tokens_by_client').execute();
  await db.schema.alterTable('clients').dropColumn('verified_at').execute();
  await db.schema.dropTable('daily_figures').execute();
  await db.schema.dropTable('staff_log').execute();
  if (!sqlite) await sql`drop function staff_log_append_only()`.execute(db);
  await db.schema.dropIndex('users_staff').execute();
  await db.schema.alterTable('users').dropColumn('role').execute();
}
