/**
 * The janitor's deletions find ended rows by index: tokens revoked, sessions ended. Its batches
 * select `expires_at < t or revoked_at < t` (`ended_at` for sessions); with an index on the
 * expiry alone neither database can use one for the OR, so every batch of 500 scanned the table
 * (100,000 deletions among 500,000 tokens took 5.6 s on PostgreSQL). Partial on the column being
 * set: only ended rows are in them, so issuing a token or starting a session never writes them.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely';

const ENDED = [['access_tokens', 'revoked_at'], ['refresh_tokens', 'revoked_at'], ['sessions', 'ended_at']] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, column] of ENDED) {
    await db.schema.createIndex(`${table}_by_${column}`).on(table).column(column).where(sql.ref(column), 'is not', null).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table, column] of ENDED) await db.schema.dropIndex(`${table}_by_${column}`).execute();
}
