/**
 * The SMTP reply code with which the server refused a mail that was given up (RCPT, MAIL or DATA),
 * so the member's e-mail settings can say that mail to the address did not arrive, and why by
 * its code (never the server's words). A mail given up before has none. Frozen in time: it takes
 * `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_outbox').addColumn('reply_code', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_outbox').dropColumn('reply_code').execute();
}
