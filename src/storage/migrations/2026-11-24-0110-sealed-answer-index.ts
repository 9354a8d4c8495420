/**
 * The janitor erases sealed replay answers once the longest replay window allowed has passed
 * (`used_at < t` among rows whose `replay_sealed` is set). Partial on the sealed answer, so only
 * the few rows that hold one are in it: a rotation without a window never writes it. Frozen in
 * time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('refresh_tokens_sealed_by_used_at').on('refresh_tokens').column('used_at')
    .where(sql.ref('replay_sealed'), 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('refresh_tokens_sealed_by_used_at').execute();
}
