/**
 * The language each queued mail was written in, so the transport can name it in a
 * `Content-Language` header (RFC 3282) as the HTML alternative names it in `<html lang>`. A mail
 * queued before has none and goes without the header. Frozen in time: it takes `Kysely<any>` and
 * imports nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_outbox').addColumn('language', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_outbox').dropColumn('language').execute();
}
