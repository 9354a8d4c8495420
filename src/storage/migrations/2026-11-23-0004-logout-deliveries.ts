/**
 * Logout (INTERFACE sections 3 and 5, issue 17 item 5): a client registers post-logout redirect
 * URIs and a back-channel logout URI; a grant remembers the sign-in session it was approved in
 * (`sid`, OpenID Back-Channel Logout 1.0 section 2.1); and every back-channel logout token still
 * to be delivered is a row of `logout_deliveries`, written in the transaction of the event that
 * causes it, so a restart loses none. Frozen in time: it takes `Kysely<any>` and imports nothing
 * from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const instant = 'bigint';

  // SQLite adds a NOT NULL column only with a default; '[]' is also the truth for every client so far.
  await db.schema.alterTable('clients').addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.alterTable('clients').addColumn('backchannel_logout_uri', 'text').execute();
  // Grants approved before this migration have no session id: their logout tokens carry `sub` alone.
  await db.schema.alterTable('grants').addColumn('sid', 'text').execute();

  let table = db.schema.createTable('logout_deliveries');
  table = sqlite
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity());
  await table
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('sid', 'text')
    .addColumn('jti', 'text', (c) => c.notNull().unique())
    .addColumn('cause', 'text', (c) => c.notNull())
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', instant, (c) => c.notNull())
    .addColumn('lease_until', instant)
    .addColumn('claim', 'text')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', instant)
    .addColumn('abandoned_at', instant)
    .execute();
  // The worker's question, "what is due?", reads only the rows still pending.
  await db.schema.createIndex('logout_deliveries_due').on('logout_deliveries').column('next_attempt_at')
    .where(sql<boolean>`delivered_at is null and abandoned_at is null`).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('logout_deliveries').execute();
  await db.schema.alterTable('grants').dropColumn('sid').execute();
  await db.schema.alterTable('clients').dropColumn('backchannel_logout_uri').execute();
  await db.schema.alterTable('clients').dropColumn('post_logout_redirect_uris').execute();
}
