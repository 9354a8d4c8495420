/**
 * The secret a rotation replaced, kept working until its expiry or until the developer deletes it
 * (as GitHub does for OAuth apps), so a new secret can be deployed without downtime. Its hash is
 * indexed as the current one is: a leak report finds it the same way. Frozen in time: it takes
 * `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('previous_secret_hash', 'text').execute();
  await db.schema.alterTable('clients').addColumn('previous_secret_expires_at', 'bigint').execute();
  await db.schema.createIndex('clients_by_previous_secret_hash').on('clients').column('previous_secret_hash').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('clients_by_previous_secret_hash').execute();
  await db.schema.alterTable('clients').dropColumn('previous_secret_expires_at').execute();
  await db.schema.alterTable('clients').dropColumn('previous_secret_hash').execute();
}
