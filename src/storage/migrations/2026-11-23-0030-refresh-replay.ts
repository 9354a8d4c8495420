/**
 * The refresh replay window (issue 19 item 1, INTERFACE section 11): a rotated refresh token
 * names its successor (by the successor's SHA-256, as stored) and keeps the successor's token
 * answer sealed under a key derived from the rotated token itself, which the database never
 * holds. Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('refresh_tokens').addColumn('successor_hash', 'text').execute();
  await db.schema.alterTable('refresh_tokens').addColumn('replay_sealed', 'text').execute();
  // The rotation of a successor erases its predecessor's sealed answer, found by this index.
  await db.schema.createIndex('refresh_tokens_by_successor').on('refresh_tokens').column('successor_hash').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('refresh_tokens_by_successor').execute();
  await db.schema.alterTable('refresh_tokens').dropColumn('replay_sealed').execute();
  await db.schema.alterTable('refresh_tokens').dropColumn('successor_hash').execute();
}
