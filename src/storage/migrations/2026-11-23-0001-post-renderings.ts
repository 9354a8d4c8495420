/**
 * Issue 16: a post's excerpt and its page's HTML are made once, when the post is written, and
 * stored beside the body (INTERFACE section 7). Frozen in time: it takes `Kysely<any>` and imports
 * nothing from the application.
 *
 * The columns are nullable and start null for every existing post: making them needs the
 * application's Markdown renderer, which a frozen migration cannot hold. `migrateToLatest` fills
 * every post still without them with the current rules right after the migrations
 * (`fill-post-renderings.ts`), and again at every later start, so a post an older release writes
 * during a rolling upgrade gets them too. Both are written together, so the partial index of the
 * posts without an excerpt holds exactly the posts still waiting, and that look is free once done.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').addColumn('excerpt', 'text').execute();
  await db.schema.alterTable('posts').addColumn('body_html', 'text').execute();
  await db.schema.createIndex('posts_without_excerpt').on('posts').column('id')
    .where(sql<boolean>`excerpt is null`).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('posts_without_excerpt').execute();
  await db.schema.alterTable('posts').dropColumn('body_html').execute();
  await db.schema.alterTable('posts').dropColumn('excerpt').execute();
}
