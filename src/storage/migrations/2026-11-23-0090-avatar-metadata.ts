/**
 * Avatars are stored without their metadata (EXIF with a phone's GPS position, XMP, IPTC, text
 * chunks), which were published to anyone until now. Frozen in time: it takes `Kysely<any>` and
 * imports nothing from the application.
 *
 * Taking the metadata out needs the application's image rules, which a frozen migration cannot
 * hold; as for post renderings, this only adds what finds the avatars still to clean, and
 * `migrateToLatest` cleans them right after the migrations (`reencode-stored-avatars.ts`), and again
 * at every later start. `metadata_checked` is the `updated_at` of the image that was cleaned (a
 * damaged one is removed, `reencode-stored-avatars.ts`): null for every avatar stored before, and a replacement by an
 * older release during a rolling upgrade, which moves `updated_at` but knows nothing of this
 * column, leaves it behind. The partial index holds exactly those avatars, so the look at a start
 * with nothing to clean is free, and never reads an image.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('avatars').addColumn('metadata_checked', 'bigint').execute();
  await db.schema.createIndex('avatars_metadata_unchecked').on('avatars').column('user_id')
    .where(sql<boolean>`metadata_checked is null or metadata_checked <> updated_at`).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('avatars_metadata_unchecked').execute();
  await db.schema.alterTable('avatars').dropColumn('metadata_checked').execute();
}
