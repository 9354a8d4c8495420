/**
 * Counters that can pass 2^31 - 1 become `bigint` on PostgreSQL, where `integer` is 32 bits and an
 * addition past it fails ("integer out of range"): the flush of views would then fail at every
 * turn, and keep the counts it could not write (src/count-flush.ts). SQLite's integers are 64 bits
 * already, so there it changes nothing. The driver reads `bigint` as a JS number
 * (`pgTypes`, src/storage/database.ts), exact up to 2^53, so the API still answers numbers.
 *
 * - `posts.view_count`: every page view adds one, with no row per view; a popular post can pass it.
 * - `users.xp`: the command line takes up to 15 digits (`optionalCount`), which SQLite stores and
 *   PostgreSQL refused.
 * Left `integer`, each bounded by rows whose ids are `integer` identities, so they cannot pass it
 * before those ids do: `posts.like_count` (one `post_likes` row per user), `posts.comment_count`
 * (one `comments` row each) and `users.published_posts` (one `posts` row each).
 *
 * On PostgreSQL each change rewrites its table and its indexes under an exclusive lock: reads and
 * writes of `posts` (and `users`) wait for it, for as long as a copy of the table takes.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter } from 'kysely';

const COUNTERS = [['posts', 'view_count'], ['users', 'xp']] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await changeType(db, 'bigint');
}

export async function down(db: Kysely<any>): Promise<void> {
  await changeType(db, 'integer');
}

async function changeType(db: Kysely<any>, type: 'bigint' | 'integer'): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  for (const [table, column] of COUNTERS) {
    await db.schema.alterTable(table).alterColumn(column, (c) => c.setDataType(type)).execute();
  }
}
