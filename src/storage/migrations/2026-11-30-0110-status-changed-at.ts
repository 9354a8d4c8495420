/**
 * `users.status_changed_at`: when the account last entered or left `active`, written by the same
 * write that changes the status. The bearer gate and the token endpoint tell a token in force when
 * its account left `active` that the account is not active, and one ended before that it was
 * revoked or expired; `updated_at`, which they read before, moves with every profile edit, new
 * avatar or role. An account's is `updated_at` to begin with, the last write that could have been
 * its status change. Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // A constant default, which neither database rewrites the table for; every insert names it.
  await db.schema.alterTable('users').addColumn('status_changed_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await sql`update users set status_changed_at = updated_at`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('status_changed_at').execute();
}
