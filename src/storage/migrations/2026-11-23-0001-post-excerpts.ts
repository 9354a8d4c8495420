/**
 * Issue 16: a post's excerpt is made once, when the post is written, and stored beside the body
 * (INTERFACE section 7). Frozen in time: it takes `Kysely<any>` and imports nothing from the
 * application.
 *
 * The column is nullable and starts null for every existing post: making an excerpt needs the
 * application's Markdown renderer, which a frozen migration cannot hold. `migrateToLatest` fills
 * every null excerpt with the current rule right after the migrations (`fill-excerpts.ts`), and
 * again at every later start, so a post an older release writes during a rolling upgrade gets
 * one too. The partial index holds only the posts still waiting, so that look is free once done.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').addColumn('excerpt', 'text').execute();
  await db.schema.createIndex('posts_without_excerpt').on('posts').column('id')
    .where(sql<boolean>`excerpt is null`).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('posts_without_excerpt').execute();
  await db.schema.alterTable('posts').dropColumn('excerpt').execute();
}
