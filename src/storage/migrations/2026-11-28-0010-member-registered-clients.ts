/**
 * Apps a member registered on the developer page (attack83): marked so their authorization errors
 * are shown on this site's page, as those of an app that registered itself are, until the member
 * asking has authorized the app or staff verified it (RFC 9700 4.11.2): an account costs nothing,
 * so nobody answers for such an app's redirect URIs. Apps registered before are left unmarked: the
 * site cannot tell an operator's `client create --owner` from a member's registration after the
 * fact, and an operator's app must keep its errors (a `prompt=none` check's among them). Frozen in
 * time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.alterTable('clients')
    .addColumn('member_registered', sqlite ? 'integer' : 'boolean', (c) => c.notNull().defaultTo(sqlite ? 0 : false))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('member_registered').execute();
}
