/**
 * Signing keys are published before they sign (INTERFACE section 5, issue 16 item 3): `active_at`
 * is when a key starts signing, `withdrawn_at` when it leaves the JWKS (and may be deleted).
 * Existing keys have signed since they were created; a key retired before this migration keeps
 * the window it had (the id_token lifetime of 3600 s plus five minutes after `retired_at`).
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely';

/** The id_token lifetime plus five minutes, as the application used it on 2026-11-23. */
const RETIRED_KEY_VISIBLE_MS = (3600 + 300) * 1000;

export async function up(db: Kysely<any>): Promise<void> {
  // SQLite adds a NOT NULL column only with a default; every row gets its real value just below.
  await db.schema.alterTable('signing_keys').addColumn('active_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('signing_keys').addColumn('withdrawn_at', 'bigint').execute();
  await db.updateTable('signing_keys').set({ active_at: sql`created_at` }).execute();
  await db.updateTable('signing_keys').set({ withdrawn_at: sql`retired_at + ${sql.lit(RETIRED_KEY_VISIBLE_MS)}` })
    .where('retired_at', 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signing_keys').dropColumn('withdrawn_at').execute();
  await db.schema.alterTable('signing_keys').dropColumn('active_at').execute();
}
