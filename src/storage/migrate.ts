/** Runs the migrations in order; each is a module listed here, so bundling or compiling keeps them. */
import { type Kysely, type Migration, Migrator, PostgresAdapter, sql } from 'kysely';
import * as initial from './migrations/2026-11-22-0001-initial.js';
import * as signingKeyActivation from './migrations/2026-11-23-0002-signing-key-activation.js';

const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22-0001-initial': initial,
  '2026-11-23-0002-signing-key-activation': signingKeyActivation,
};

export interface MigrationOutcome {
  /** Names of the migrations this run applied; empty when the database was up to date. */
  applied: string[];
}

/**
 * A PostgreSQL advisory lock held while migrating. The migrator reads the catalog of every schema,
 * which fails if another process drops a schema at that moment; whoever creates or drops schemas
 * in a shared database (the tests do) takes the same lock. Instances starting together also
 * migrate one after the other.
 */
export const SCHEMA_CHANGE_LOCK = 7_305_2026;

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationOutcome> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return runMigrator(db, undefined);
  return db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    try {
      // The migrator looks for its own tables in every schema unless told which one; name the
      // current schema so a database shared by several schemas never confuses it.
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(connection);
      return await runMigrator(db, rows[0]?.schema);
    } finally {
      await sql`select pg_advisory_unlock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    }
  });
}

async function runMigrator(db: Kysely<any>, migrationTableSchema: string | undefined): Promise<MigrationOutcome> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
