/** Runs the migrations in order; each is a module listed here, so bundling or compiling keeps them. */
import { type Kysely, type Migration, Migrator, PostgresAdapter, sql } from 'kysely';
import * as initial from './migrations/2026-11-22-0001-initial.js';

const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22-0001-initial': initial,
};

export interface MigrationOutcome {
  /** Names of the migrations this run applied; empty when the database was up to date. */
  applied: string[];
}

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationOutcome> {
  // Kysely looks for its migration tables in every schema of the database unless told which one:
  // with several schemas (tests run one per suite, in parallel) it would find another's and fail.
  const migrationTableSchema = db.getExecutor().adapter instanceof PostgresAdapter
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined;
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
