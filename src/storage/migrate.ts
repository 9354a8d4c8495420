/**
 * Runs the migrations in order; each is a module listed here, so bundling or compiling keeps them.
 * After them come the data steps that need the application's own rules, which a frozen migration
 * cannot import (see `fill-post-renderings.ts`, `reencode-stored-avatars.ts`).
 */
import { type Kysely, type Migration, type MigrationResultSet, Migrator, PostgresAdapter, sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import { fillMissingRenderings } from './fill-post-renderings.js';
import { sharpReencoder } from '../images/sharp-reencoder.js';
import { reencodeStoredAvatars } from './reencode-stored-avatars.js';
import { TURN_WAIT_MS } from './sqlite-migration-turn.js';
import * as initial from './migrations/2026-11-22-0001-initial.js';
import * as postRenderings from './migrations/2026-11-23-0001-post-renderings.js';
import * as signingKeyActivation from './migrations/2026-11-23-0002-signing-key-activation.js';
import * as serverSecrets from './migrations/2026-11-23-0003-server-secrets.js';
import * as logoutDeliveries from './migrations/2026-11-23-0004-logout-deliveries.js';
import * as accountSecurity from './migrations/2026-11-23-0010-account-security.js';
import * as securityLog from './migrations/2026-11-23-0011-security-log.js';
import * as oneTimeSecrets from './migrations/2026-11-23-0021-one-time-secrets.js';
import * as refreshReplay from './migrations/2026-11-23-0030-refresh-replay.js';
import * as dpop from './migrations/2026-11-23-0040-dpop.js';
import * as pushedAuthorizationRequests from './migrations/2026-11-23-0050-pushed-authorization-requests.js';
import * as clientSecretIndex from './migrations/2026-11-23-0060-client-secret-index.js';
import * as postsPageIndex from './migrations/2026-11-23-0070-posts-page-index.js';
import * as publishedPostCounts from './migrations/2026-11-23-0080-published-post-counts.js';
import * as avatarMetadata from './migrations/2026-11-23-0090-avatar-metadata.js';
import * as endedTokenIndexes from './migrations/2026-11-24-0010-ended-token-indexes.js';
import * as avatarReencoding from './migrations/2026-11-24-0020-avatar-reencoding.js';
import * as tokenResource from './migrations/2026-11-24-0030-token-resource.js';
import * as previousClientSecret from './migrations/2026-11-24-0090-previous-client-secret.js';
import * as memberProfile from './migrations/2026-11-24-0040-member-profile.js';
import * as mailOutbox from './migrations/2026-11-24-0050-mail-outbox.js';
import * as memberEmail from './migrations/2026-11-24-0060-member-email.js';
import * as selfRegisteredClients from './migrations/2026-11-24-0070-self-registered-clients.js';
import * as staff from './migrations/2026-11-24-0100-staff.js';
import * as sealedAnswerIndex from './migrations/2026-11-24-0110-sealed-answer-index.js';
import * as partialSuccessorIndex from './migrations/2026-11-25-0010-partial-successor-index.js';
import * as memberRegisteredClients from './migrations/2026-11-28-0010-member-registered-clients.js';
import * as mailLanguage from './migrations/2026-11-28-0020-mail-language.js';
import * as bigintCounters from './migrations/2026-11-28-0030-bigint-counters.js';
import * as triggerSearchPath from './migrations/2026-11-28-0040-trigger-search-path.js';
import * as hiddenAuthorFlags from './migrations/2026-11-29-0010-hidden-author-flags.js';
import * as staffEventDevice from './migrations/2026-11-29-0020-staff-event-device.js';
import * as addressLanguage from './migrations/2026-11-29-0030-address-language.js';
import * as pendingEmail from './migrations/2026-11-30-0010-pending-email.js';
import * as refusedEmailLinks from './migrations/2026-11-30-0020-refused-email-links.js';
import * as mailReplyCode from './migrations/2026-11-30-0050-mail-reply-code.js';
import * as addressRefusals from './migrations/2026-11-30-0070-address-refusals.js';
import * as statusChangedAt from './migrations/2026-11-30-0110-status-changed-at.js';
import * as memberDataIndexes from './migrations/2026-12-01-0040-member-data-indexes.js';
import * as siteRefusalsCleared from './migrations/2026-12-01-0050-site-refusals-cleared.js';
import * as selfDeletionsErased from './migrations/2026-12-01-0060-self-deletions-erased.js';
import * as unprovenRefusalsCleared from './migrations/2026-12-01-0070-unproven-refusals-cleared.js';
import * as communityChangeNotices from './migrations/2026-12-02-0010-community-change-notices.js';
import * as mailMaybeSent from './migrations/2026-12-04-0010-mail-maybe-sent.js';

const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22-0001-initial': initial,
  '2026-11-23-0001-post-renderings': postRenderings,
  '2026-11-23-0002-signing-key-activation': signingKeyActivation,
  '2026-11-23-0003-server-secrets': serverSecrets,
  '2026-11-23-0004-logout-deliveries': logoutDeliveries,
  '2026-11-23-0010-account-security': accountSecurity,
  '2026-11-23-0011-security-log': securityLog,
  '2026-11-23-0021-one-time-secrets': oneTimeSecrets,
  '2026-11-23-0030-refresh-replay': refreshReplay,
  '2026-11-23-0040-dpop': dpop,
  '2026-11-23-0050-pushed-authorization-requests': pushedAuthorizationRequests,
  '2026-11-23-0060-client-secret-index': clientSecretIndex,
  '2026-11-23-0070-posts-page-index': postsPageIndex,
  '2026-11-23-0080-published-post-counts': publishedPostCounts,
  '2026-11-23-0090-avatar-metadata': avatarMetadata,
  '2026-11-24-0010-ended-token-indexes': endedTokenIndexes,
  '2026-11-24-0020-avatar-reencoding': avatarReencoding,
  '2026-11-24-0030-token-resource': tokenResource,
  '2026-11-24-0040-member-profile': memberProfile,
  '2026-11-24-0050-mail-outbox': mailOutbox,
  '2026-11-24-0060-member-email': memberEmail,
  '2026-11-24-0070-self-registered-clients': selfRegisteredClients,
  '2026-11-24-0090-previous-client-secret': previousClientSecret,
  '2026-11-24-0100-staff': staff,
  '2026-11-24-0110-sealed-answer-index': sealedAnswerIndex,
  '2026-11-25-0010-partial-successor-index': partialSuccessorIndex,
  '2026-11-28-0010-member-registered-clients': memberRegisteredClients,
  '2026-11-28-0020-mail-language': mailLanguage,
  '2026-11-28-0030-bigint-counters': bigintCounters,
  '2026-11-28-0040-trigger-search-path': triggerSearchPath,
  '2026-11-29-0010-hidden-author-flags': hiddenAuthorFlags,
  '2026-11-29-0020-staff-event-device': staffEventDevice,
  '2026-11-29-0030-address-language': addressLanguage,
  '2026-11-30-0010-pending-email': pendingEmail,
  '2026-11-30-0020-refused-email-links': refusedEmailLinks,
  '2026-11-30-0050-mail-reply-code': mailReplyCode,
  '2026-11-30-0070-address-refusals': addressRefusals,
  '2026-11-30-0110-status-changed-at': statusChangedAt,
  '2026-12-01-0040-member-data-indexes': memberDataIndexes,
  '2026-12-01-0050-site-refusals-cleared': siteRefusalsCleared,
  '2026-12-01-0060-self-deletions-erased': selfDeletionsErased,
  '2026-12-01-0070-unproven-refusals-cleared': unprovenRefusalsCleared,
  '2026-12-02-0010-community-change-notices': communityChangeNotices,
  '2026-12-04-0010-mail-maybe-sent': mailMaybeSent,
};

/** Every migration's name, in the order they run. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort();

export interface MigrationOutcome {
  /** Names of the migrations this run applied; empty when the database was up to date. */
  applied: string[];
}

/**
 * A PostgreSQL advisory lock held while migrating: instances starting together migrate one after
 * the other, and it is the migrator's only lock (`OwnSchemaPostgresDialect`). The tests take it to
 * drop their schemas, so no start of theirs reads a schema half dropped.
 */
export const SCHEMA_CHANGE_LOCK = 7_305_2026;

/**
 * Every migration, then the data steps, then `after` (a start seeds the demo there); instances
 * starting together take turns on PostgreSQL, so one that waited finds all of it done.
 */
export async function migrateToLatest(db: Kysely<any>, after?: () => Promise<void>): Promise<MigrationOutcome> {
  return migrating(db, async (migrator, lockHolder) => {
    const outcome = await triedAgainWhileLocked(async () => {
      const migrated = await applied(migrator.migrateToLatest());
      await fillMissingRenderings(lockHolder);
      await reencodeStoredAvatars(lockHolder, sharpReencoder, Date.now());
      return migrated;
    });
    await after?.();
    return outcome;
  });
}

/** Pauses between tries of a migration that found a table locked: about 20 s of waiting for locks in all. */
const LOCKED_TABLE_PAUSES_MS = [1_000, 2_000, 4_000];

/**
 * `work` (the migrations, one transaction, and the data steps, which fill only what is missing), tried
 * again after a pause when PostgreSQL gave up waiting for a lock (55P03, `lock_timeout`): another
 * session's open transaction held a table the migration alters. Between tries the instances serving
 * the site read on; a lock held past the last try fails the start, naming it.
 */
async function triedAgainWhileLocked<T>(work: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await work();
    } catch (error) {
      if ((error as { code?: string }).code !== '55P03') throw error;
      const pauseMs = LOCKED_TABLE_PAUSES_MS[tries - 1];
      if (pauseMs === undefined) {
        throw new Error(`the migrations found a table locked by another session in each of ${tries} tries (pg_locks and pg_stat_activity show which): ${(error as Error).message}`, { cause: error });
      }
      await sleep(pauseMs);
    }
  }
}

/**
 * `work` in the turn instances starting together take on PostgreSQL (the schema lock), with no
 * migration: what a start does once it serves, one start after the other. `stop` ends the wait
 * for the turn (a server stopping on a signal), which else holds a connection the pool's close
 * waits for.
 */
export async function inSchemaTurn<T>(db: Kysely<any>, work: () => Promise<T>, stop?: AbortSignal): Promise<T> {
  return underSchemaLock(db, () => work(), stop);
}

/**
 * The migrations up to and including `name`, and no data step: the database as the release that
 * shipped `name` left it, for the tests of a later migration.
 */
export async function migrateTo(db: Kysely<any>, name: string): Promise<MigrationOutcome> {
  return migrating(db, (migrator) => applied(migrator.migrateTo(name)));
}

/**
 * Runs `work` with a migrator, holding the schema lock on PostgreSQL, its migrator and statements
 * on the connection that holds it: one connection is all a start's migrations need
 * (`DatabaseHandle.inMigrationTurn` gives them one of their own, with no statement time limit).
 */
async function migrating<T>(db: Kysely<any>, work: (migrator: Migrator, lockHolder: Kysely<any>) => Promise<T>): Promise<T> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return work(migratorFor(db, undefined), db);
  return underSchemaLock(db, async (connection) => {
    const schema = await serviceSchema(connection);
    // The migrator looks for its own tables in every schema unless told which one; name the
    // current schema so a database shared by several schemas never confuses it.
    return work(migratorFor(connection, schema), connection).catch((error: unknown) => { throw explained(error, schema); });
  });
}

/**
 * Runs `work` holding the schema lock on PostgreSQL (on SQLite the lock file of
 * `inMigrationTurn` is the turn), passing it the connection that holds the lock.
 */
async function underSchemaLock<T>(db: Kysely<any>, work: (lockHolder: Kysely<any>) => Promise<T>, stop?: AbortSignal): Promise<T> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return work(db);
  return db.connection().execute(async (connection) => {
    await takeSchemaLock(connection, stop);
    try {
      return await work(connection);
    } finally {
      await sql`select pg_advisory_unlock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    }
  });
}

/**
 * The schema the service's tables are in on PostgreSQL: the current one, the first of `search_path`
 * that exists. Refused, naming the fix, when no schema of the search path exists, and when the
 * current schema holds none of the service's tables while a schema after it on the search path
 * does: a schema made later ahead of the deployment's (PostgreSQL 15's advice, `create schema svc
 * authorization svc`, is the `"$user"` of the default `"$user", public`) was given a second, empty
 * set of tables, and the start served a service with no account, no app and new signing keys
 * (helper-72).
 */
async function serviceSchema(connection: Kysely<any>): Promise<string> {
  const { rows: [place] } = await sql<{ schema: string | null; path: string }>`select current_schema() as schema, current_setting('search_path') as path`.execute(connection);
  if (!place?.schema) {
    // current_schema() passes over a schema the role may not use as over one that does not exist.
    throw new Error(`no schema on DATABASE_URL's search path exists that the role may use (search_path: ${place?.path}): create the schema the service is to use (create schema NAME authorization ROLE), grant the role usage and create on it, or name another (options=-c%20search_path%3DNAME in DATABASE_URL)`);
  }
  // The schemas of the search path that hold the service's migrations, in the path's order: another
  // application's Kysely migrations may sit beside them, and the service's first one tells. A
  // deployment is this role's when the role is a member of its owner (a superuser is of every
  // role): another role's deployment it may read is no reason to refuse (helper-74).
  const { rows: candidates } = await sql<{ schema: string }>`
    select s.name as schema from unnest(current_schemas(false)) with ordinality as s(name, place)
    where exists (select 1 from pg_catalog.pg_tables where schemaname = s.name and tablename = 'kysely_migration' and pg_has_role(tableowner, 'MEMBER'))
    order by s.place`.execute(connection);
  for (const { schema } of candidates) {
    // Only a table the role may not read is passed over: any other failure (a lock held past
    // lock_timeout: VACUUM FULL, CLUSTER, LOCK TABLE) fails the start rather than let it make a
    // second service ahead of the one it could not read (helper-74).
    const ours = await sql`select 1 from ${sql.id(schema, 'kysely_migration')} where name = ${MIGRATION_NAMES[0]}`.execute(connection)
      .catch((error: unknown) => { if ((error as { code?: string }).code === '42501') return { rows: [] }; throw error; });
    if (ours.rows.length === 0) continue;
    if (schema === place.schema) break;
    throw new Error(`the service's tables are in schema "${schema}", but schema "${place.schema}", which holds none of them, now comes first on the search path (search_path: ${place.path}): a start would make a second, empty service there. Name the service's schema alone in DATABASE_URL's options (options=-c%20search_path%3D${encodeURIComponent(searchPathEntry(schema))})`);
  }
  // PostgreSQL's own schemas exist in every database, so a search path naming one first makes it
  // current: the migrations failed in pg_catalog on a permission, and in the session's temporary
  // schema made tables that vanished with the connection (helper-74). A session's temporary schema
  // is made at its first temporary table, so until then only the path's text names it.
  const system = /^\s*pg_temp\s*(,|$)/i.test(place.path) ? 'pg_temp' : place.schema;
  if (system === 'pg_catalog' || system === 'pg_temp' || system.startsWith('pg_temp_') || system.startsWith('pg_toast')) {
    throw new Error(`schema "${system}", which comes first on the search path (search_path: ${place.path}), is PostgreSQL's own: the service's tables cannot be kept there. Name the service's schema first in DATABASE_URL's options (options=-c%20search_path%3DNAME)`);
  }
  return place.schema;
}

/** `schema` as `search_path` reads it: quoted unless PostgreSQL would read it bare (it folds a bare name to lower case). */
function searchPathEntry(schema: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(schema) ? schema : `"${schema.replaceAll('"', '""')}"`;
}

/** The schema the service's tables are in on PostgreSQL, the one `serviceSchema` let the migrations use; none on SQLite. */
export async function tablesSchema(db: Kysely<any>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}

/**
 * `error` from the migrations on PostgreSQL, with what an operator does about the ones a role's
 * or a shared schema's setup causes (docs/operations.md, "PostgreSQL: the role and the schema").
 */
function explained(error: unknown, schema: string): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: string }).code;
  let advice: string | undefined;
  if (code === '42501' && /permission denied for schema/.test(error.message)) {
    const publicRule = schema === 'public' ? ': since PostgreSQL 15 only the database\'s owner may create in public. Make the role the database\'s owner (alter database … owner to ROLE),' : '. Make the role its owner,';
    advice = `the database role may not create tables in schema "${schema}"${publicRule} grant it create on schema ${schema}, or give it a schema of its own (create schema ROLE authorization ROLE)`;
  } else if (code === '42501' && /permission denied for (table|sequence)/.test(error.message)) {
    advice = `another role made the service's tables in schema "${schema}": the role the service connects as must own them (as their owner or a superuser, alter table … owner to ROLE for each; reassign owned by OWNER to ROLE does it at once unless OWNER is a superuser such as postgres)`;
  } else if (error.message.startsWith('corrupted migrations')) {
    advice = `schema "${schema}" has run a migration this release does not have: a newer release migrated it (going back takes the backup made before the upgrade), or another application that uses Kysely keeps its migrations there (give the service a schema of its own)`;
  }
  return advice === undefined ? error : new Error(`${error.message}: ${advice}`, { cause: error });
}

/**
 * Takes the schema lock on `connection`, tried again and again rather than waited for: the pool's
 * `query_timeout` (10 s, src/storage/database.ts) ended a `pg_advisory_lock` waiting for another
 * start's longer turn, and that start failed (attack78: `Query read timeout`). Waits as long as
 * SQLite's turn does (`TURN_WAIT_MS`).
 */
async function takeSchemaLock(connection: Kysely<any>, stop?: AbortSignal): Promise<void> {
  const deadline = Date.now() + TURN_WAIT_MS;
  for (let pauseMs = 10; ; pauseMs = Math.min(pauseMs * 2, 200)) {
    stop?.throwIfAborted();
    const { rows } = await sql<{ taken: boolean }>`select pg_try_advisory_lock(${SCHEMA_CHANGE_LOCK}) as taken`.execute(connection);
    if (rows[0]?.taken) return;
    if (Date.now() >= deadline) throw new Error(`another start has held the migrations' turn (PostgreSQL advisory lock ${SCHEMA_CHANGE_LOCK}) for ${TURN_WAIT_MS / 60_000} minutes`);
    await sleep(pauseMs, undefined, { signal: stop }).catch(() => {});
  }
}

function migratorFor(db: Kysely<any>, migrationTableSchema: string | undefined): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
}

async function applied(run: Promise<MigrationResultSet>): Promise<MigrationOutcome> {
  const { error, results } = await run;
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
