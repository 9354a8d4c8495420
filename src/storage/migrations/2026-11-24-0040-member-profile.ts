/**
 * What a member tells the site about themselves (INTERFACE section 12): a nickname in any script
 * (`null`: the username), the language of pages and mails, and the time zone pages show times in
 * (`null`: the site's). Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

const COLUMNS = ['nickname', 'language', 'time_zone'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of COLUMNS) await db.schema.alterTable('users').addColumn(column, 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of COLUMNS) await db.schema.alterTable('users').dropColumn(column).execute();
}
