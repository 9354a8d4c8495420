/**
 * Issue 35 item 3: PostgreSQL tells every listening instance when a statement has written a table
 * a page of posts reads (`posts`, `users`, `categories`), whoever sent it, so an instance may keep
 * a page it read until then (`PostgresChangeFeed`). A statement trigger notifies channel
 * `svc_community_changed` with the table's schema; PostgreSQL sends it when the transaction
 * commits, once per transaction however many statements sent the same one. SQLite needs nothing:
 * its `data_version` tells the same. Frozen in time: it takes `Kysely<any>` and imports nothing
 * from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

const TABLES = ['posts', 'users', 'categories'];

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`create function community_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_community_changed', tg_table_schema);
      return null;
    end $$`.execute(db);
  for (const table of TABLES) {
    await sql`create trigger ${sql.raw(`${table}_changed`)} after insert or update or delete or truncate on ${sql.table(table)}
      for each statement execute function community_changed()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  for (const table of TABLES) await sql`drop trigger ${sql.raw(`${table}_changed`)} on ${sql.table(table)}`.execute(db);
  await sql`drop function community_changed()`.execute(db);
}
