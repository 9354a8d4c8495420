/**
 * The data step of migrations 2026-11-23-0090-avatar-metadata and 2026-11-24-0020-avatar-reencoding:
 * every avatar not yet checked (stored before the rules, or replaced by an older release during a
 * rolling upgrade) is decoded and encoded anew as an upload now is (`checkAvatarUpload`). Runs
 * after the migrations on every start; when nothing is left it is one look into an empty partial
 * index, and sharp is never loaded.
 *
 * An image that an upload would now refuse (one that does not decode, or declares too many
 * pixels) is removed: leaving it would go on publishing whatever it holds; its user gets the
 * default avatar and may upload again. A start never fails on one. A library that cannot take an
 * image at all (`busy`: no decoding child could be started) is no verdict on the file: the step
 * stops there and leaves the rest unchecked for the next start. A changed or removed image
 * moves its user's `updated_at`, the version in the pages' address of the avatar (`avatarSrc`), so
 * no page points any longer at the address under which the old bytes were cached for a year.
 */
import { type Kysely, sql } from 'kysely';
import { type ImageReencoder, checkAvatarUpload } from '../core/community/avatars.js';
import { InputError } from '../core/errors.js';
import { inTransaction } from './database.js';
import type { Database } from './schema.js';

/** Avatars read at a time: at most 512 KB each, so a few megabytes. */
const BATCH = 20;

export interface AvatarReencoding {
  /** Avatars stored anew as the library encoded them. */
  reencoded: number;
  /** Avatars the library encoded to the very same bytes: only marked checked. */
  unchanged: number;
  /** Avatars an upload would now refuse: removed. */
  removed: number;
}

/** Encodes anew every avatar not yet checked, and removes those refused; `now` is the new version of each changed one's user. */
export async function reencodeStoredAvatars(db: Kysely<Database>, images: ImageReencoder, now: number): Promise<AvatarReencoding> {
  const counts: AvatarReencoding = { reencoded: 0, unchanged: 0, removed: 0 };
  // `busy` says the library could not take the image (no decoding child could be started), not
  // that the file is at fault: the avatar is not removed for it, and neither it nor the rest is
  // read again now. They stay unchecked for the next start.
  let busy = false;
  const library: ImageReencoder = {
    async reencode(image, type, limits) {
      const answer = await images.reencode(image, type, limits);
      if (answer === 'busy') busy = true;
      return answer;
    },
  };
  for (let after = 0; ;) {
    // The same condition as the partial index avatars_metadata_unchecked, so it is the one read.
    const rows = await db.selectFrom('avatars').select(['user_id', 'image', 'updated_at'])
      .where(sql<boolean>`metadata_checked is null or metadata_checked <> updated_at`)
      .where('user_id', '>', after).orderBy('user_id').limit(BATCH).execute();
    for (const row of rows) {
      // Decoded outside any transaction: no write lock is held while the library works.
      const image = new Uint8Array(row.image);
      const checked = await checkAvatarUpload(image, library).catch((error: unknown) => {
        if (error instanceof InputError) return undefined;
        throw error;
      });
      if (busy) return counts;
      const replacement = checked && Buffer.compare(checked.image, image) !== 0 ? checked : undefined;
      counts[!checked ? 'removed' : replacement ? 'reencoded' : 'unchanged'] += 1;
      await inTransaction(db, async (trx) => {
        // Only the image that was read: one uploaded meanwhile is left to its own check.
        const changed = checked
          ? (await trx.updateTable('avatars')
            .set({ metadata_checked: row.updated_at, ...(replacement ? { image: replacement.image, content_type: replacement.contentType } : {}) })
            .where('user_id', '=', row.user_id).where('updated_at', '=', row.updated_at).executeTakeFirst()).numUpdatedRows
          : (await trx.deleteFrom('avatars')
            .where('user_id', '=', row.user_id).where('updated_at', '=', row.updated_at).executeTakeFirst()).numDeletedRows;
        if ((replacement || !checked) && Number(changed) === 1) {
          await trx.updateTable('users')
            .set({ updated_at: sql<number>`case when updated_at < ${now} then ${now} else updated_at + 1 end` })
            .where('id', '=', row.user_id).execute();
        }
      });
    }
    if (rows.length < BATCH) return counts;
    after = rows[rows.length - 1]!.user_id;
  }
}
