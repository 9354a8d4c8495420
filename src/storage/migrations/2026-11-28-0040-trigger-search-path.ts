/**
 * The published-post count's trigger function reads and writes `users` of the service's own
 * schema, whoever changes a post. On PostgreSQL a function finds the tables its body names through
 * the search path of the session that runs it: an operator's `update posts …` from psql (search
 * path `"$user", public`) counted into another application's `public.users` in the same database,
 * or was refused for want of its column (helper-72). The function's search path is now the schema
 * it lives in, then `pg_temp` (named last, so a session's temporary `users` is not searched first).
 * SQLite's triggers have no search path.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  const { rows } = await sql<{ schema: string }>`select n.nspname as schema from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where p.oid = 'posts_published_count()'::regprocedure`.execute(db);
  await sql`alter function posts_published_count() set search_path = ${sql.id(rows[0]!.schema)}, pg_temp`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`alter function posts_published_count() reset search_path`.execute(db);
}
