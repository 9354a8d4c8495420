/**
 * When a mail's whole message went to the server and no reply came (the connection closed, or the
 * wait ran out, after its final "."): it may have been delivered, so it is not sent again, its
 * count is kept, and the member's e-mail settings say it may have arrived. Such a row also has
 * `abandoned_at`, the same time: it left the queue. A row before has none. Frozen in time: it
 * takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_outbox').addColumn('maybe_sent_at', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_outbox').dropColumn('maybe_sent_at').execute();
}
