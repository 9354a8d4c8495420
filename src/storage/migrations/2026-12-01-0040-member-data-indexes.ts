/**
 * A member's comments and likes by the member: the download of their data (docs/site.md,
 * "Downloading your data") reads them by author and by user, which the tables' keys and
 * `comments_by_post` order by post, so each download walked every comment and like of the site.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('comments_by_author').on('comments').columns(['author_id', 'created_at']).execute();
  await db.schema.createIndex('post_likes_by_user').on('post_likes').columns(['user_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('post_likes_by_user').execute();
  await db.schema.dropIndex('comments_by_author').execute();
}
