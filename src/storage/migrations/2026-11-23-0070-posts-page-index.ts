/**
 * Issue 20: a covering index for `/me/posts`, an author's published posts in page order (newest
 * first, ties by id, INTERFACE section 7). It holds every column a page shows, so a page and its
 * count read this index alone and never a post's row with its body and rendered HTML; partial on
 * `status = 'published'`, so it holds only what the list shows. PostgreSQL carries the shown
 * columns as INCLUDE payload; SQLite, which has no INCLUDE, as trailing key columns.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

const SHOWN = sql.raw('category_id, title, excerpt, like_count, comment_count, view_count, updated_at');

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await (sqlite
    ? sql`create index posts_published_page on posts (author_id, created_at, id, ${SHOWN}) where status = 'published'`
    : sql`create index posts_published_page on posts (author_id, created_at, id) include (${SHOWN}) where status = 'published'`
  ).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('posts_published_page').execute();
}
