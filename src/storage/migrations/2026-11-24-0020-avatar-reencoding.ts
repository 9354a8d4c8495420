/**
 * Avatars are decoded and encoded anew by an image library (issue 30 item 4), no longer walked by
 * a parser of our own, which left what it did not know in place: an invented critical PNG chunk,
 * data after a JPEG's scan (a polyglot), the ICC profile, and any declared size. Every avatar
 * stored so far was only walked, so every one is marked unchecked here, and the data step
 * (`reencode-stored-avatars.ts`, run by `migrateToLatest` right after the migrations) encodes
 * each anew, or removes one an upload would now refuse.
 *
 * Migration 2026-11-23-0090-avatar-metadata, which added `metadata_checked`, is left as it was: it
 * imports nothing from the application, so it loads and runs as before; only the data step that
 * follows it changed. Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.updateTable('avatars').set({ metadata_checked: null }).execute();
}

/** Nothing to undo: an avatar encoded anew stays so, and the older release reads it as any image. */
export async function down(_db: Kysely<any>): Promise<void> {}
