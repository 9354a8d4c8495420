/**
 * The language of the page a member gave their address on. A mail that no page of theirs caused
 * (a leak report, a change made by staff) is written in it when the member saved no language,
 * rather than in the site's default. An address given before has none: such mails stay in the
 * default until the member gives an address again or saves a language. Frozen in time: it takes
 * `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('member_emails').addColumn('language', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('member_emails').dropColumn('language').execute();
}
