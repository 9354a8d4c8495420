/**
 * Pushed authorization requests (RFC 9126) and resource indicators (RFC 8707), issue 19 items 3
 * and 4: the pushed requests themselves (stored by the SHA-256 of the random part of their
 * `request_uri`, single use, 60 seconds), the per-client setting that requires them, and the
 * resource each grant was asked for. Frozen in time: it takes `Kysely<any>` and imports nothing
 * from the application.
 */
import { type Kysely, SqliteAdapter } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.createTable('pushed_authorization_requests')
    .addColumn('request_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    // A JSON array of [name, value] pairs: the authorization request's parameters as pushed.
    .addColumn('parameters', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('pushed_authorization_requests_by_expiry').on('pushed_authorization_requests').column('expires_at').execute();
  await db.schema.alterTable('clients')
    .addColumn('require_pushed_authorization_requests', sqlite ? 'integer' : 'boolean', (c) => c.notNull().defaultTo(sqlite ? 0 : false))
    .execute();
  await db.schema.alterTable('grants').addColumn('resource', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('grants').dropColumn('resource').execute();
  await db.schema.alterTable('clients').dropColumn('require_pushed_authorization_requests').execute();
  await db.schema.dropTable('pushed_authorization_requests').execute();
}
