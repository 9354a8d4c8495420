/**
 * The data step of migration 2026-11-23-0090-avatar-metadata: every avatar not yet checked (stored
 * before the rule, or replaced by an older release during a rolling upgrade) loses its metadata
 * as an upload now does (`withoutMetadata`). Runs after the migrations on every start; when
 * nothing is left it is one look into an empty partial index.
 *
 * An image whose structure does not hold (a phone photo cut short, which browsers still show) is
 * removed: its metadata cannot be taken out, so leaving it would go on publishing the GPS position
 * it may hold, and an upload of the same file is refused anyway; its user gets the default avatar
 * and may upload again. A start never fails on one. A cleaned or removed image moves its user's
 * `updated_at`, the version in the pages' address of the avatar (`avatarSrc`), so no page points
 * any longer at the address under which the old bytes were cached for a year.
 */
import { type Kysely, sql } from 'kysely';
import { detectImageType } from '../core/avatars.js';
import { withoutMetadata } from '../core/image-metadata.js';
import type { Database } from './schema.js';

/** Avatars per transaction: at most 512 KB each, so a few megabytes, and no long write lock on SQLite. */
const BATCH = 20;

export interface AvatarCleaning {
  /** Avatars whose metadata was taken out. */
  stripped: number;
  /** Avatars that held none: only marked checked. */
  unchanged: number;
  /** Avatars whose structure does not hold (or that are no image this service takes): removed. */
  damaged: number;
}

/** Cleans every avatar not yet checked, and removes the damaged ones; `now` is the new version of each changed one's user. */
export async function stripStoredAvatarMetadata(db: Kysely<Database>, now: number): Promise<AvatarCleaning> {
  const counts: AvatarCleaning = { stripped: 0, unchanged: 0, damaged: 0 };
  for (;;) {
    const seen = await db.transaction().execute(async (trx) => {
      // The same condition as the partial index avatars_metadata_unchecked, so it is the one read.
      const rows = await trx.selectFrom('avatars').select(['user_id', 'image', 'updated_at'])
        .where(sql<boolean>`metadata_checked is null or metadata_checked <> updated_at`)
        .orderBy('user_id').limit(BATCH).execute();
      for (const row of rows) {
        const image = new Uint8Array(row.image);
        const type = detectImageType(image);
        const clean = type && withoutMetadata(image, type);
        const replacement = clean && Buffer.compare(clean, image) !== 0 ? clean : undefined;
        counts[!clean ? 'damaged' : replacement ? 'stripped' : 'unchanged'] += 1;
        // Only the image that was read: one uploaded meanwhile is left to its own check.
        const changed = clean
          ? (await trx.updateTable('avatars')
            .set({ metadata_checked: row.updated_at, ...(replacement ? { image: replacement } : {}) })
            .where('user_id', '=', row.user_id).where('updated_at', '=', row.updated_at).executeTakeFirst()).numUpdatedRows
          : (await trx.deleteFrom('avatars')
            .where('user_id', '=', row.user_id).where('updated_at', '=', row.updated_at).executeTakeFirst()).numDeletedRows;
        if ((replacement || !clean) && Number(changed) === 1) {
          await trx.updateTable('users')
            .set({ updated_at: sql<number>`case when updated_at < ${now} then ${now} else updated_at + 1 end` })
            .where('id', '=', row.user_id).execute();
        }
      }
      return rows.length;
    });
    if (seen < BATCH) return counts;
  }
}
