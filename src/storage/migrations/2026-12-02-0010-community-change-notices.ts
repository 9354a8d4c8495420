/**
 * Issue 35 item 3: PostgreSQL tells every listening instance when a statement has written what a
 * page of posts shows of `posts`, `users` or `categories`, whoever sent it, so an instance may keep
 * a page it read until then (`PostgresChangeFeed`). A statement trigger notifies channel
 * `svc_community_changed` with the table's schema; PostgreSQL sends it when the transaction
 * commits, once per transaction however many statements sent the same one. The counts of likes,
 * comments and views are not announced: PostgreSQL serialises the commits that notify, across the
 * database, and a like is the commonest write (an instance keeps a page at most 5 s, so a count
 * shows within that). SQLite needs nothing: its `data_version` tells the same. Frozen in time: it
 * takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

/** Each table, and the columns of it a page of posts shows or is chosen by (an update of any other announces nothing). */
const WATCHED: Record<string, readonly string[] | undefined> = {
  posts: ['author_id', 'category_id', 'title', 'excerpt', 'status', 'created_at', 'updated_at'],
  users: ['username', 'nickname', 'status', 'published_posts'],
  categories: undefined,
};

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`create function community_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_community_changed', tg_table_schema);
      return null;
    end $$`.execute(db);
  for (const [table, columns] of Object.entries(WATCHED)) {
    const updates = columns === undefined ? sql`update` : sql`update of ${sql.join(columns.map((column) => sql.ref(column)))}`;
    await sql`create trigger ${sql.raw(`${table}_changed`)} after insert or delete or truncate or ${updates} on ${sql.table(table)}
      for each statement execute function community_changed()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  for (const table of Object.keys(WATCHED)) await sql`drop trigger ${sql.raw(`${table}_changed`)} on ${sql.table(table)}`.execute(db);
  await sql`drop function community_changed()`.execute(db);
}
