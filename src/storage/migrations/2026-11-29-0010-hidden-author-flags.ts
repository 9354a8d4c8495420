/**
 * The home page's recent posts without walking a hidden member's (docs/performance.md, decision 57).
 *
 * - `posts.author_hidden`: 1 once a background pass (`syncHiddenFlags`) has marked the post of a
 *   member who is not active. Only an accelerator: the home page still joins the author's
 *   `users.status`, so a post is never shown or hidden by the flag alone.
 * - `users.posts_flagged`: how far the passes have brought the member's posts: `none` (no post of
 *   theirs is flagged), `some` (a pass is under way, either way), `all` (every post they had when
 *   the last pass ended is flagged). A post is flagged only while its author's value is not `none`.
 * - `posts_recent_shown`: the published posts not flagged, newest last; the home page walks it.
 * - `posts_author_flag`: a member's posts by flag, for the passes and for the posts of a member
 *   made active again whose flags are not yet cleared.
 * - `users_post_flags_due`: the members a pass has work for (their status and their posts' flags
 *   disagree); the home page also reads it for the members made active again meanwhile.
 *
 * No trigger: a status change is the one-row write it was (the 2026-11-28-0050 attempt rewrote a
 * member's every post inside it, and was backed out). The columns are added with constant
 * defaults, which neither database rewrites the table for; members already hidden are due, and
 * the passes flag their posts after the start, in batches.
 * `posts_recent` (status, created_at, id) goes: the home page was its one reader, and beside it
 * SQLite's planner, which has no statistics here, walked it rather than `posts_recent_shown`. A
 * release before this one then sorts every published post for its home page, until it stops.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.alterTable('posts')
    .addColumn('author_hidden', sqlite ? 'integer' : 'smallint', (c) => c.notNull().defaultTo(0)).execute();
  await sql`create index posts_recent_shown on posts (created_at, id) where status = 'published' and author_hidden = 0`.execute(db);
  await db.schema.dropIndex('posts_recent').execute();
  await db.schema.createIndex('posts_author_flag').on('posts').columns(['author_id', 'author_hidden', 'created_at', 'id']).execute();
  // The new column's statistics now: without them PostgreSQL planned the home page's run of members
  // made active again on default selectivities, a read of every post at each view (16 ms at 100,000
  // posts, 1 s with a member of 50,000 flagged posts made active again), until autovacuum next
  // analyzed posts, which on a large site that mostly reads is days away (attack79). A sample of
  // 30,000 rows: a fraction of a second, under the lock the migration holds already,
  // before users is altered (`users` is analyzed after its own steps).
  if (!sqlite) await sql`analyze posts`.execute(db);
  // `users` last: on PostgreSQL its `alter table` holds the table exclusively until the migrations
  // commit, so altered first every read of users (each signed-in request) waited for both index
  // builds over every post (0.4 s at 100,000 posts; attack79).
  await db.schema.alterTable('users')
    .addColumn('posts_flagged', 'text', (c) => c.notNull().defaultTo('none')).execute();
  await sql`create index users_post_flags_due on users (id)
    where (status = 'active' and posts_flagged <> 'none') or (status <> 'active' and posts_flagged <> 'all')`.execute(db);
  if (!sqlite) await sql`analyze users`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('posts_recent').on('posts').columns(['status', 'created_at', 'id']).execute();
  for (const index of ['users_post_flags_due', 'posts_author_flag', 'posts_recent_shown']) await db.schema.dropIndex(index).execute();
  await db.schema.alterTable('users').dropColumn('posts_flagged').execute();
  await db.schema.alterTable('posts').dropColumn('author_hidden').execute();
}
