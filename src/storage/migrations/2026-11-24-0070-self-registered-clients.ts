/**
 * Apps that registered themselves (RFC 7591 dynamic registration, INTERFACE section 13): marked so
 * the consent page can say the site has not reviewed them, and so the janitor can find those that
 * got no grant within 30 days of registering. The owner column already allows none. Frozen in
 * time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.alterTable('clients')
    .addColumn('self_registered', sqlite ? 'integer' : 'boolean', (c) => c.notNull().defaultTo(sqlite ? 0 : false))
    .execute();
  // The janitor's sweep reads only self-registered apps, oldest first.
  await db.schema.createIndex('clients_self_registered_by_age').on('clients').columns(['self_registered', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('clients_self_registered_by_age').execute();
  await db.schema.alterTable('clients').dropColumn('self_registered').execute();
}
