/**
 * `refresh_tokens_by_successor` holds only the rows that name a successor. A successor is recorded
 * only under a replay window (INTERFACE section 11), which is off by default, so nearly every row
 * has none; as a full index it took an entry for each new refresh token all the same, one more
 * page for every issuance's COMMIT to write (docs/performance.md). Its one use, a rotation finding
 * the row that names the token it consumes (`successor_hash = ?`), implies the column is not null,
 * so SQLite and PostgreSQL both use the partial index for it. Frozen in time: it takes
 * `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('refresh_tokens_by_successor').execute();
  await db.schema.createIndex('refresh_tokens_by_successor').on('refresh_tokens').column('successor_hash')
    .where(sql.ref('successor_hash'), 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('refresh_tokens_by_successor').execute();
  await db.schema.createIndex('refresh_tokens_by_successor').on('refresh_tokens').column('successor_hash').execute();
}
