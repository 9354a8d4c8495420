/**
 * DPoP (RFC 9449, issue 19 item 2): the key thumbprint a code, an access token and a refresh token
 * are bound to (null: bearer, as before), and the accepted proofs' `jti`s for replay detection.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

const BOUND = ['authorization_codes', 'access_tokens', 'refresh_tokens'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of BOUND) await db.schema.alterTable(table).addColumn('dpop_jkt', 'text').execute();
  await db.schema.createTable('dpop_proofs')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dpop_proofs_by_expiry').on('dpop_proofs').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dpop_proofs').execute();
  for (const table of BOUND) await db.schema.alterTable(table).dropColumn('dpop_jkt').execute();
}
