/**
 * The audience of each token (RFC 8707 2): the resource its request named, so a token for the
 * resource API alone is refused elsewhere (UserInfo). `null`: none was named, as for every token
 * issued before this migration. Frozen in time: it takes `Kysely<any>` and imports nothing from
 * the application.
 */
import type { Kysely } from 'kysely';

const TABLES = ['access_tokens', 'refresh_tokens'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).addColumn('resource', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).dropColumn('resource').execute();
}
