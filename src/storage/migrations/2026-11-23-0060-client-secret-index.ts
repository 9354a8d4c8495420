/**
 * An index on the clients' secret hashes: a leak report (INTERFACE section 11) finds the client a
 * reported secret belongs to by its hash, as every other credential is found. Frozen in time: it
 * takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('clients_by_secret_hash').on('clients').column('secret_hash').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('clients_by_secret_hash').execute();
}
