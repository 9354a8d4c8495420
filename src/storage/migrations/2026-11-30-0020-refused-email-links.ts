/**
 * When a verification link was refused by its "Not you?" form: the refusal is one conditional
 * write on it, so a link opened or sent again once refused says so and takes nothing off its
 * account a second time. Frozen in time: it takes `Kysely<any>` and imports nothing from the
 * application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('email_links').addColumn('refused_at', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('email_links').dropColumn('refused_at').execute();
}
