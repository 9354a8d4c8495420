/**
 * The data step of migration 2026-11-23-0001-post-renderings: every post without its excerpt and
 * HTML (one written before the columns existed, or by an older release during a rolling upgrade)
 * gets what `writePost` would have made. Runs after the migrations on every start; when nothing
 * is missing it is one look into an empty partial index.
 */
import type { Kysely } from 'kysely';
import { renderOlderBody } from '../core/community/posts.js';
import type { Database } from './schema.js';

/** Posts per transaction: a few megabytes of bodies at most, and no long write lock on SQLite. */
const BATCH = 100;

/** Fills every missing excerpt and HTML; returns how many posts it filled. */
export async function fillMissingRenderings(db: Kysely<Database>): Promise<number> {
  let filled = 0;
  for (;;) {
    const made = await db.transaction().execute(async (trx) => {
      const rows = await trx.selectFrom('posts').select(['id', 'body'])
        .where('excerpt', 'is', null).orderBy('id').limit(BATCH).execute();
      for (const { id, body } of rows) {
        const { excerpt, html } = renderOlderBody(body);
        await trx.updateTable('posts').set({ excerpt, body_html: html }).where('id', '=', id).execute();
      }
      return rows.length;
    });
    filled += made;
    if (made < BATCH) return filled;
  }
}
