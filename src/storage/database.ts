/** Opens the database named by the settings: embedded SQLite or pooled PostgreSQL. */
import { closeSync, constants, fchmodSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import SQLite from 'better-sqlite3';
import {
  type Compilable, CompiledQuery, type DatabaseConnection, type DialectAdapter, type Driver, Kysely, type PostgresPool,
  type PostgresPoolClient, type QueryResult, SqliteAdapter, SqliteDialect, type SqliteDialectConfig, SqliteDriver, type SqliteDatabase,
  type SqliteStatement, sql,
} from 'kysely';
import type pg from 'pg';
import type { DatabaseTarget } from '../config/settings.js';
import { isOwnerOnlyFile, makeDirectoriesFor, refuseUnlessOwnFile } from './directories.js';
import { OwnSchemaPostgresDialect } from './postgres-dialect.js';
import type { Database } from './schema.js';
import { BoundedMemo } from '../core/bounded-memo.js';
import { type Log, QUIET } from '../core/log.js';
import { BACKSTOP_PAGES, startCheckpointer } from './sqlite-checkpointer.js';
import { LookupBatch, TurnBatch } from './lookup-batch.js';
import { type SqliteQueryTracer, sqliteQueryTracer } from './query-tracing.js';
import { SqliteGroupCommit } from './sqlite-group-commit.js';
import { untilNotBusy } from './sqlite-busy.js';
import { inMigrationTurn, prepareMigrationTurnFile } from './sqlite-migration-turn.js';
import { BEGIN_IMMEDIATE, SqliteWriteWatch, type TableReads } from './sqlite-write-watch.js';
import { PostgresChangeFeed } from './postgres-change-feed.js';

export type Dialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** The hot paths' compiled queries, for `createStores`. */
  readonly queries: CompiledQueries;
  /** Answers when the database takes a trivial query. */
  ping(): Promise<void>;
  /**
   * Runs `work` (the migrations) in this database's turn, on `db`: instances starting together on
   * one SQLite file migrate one after the other (`sqlite-migration-turn.ts`); on PostgreSQL the
   * migrations take their own turn (`migrateToLatest`), and in memory there is no other instance.
   * On PostgreSQL `db` is a connection of its own with no time limit on a statement: an upgrade's
   * index or count over large tables takes what it takes, where a request's statement ends at 9 s.
   */
  inMigrationTurn<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  /** Where the database's own background work (SQLite's checkpoints) and the stores (`CompiledQueries.absorbed`) report failures from now on. */
  reportTo(log: Log): void;
  close(): Promise<void>;
}

const INT8_OID = 20;

/**
 * The PostgreSQL driver, loaded only when the settings name PostgreSQL: an embedded deployment
 * never holds its modules in memory (docs/performance.md, decision 19).
 */
function loadPg(): typeof pg {
  return createRequire(import.meta.url)('pg') as typeof pg;
}

/** Instants are `bigint` columns; epoch milliseconds fit a JS number exactly. */
function pgTypes(driver: typeof pg): { getTypeParser: typeof pg.types.getTypeParser } {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID ? (value: string) => Number(value) : driver.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
}

/** Distinct SQL texts whose prepared statements are kept; past it, new texts are prepared each time. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * SQLite's page cache for the one connection, in KiB (better-sqlite3's build defaults to 16 MB).
 * Under the bench's load the default filled up and took the server's peak RSS past 150 MB
 * (issue 8). A page it no longer holds is read again from the operating system's file cache,
 * a system call rather than a disk read.
 */
const SQLITE_PAGE_CACHE_KIB = 4_000;

/** A cached statement: Kysely's view of it, and better-sqlite3's raw mode and column names for `CompiledQueries.rowViews`. */
export type CachedStatement = SqliteStatement & Pick<SQLite.Statement, 'raw' | 'columns'>;

interface StatementCache extends SqliteDatabase {
  prepare(text: string): CachedStatement;
}

/**
 * better-sqlite3 as Kysely sees it, but preparing each SQL text once: Kysely prepares a statement
 * for every query, and preparing cost as much as running the query on the hot paths (issue 8).
 * Statements are used synchronously (`all`/`run` return before any other query starts), so sharing
 * one per text is safe. Texts that vary (bulk inserts) stop being cached once the cache is full.
 * With a `tracer` (traces on), each run of a statement is a span.
 */
export function withStatementCache(sqlite: SQLite.Database, onWrite: (text: string) => void, tracer?: SqliteQueryTracer): StatementCache {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => { statements.clear(); sqlite.close(); },
    // Every statement of the connection passes here on its way to run, Kysely's and `runNow`'s
    // alike, so `onWrite` hears of every write (see SqliteWriteWatch).
    prepare: (text: string) => {
      let statement = statements.get(text);
      if (statement === undefined) {
        statement = sqlite.prepare(text);
        if (statements.size < STATEMENT_CACHE_SIZE) statements.set(text, statement);
      }
      // `readonly`, not `reader`: a write with RETURNING answers rows, so it is a reader too.
      if (!statement.readonly) onWrite(text);
      return tracer === undefined ? statement as unknown as CachedStatement : traced(statement, text, tracer);
    },
  };
}

/** `statement` with each run reported to `tracer`; Kysely streams no query here, so `iterate` is not traced. */
function traced(statement: SQLite.Statement, text: string, tracer: SqliteQueryTracer): CachedStatement {
  return {
    reader: statement.reader,
    all: (parameters) => tracer.trace(text, () => statement.all(parameters as unknown[])),
    run: (parameters) => tracer.trace(text, () => statement.run(parameters as unknown[])),
    iterate: (parameters) => statement.iterate(parameters as unknown[]),
    raw: (on) => statement.raw(on),
    columns: () => statement.columns(),
  };
}

/** Reads a row's values from the array better-sqlite3's raw mode makes, by column name (`rowView`). */
const VALUES = Symbol('values');

/**
 * Makes each array of a statement's rows (better-sqlite3's raw mode, in the order of `names`, the
 * statement's columns) into an object that reads its columns by name, as the driver's row objects
 * do. better-sqlite3 builds each row's object from C++, setting a property per column, which cost
 * 0.76 µs a row of ten columns (docs/performance.md, decision 34); a view is one small object whose
 * getters, on a prototype shared by the statement's rows, read the array.
 */
function rowView(names: readonly string[]): (values: unknown[]) => unknown {
  if (new Set(names).size !== names.length) throw new Error(`a query read as arrays needs distinct column names: ${names.join(', ')}`);
  class Row {
    [VALUES]: unknown[];
    constructor(values: unknown[]) {
      this[VALUES] = values;
    }
  }
  names.forEach((name, index) => Object.defineProperty(Row.prototype, name, { get(this: Row) { return this[VALUES][index]; } }));
  return (values) => new Row(values);
}

/**
 * PostgreSQL's refusal of a prepared statement whose result columns a schema change altered: a
 * `select *` or `returning *` after a newer release added a column to its table during a
 * rolling upgrade. The statement fails so on every use until it is prepared anew.
 */
export function isStalePlan(error: unknown): boolean {
  const { code, routine, message } = error as { code?: unknown; routine?: unknown; message?: unknown };
  return code === '0A000' && (routine === 'RevalidateCachedQuery' || message === 'cached plan must not change result type');
}

/**
 * pg's pool as Kysely sees it, but sending each SQL text as a named prepared statement, so
 * PostgreSQL parses and plans it once per connection instead of on every query, and the text
 * crosses the wire once (issue 8). As with SQLite, only the first STATEMENT_CACHE_SIZE texts
 * get a name; a name always stands for the same text, so every connection prepares it alike.
 *
 * A statement a schema change made stale (`isStalePlan`) starts a new generation of names, so
 * every connection prepares each statement again on its next use (the stale ones stay unused
 * until their connection closes). A query run alone is then sent again at once; one inside a
 * transaction has aborted it, and `inTransaction` runs the transaction again.
 */
export function withNamedStatements(pool: pg.Pool, Query: typeof pg.Query, committedWrite: () => void = () => {}): PostgresPool {
  const indexes = new Map<string, number>();
  let generation = 0;
  const nameOf = (text: string): string | undefined => {
    let index = indexes.get(text);
    if (index === undefined && indexes.size < STATEMENT_CACHE_SIZE) {
      index = indexes.size;
      indexes.set(text, index);
    }
    return index === undefined ? undefined : `svc_${generation}_${index}`;
  };
  // Whether a text writes a watched table, kept for as many texts as get names: the test is about
  // 1.4 µs for a lookup's 1.3 KB text, the map's 0.03.
  const watchedWrites = new BoundedMemo<string, boolean>(STATEMENT_CACHE_SIZE);
  // One wrapper per pg client: Kysely keeps its connection objects by client identity.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    // Kysely begins and ends its transactions with these texts (PostgresDriver). `rollback to
    // [savepoint] name` (Kysely's rollbackToSavepoint, or raw SQL) ends no transaction.
    let inTransactionBlock = false;
    // The transaction under way wrote a table `PostgresChangeFeed` watches: told when it ends.
    let wroteWatched = false;
    // A Query built from the text, not a config object: pg copies every config object it is
    // given, property by property (`normalizeQueryConfig`), about 1.5 µs a statement (decision 49).
    const send = (text: string, values: unknown[] | undefined) => new Promise<pg.QueryResult>((resolve, reject) => {
      const query = new Query(text, values, (error, result) => (error ? reject(error) : resolve(result as unknown as pg.QueryResult)));
      (query as { name?: string }).name = nameOf(text);
      client.query(query);
    }).catch((error: Error) => {
      // As pg does for the promise it returns: the stack taken in a reaction leads back through
      // the awaits to the caller; taken in the callback, pg's socket reader would be all it shows.
      Error.captureStackTrace(error);
      throw error;
    });
    const sendAgainIfStale = async (text: string, values: unknown[] | undefined) => {
      let ends = false;
      if (/^(begin|start transaction)\b/i.test(text)) inTransactionBlock = true;
      else if (/^(commit|rollback)\b(?!\s+to\b)/i.test(text)) {
        inTransactionBlock = false;
        ends = true;
      }
      if (watchedWrites.get(text, writesWatched)) wroteWatched = true;
      const sentIn = generation;
      try {
        return await send(text, values);
      } catch (error) {
        if (!isStalePlan(error)) throw error;
        if (sentIn === generation) generation++;
        if (inTransactionBlock) throw error;
        return await send(text, values);
      } finally {
        // Once the write is committed (or undone), before its caller goes on: a page read from
        // here on is read again (`PostgresChangeFeed.written`).
        if (wroteWatched && (ends || !inTransactionBlock)) {
          wroteWatched = false;
          committedWrite();
        }
      }
    };
    const query = (text: unknown, values?: unknown[]) =>
      typeof text === 'string' ? sendAgainIfStale(text, values) : client.query(text as pg.Submittable);
    return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release() };
  };
  return {
    connect: async () => {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (wrapper === undefined) {
        wrapper = wrap(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/**
 * A statement that writes a table `PostgresChangeFeed` watches, as Kysely and this code's raw SQL
 * write them (`insert into "posts"`, `update users`, also within a `with`): told at once when it
 * commits, where its notification would arrive a round trip later. One this misses is still heard
 * of by its notification.
 */
const WRITES_WATCHED = /\b(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+(?:only\s+)?"?(?:posts|users|categories)"?(?=[\s("]|$)/i;
const writesWatched = (text: string): boolean => WRITES_WATCHED.test(text);

/**
 * Hands a resource to its waiters in arrival order. Kysely's SQLite mutex wakes every waiter on
 * each release and lets the first to run take the connection: under load that cost a wake-up per
 * waiter per query and let newcomers overtake those already waiting (issue 8).
 */
export class FifoMutex {
  #locked = false;
  readonly #waiters: Array<() => void> = [];

  /** Nobody holds it and nobody waits. */
  get free(): boolean {
    return !this.#locked;
  }

  lock(): Promise<void> {
    if (!this.#locked) {
      this.#locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  unlock(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#locked = false;
  }
}

/**
 * Kysely's SQLite driver with its one connection handed out in arrival order (`turn`), and a
 * rollback only while a transaction is open.
 */
class FairSqliteDriver extends SqliteDriver {
  constructor(
    config: SqliteDialectConfig,
    private readonly turn: FifoMutex,
    private readonly inTransaction: () => boolean,
    private readonly takeWriteLock: () => Promise<void>,
  ) {
    super(config);
  }

  /**
   * `BEGIN IMMEDIATE`: the write lock is taken at BEGIN, waiting up to `busy_timeout` for another
   * instance on the file (`writeLockTaker`). A deferred BEGIN took it at the first write, and a
   * transaction (a group of them, `SqliteGroupCommit`) that read first kept the snapshot of that
   * read: a commit by the other instance in between made the write fail at once with
   * SQLITE_BUSY_SNAPSHOT (a 503), which no wait cures.
   */
  override async beginTransaction(): Promise<void> {
    await this.takeWriteLock();
  }

  /**
   * SQLite ends a transaction itself on some errors: a full disk (SQLITE_FULL) at a write or at
   * COMMIT, an I/O error. A ROLLBACK then fails with "cannot rollback - no transaction is active",
   * and Kysely throws that instead of the error that ended the transaction, so the log said
   * nothing of the full disk.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.inTransaction()) await super.rollbackTransaction(connection);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.turn.lock();
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    this.turn.unlock();
  }
}

/**
 * SQLite runs DDL inside transactions; Kysely's adapter says it does not (for the `PRAGMA
 * foreign_keys` of table rebuilds, which no migration here makes), so its migrator ran each
 * statement on its own, and a start killed mid-migration left a migration half applied that no
 * later start could apply (`duplicate column name`, attack63). Said so, the migrator runs the
 * migrations and their bookkeeping in one transaction: all of them land, or none.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class FairSqliteDialect extends SqliteDialect {
  constructor(
    private readonly driverConfig: SqliteDialectConfig,
    private readonly turn: FifoMutex,
    private readonly inTransaction: () => boolean,
    private readonly takeWriteLock: () => Promise<void>,
  ) {
    super(driverConfig);
  }

  override createDriver(): Driver {
    return new FairSqliteDriver(this.driverConfig, this.turn, this.inTransaction, this.takeWriteLock);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/**
 * The longest pause between two tries for a write lock another connection holds. The holder
 * begins its next group as soon as one commits, so a waiter gets the lock only if it tries while
 * the holder has none queued: with pauses of up to 50 ms the waiting instance served up to 1.8 ×
 * fewer refreshes than the holder and its slowest waited 1.5 s (docs/performance.md decision 36).
 * A try that fails costs about 5 µs, so 2 ms spends under 0.3 % of a core while waiting.
 */
const WRITE_LOCK_PAUSE_MAX_MS = 2;

/**
 * `BEGIN IMMEDIATE` that waits for another connection's write lock without holding up the event
 * loop (`untilNotBusy`): tried without waiting, and tried again after a pause, until the
 * connection's `busy_timeout` has passed; then its SQLITE_BUSY is thrown as before.
 */
function writeLockTaker(sqlite: SQLite.Database, statements: StatementCache): () => Promise<void> {
  const currentWait = sqlite.prepare('pragma busy_timeout').pluck();
  const setWaits = new Map<number, SQLite.Statement>();
  const setWait = (ms: number) => {
    let statement = setWaits.get(ms);
    if (statement === undefined) setWaits.set(ms, (statement = sqlite.prepare(`pragma busy_timeout = ${ms}`)));
    statement.get();
  };
  return async () => {
    const waitMs = Number(currentWait.get());
    setWait(0);
    try {
      // Through the connection's statements, as every query: traced, and heard by the write watch.
      await untilNotBusy(() => statements.prepare(BEGIN_IMMEDIATE).run([]), waitMs, { firstPauseMs: 1, maxPauseMs: WRITE_LOCK_PAUSE_MAX_MS });
    } finally {
      setWait(waitMs);
    }
  };
}

/**
 * The SQLite file holds password hashes and signing keys: it is created readable by its owner
 * only (INTERFACE section 8), and an existing one is made so, as are its `-wal` and `-shm` files
 * (SQLite gives new ones the database file's mode). Each is changed through a descriptor of a
 * regular file (`refuseUnlessOwnFile`), never by path. Run as root, only a database reached through
 * directories only root can change is opened (`makeDirectoriesFor`): in the service user's
 * `data/`, a command is run as that user (docs/operations.md).
 */
function createOwnerOnly(path: string): void {
  const what = 'the SQLite database';
  makeDirectoriesFor(path, what);
  if (!isOwnerOnlyFile(path)) {
    // Not waiting: a FIFO at the name fails here instead of holding the start.
    const descriptor = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK, 0o600);
    try {
      refuseUnlessOwnFile(descriptor, path, what);
      fchmodSync(descriptor, 0o600);
    } finally {
      closeSync(descriptor);
    }
  }
  for (const file of [`${path}-wal`, `${path}-shm`, `${path}-journal`]) makeOwnerOnly(file, what);
}

/** `file`, if there, made 0600 through its descriptor (unless it is already: `isOwnerOnlyFile`); a symlink there is refused (SQLite would not open it either). */
function makeOwnerOnly(file: string, what: string): void {
  if (isOwnerOnlyFile(file)) return;
  let descriptor: number;
  try {
    descriptor = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw new Error(`cannot open ${what}'s file ${file}: ${code === 'ELOOP' ? 'it is a symbolic link' : (error as Error).message}`, { cause: error });
  }
  try {
    refuseUnlessOwnFile(descriptor, file, `${what}'s file`);
    fchmodSync(descriptor, 0o600);
  } finally {
    closeSync(descriptor);
  }
}

export function openDatabase(target: DatabaseTarget, options: { poolSize?: number } = {}): DatabaseHandle {
  if (target.kind === 'sqlite') {
    const file = target.path !== ':memory:';
    if (file) createOwnerOnly(target.path);
    const turnFile = file ? prepareMigrationTurnFile(target.path) : undefined;
    const sqlite = new SQLite(target.path);
    if (file) {
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    }
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma(`cache_size = -${SQLITE_PAGE_CACHE_KIB}`);
    const checkpointer = file ? startCheckpointer(target.path) : undefined;
    const watch = new SqliteWriteWatch(sqlite);
    const statements = withStatementCache(sqlite, (text) => watch.wrote(text), sqliteQueryTracer());
    const turn = new FifoMutex();
    const db = new Kysely<Database>({ dialect: new FairSqliteDialect({ database: statements }, turn, () => sqlite.inTransaction, writeLockTaker(sqlite, statements)) });
    // better-sqlite3 runs a statement synchronously, so while nobody holds the one connection a
    // hot query runs at once: nothing can interleave, and it skips a dozen promise hops through
    // Kysely's executor and mutexes, which cost more than the query (issue 8). A transaction
    // holds the one connection until it ends, so its own queries run at once too.
    // `rowView` of each statement read as arrays, by its SQL text: made at its first run.
    const views = new Map<string, (values: unknown[]) => unknown>();
    const run = (query: CompiledQuery<unknown>, asViews: boolean): QueryResult<unknown> => {
      const statement = statements.prepare(query.sql);
      if (statement.reader && asViews) {
        let view = views.get(query.sql);
        if (view === undefined) {
          view = rowView(statement.columns().map((column) => column.name));
          views.set(query.sql, view);
        }
        // The statement is Kysely's too: raw for this one synchronous call only.
        statement.raw(true);
        try {
          return { rows: (statement.all(query.parameters) as unknown[][]).map(view) };
        } finally {
          statement.raw(false);
        }
      }
      if (statement.reader) return { rows: statement.all(query.parameters) };
      const { changes, lastInsertRowid } = statement.run(query.parameters);
      return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
    };
    const group = new SqliteGroupCommit(db);
    const queries = new CompiledQueries({
      transaction: (work) => group.run(work),
      runNow: (query, asViews) => (turn.free ? run(query, asViews) : undefined),
      // A free connection means the transaction has ended: Kysely's executor says so.
      runInTransaction: (query, asViews) => (turn.free ? undefined : run(query, asViews)),
      // While a transaction or a queued query holds the connection, its writes may be under way.
      generation: (reads) => (turn.free ? watch.generation(reads) : undefined),
      reads: (text) => watch.reads(text),
      quiet: (text) => watch.quiet(text),
    }, file ? sqliteSnapshots(target.path) : undefined);
    return {
      db,
      dialect: 'sqlite',
      queries,
      ping: async () => { await sql`select 1`.execute(db); },
      inMigrationTurn: (work) => (turnFile === undefined ? work(db) : inMigrationTurn(turnFile, () => work(db))),
      reportTo: (log) => {
        queries.reportTo(log);
        checkpointer?.reportTo(log);
      },
      close: async () => {
        await checkpointer?.stop();
        await db.destroy();
      },
    };
  }
  const driver = loadPg();
  const pool = postgresPool(driver, target.url, {
    max: options.poolSize ?? 10,
    // A query does not wait forever on a server that stopped answering.
    query_timeout: 10_000,
    // And the server ends a statement before the client stops waiting for it: one left running
    // (waiting for a lock) would commit after its caller was told it failed, a flush of counts
    // added twice (attack93), and hold the connection the pool lends out next.
    statement_timeout: 9_000,
    idleTimeoutMillis: 30_000,
  });
  const changes = new PostgresChangeFeed({
    listener: () => new driver.Client({ connectionString: target.url, keepAlive: true, connectionTimeoutMillis: 5000, application_name: 'svc change feed', types: pgTypes(driver) }),
    notifyThroughPool: async (channel, payload) => {
      const { rows } = await sql<{ schema: string }>`select pg_notify(${channel}, ${payload}),
        (select nspname from pg_namespace where oid = (select relnamespace from pg_class where oid = 'posts'::regclass)) as schema`.execute(db);
      return rows[0]!.schema;
    },
  });
  const db = new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool: withNamedStatements(pool, driver.Query, () => changes.written()) }) });
  const queries: CompiledQueries = new CompiledQueries(undefined, (work) =>
    db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute((trx) => work(trx, queries)), changes);
  return {
    db,
    dialect: 'postgres',
    queries,
    ping: async () => { await sql`select 1`.execute(db); },
    inMigrationTurn: async (work) => {
      // One connection, which the migrations' lock and their statements share (`migrate.ts`),
      // waited on by the client as long as the server works (TCP keepalive tells a lost server).
      const migrations = new Kysely<Database>({
        dialect: new OwnSchemaPostgresDialect({ pool: postgresPool(driver, target.url, { max: 1, keepAlive: true }) }),
      });
      try {
        // A role's or server's own default must not cut an upgrade short either.
        await sql`set statement_timeout = 0`.execute(migrations);
        // But a statement waiting for a table's lock stops soon: while it waits, every query of
        // the instances serving the site queues behind it (attack95: each page a 503 after 9 s,
        // for as long as a `psql` session kept its transaction open). `migrateToLatest` tries again.
        await sql`set lock_timeout = ${sql.lit(`${MIGRATION_LOCK_WAIT_MS}ms`)}`.execute(migrations);
        // And ends when the start that sent it is gone (PostgreSQL 14 and later), not at its own end.
        await sql`select set_config('client_connection_check_interval', '1s', false) where current_setting('server_version_num')::int >= 140000`.execute(migrations);
        return await work(migrations);
      } finally {
        await migrations.destroy();
      }
    },
    reportTo: (log) => {
      queries.reportTo(log);
      changes.reportTo(log);
    },
    close: async () => {
      await changes.close();
      await db.destroy();
    },
  };
}

/** How long a migration's statement waits for a lock on PostgreSQL before giving up (and `migrateToLatest` trying again). */
export const MIGRATION_LOCK_WAIT_MS = 5_000;

/** A pg pool of `url` with `limits`, reading instants as numbers, whose lost connections crash nothing. */
function postgresPool(driver: typeof pg, url: string, limits: pg.PoolConfig): pg.Pool {
  const pool = new driver.Pool({
    connectionString: url,
    // A request never waits long for a connection: a PostgreSQL outage becomes a prompt 503.
    connectionTimeoutMillis: 5000,
    ...limits,
    types: pgTypes(driver),
  });
  // A client losing its connection (a restarted server, the network cut) must not crash the
  // process. pg emits 'error' on the client, and the pool listens (its 'error') only while the
  // client is idle, so every client gets a listener of its own as it connects: one lent out to a
  // request then fails that request's query (a 503) and is dropped by the pool on release.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * Runs `work` in one consistent picture of the database, as of its first read, which waits for no
 * writer and holds none up for as long as `work` lasts (the data download, read as fast as its
 * client takes it): PostgreSQL a REPEATABLE READ READ ONLY transaction on a pooled connection;
 * SQLite a read transaction on a read-only connection of its own, which sees the WAL as it was at
 * its first read while the one connection of the site goes on writing (and its checkpoints, PASSIVE,
 * stop short of what the picture still reads, so the WAL grows until it ends).
 */
export type SnapshotOpener = <T>(work: (db: Kysely<Database>, queries: CompiledQueries) => Promise<T>) => Promise<T>;

/** A SQLite file's `SnapshotOpener`: a connection per picture, closed with it. */
function sqliteSnapshots(path: string): SnapshotOpener {
  return async (work) => {
    const connection = new SQLite(path, { readonly: true, fileMustExist: true });
    connection.pragma('busy_timeout = 5000');
    const reader = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
    try {
      // Kysely's `begin` is deferred: the picture is taken at the first read. Queries of its own,
      // which have no shortcut onto the site's connection and remember nothing.
      return await reader.transaction().execute((trx) => work(trx, new CompiledQueries()));
    } finally {
      await reader.destroy();
    }
  };
}

/** Builds a query from placeholders; it must not branch on values (see `CompiledQueries`). */
export type QueryBuilder<R> = (db: Kysely<Database>) => Compilable<R>;

/** What SQLite's one connection offers `CompiledQueries` (see `openDatabase`). */
export interface SqliteShortcuts {
  /** Runs `work` in a transaction committed with those queued beside it (`SqliteGroupCommit`). */
  transaction<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /** Runs a query at once when the connection is free, else `undefined`; `asViews`: its rows as `CompiledQueries.rowViews` reads them. */
  runNow(query: CompiledQuery<unknown>, asViews: boolean): QueryResult<unknown> | undefined;
  /** Runs a query of the transaction that holds the connection at once, else `undefined`. */
  runInTransaction(query: CompiledQuery<unknown>, asViews: boolean): QueryResult<unknown> | undefined;
  /** `SqliteWriteWatch.generation` of the tables `reads` names, or `undefined` while the connection is held. */
  generation(reads: TableReads): number | undefined;
  /** `SqliteWriteWatch.reads`: the tables the query `text` reads. */
  reads(text: string): TableReads;
  /** `SqliteWriteWatch.quiet`. */
  quiet(text: string): void;
}

/**
 * Times a new transaction (or a statement sent alone, `aloneRetried`) is run when PostgreSQL ended
 * it as a deadlock's victim (40P01), or for a statement a newer release's migration made stale (`isStalePlan`).
 */
const TRANSACTION_ATTEMPTS = 3;

/**
 * Runs `work` in the transaction `db` already is, or in a new one. A new one that PostgreSQL
 * chose as a deadlock's victim is rolled back and run again: a family revocation holding a token
 * that a rotation begun after it must erase the sealed answer of, while it wants that rotation's
 * token, can deadlock however both order their rows, and neither must fail for it. A statement
 * made stale by a newer release's migration aborts the transaction once per connection; the next
 * attempt prepares it anew (`withNamedStatements`).
 */
export function inTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db);
  return attempted(() => db.transaction().execute(work), (error) => isDeadlockVictim(error) || isStalePlan(error));
}

/**
 * Runs one statement sent alone (its own transaction) again when PostgreSQL chose it as a
 * deadlock's victim, as `inTransaction` runs a transaction again: rolled back whole, it is run
 * anew on what is committed since. (A stale statement sent alone is already sent again, `withNamedStatements`.)
 */
export function aloneRetried<T>(statement: () => Promise<T>): Promise<T> {
  return attempted(statement, isDeadlockVictim);
}

const isDeadlockVictim = (error: unknown): boolean => (error as { code?: unknown }).code === '40P01';

/** `attempt`, run again while it fails as `again` says, TRANSACTION_ATTEMPTS times in all. */
async function attempted<T>(attempt: () => Promise<T>, again: (error: unknown) => boolean): Promise<T> {
  for (let count = 1; ; count++) {
    try {
      return await attempt();
    } catch (error) {
      if (count >= TRANSACTION_ATTEMPTS || !again(error)) throw error;
    }
  }
}

/** The condition of a `many` query of `CompiledQueries.lookup`: `column` is one of the keys, its one parameter. */
export function keyIsAnyOf(column: string) {
  return sql<boolean>`${sql.ref(column)} = any(${sql.val<string[]>([])})`;
}

/** One read of `CompiledQueries.readTogether`: its parameters when it runs alone, and among others. */
export interface ReadTogether {
  one: readonly unknown[];
  many: readonly unknown[];
}

/** A remembered row and the write generation of its query's tables it was read in. */
interface Remembered {
  generation: number;
  row: unknown;
}

/** The rows `firstRemembered` and `rememberedAnswer` keep for one query, by key. */
interface RememberedQuery {
  /**
   * The write generation of the tables the query reads now, or undefined when it cannot be known:
   * on SQLite `SqliteWriteWatch`'s for the tables named, on PostgreSQL `PostgresChangeFeed`'s,
   * which watches the tables a remembered answer may read.
   */
  generation: () => number | undefined;
  rows: Map<string | number, Remembered>;
}

/** The row remembered for `key` if it was read at `generation`: no table its query reads written since. */
function rememberedAt<R>(query: RememberedQuery, key: string | number, generation: number): R | undefined {
  const hit = query.rows.get(key);
  return hit !== undefined && hit.generation === generation ? hit.row as R : undefined;
}

/** Keeps `row` for `key` as read at `generation`, at most `most` keys: past it, the oldest goes first. */
function remember(query: RememberedQuery, key: string | number, generation: number, row: unknown, most: number): void {
  const rows = query.rows;
  if (rows.size >= most && !rows.has(key)) rows.delete(rows.keys().next().value!);
  rows.set(key, { generation, row });
}

/** Rows `firstRemembered` keeps per query. */
const REMEMBERED_ROWS = 5_000;

/**
 * Answers `rememberedAnswer` keeps per kind: pages of posts, each at most 50 (INTERFACE section
 * 7; a profile page's 50), about 0.5 KB a post, so a few MB at most (issue 35 item 5).
 */
const REMEMBERED_ANSWERS = 128;

/**
 * The queries of the hot paths, each built and compiled once per database and shared with its
 * transactions: building and compiling a Kysely query cost as much as running it there (issue 8,
 * docs/performance.md). A builder is compiled with placeholder values; every call binds its own
 * values, in the order they appear in the compiled SQL. The contract tests run each on both dialects.
 */
export class CompiledQueries {
  private readonly compiled = new Map<QueryBuilder<unknown>, CompiledQuery<unknown>>();
  private readonly remembered = new Map<QueryBuilder<unknown>, RememberedQuery>();
  private readonly answers = new Map<readonly QueryBuilder<unknown>[], RememberedQuery>();
  private readonly batches = new Map<QueryBuilder<unknown>, LookupBatch<unknown>>();
  private readonly readsTogether = new Map<object, TurnBatch<ReadTogether, unknown[]>>();
  private log: Log = QUIET;

  /**
   * `sqlite`: the embedded database's shortcuts; PostgreSQL has none. `snapshot`: opens one
   * consistent picture of the database for `readSnapshot`; none where no other connection can see
   * the data (an in-memory SQLite database) or the queries are a picture's own.
   */
  constructor(private readonly sqlite?: SqliteShortcuts, private readonly snapshot?: SnapshotOpener, private readonly changes?: PostgresChangeFeed) {}

  /** Where `absorbed` reports from now on: the server's log, once the app gives it (`DatabaseHandle.reportTo`). */
  reportTo(log: Log): void {
    this.log = log;
  }

  /**
   * Reports a failure a store absorbed, its answer standing without what failed, so that an
   * operator still learns the database failed. The line carries the error alone (its type,
   * message and stack: `errorSummary`), never the statement's parameters. `log`: the log of the
   * request it was absorbed for, whose lines carry its id; else the server's.
   */
  absorbed(error: unknown, what: string, log: Log = this.log): void {
    log.error({ err: error }, what);
  }

  /**
   * Whether several writes can go as one statement (PostgreSQL's data-modifying `WITH`): on
   * PostgreSQL each statement is a round trip, on SQLite a call into the same process, which has
   * no such statement.
   */
  get writesCombine(): boolean {
    return this.sqlite === undefined;
  }

  /**
   * `Stores.transaction`: on SQLite committed in groups (`SqliteGroupCommit`), on PostgreSQL one
   * transaction each (`inTransaction`, which retries deadlock victims). Inside a transaction, `work`
   * runs in it.
   */
  transaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.sqlite === undefined || db.isTransaction ? inTransaction(db, work) : this.sqlite.transaction(work);
  }

  /**
   * `Stores.readSnapshot`: `work` over one consistent picture of the database (`SnapshotOpener`),
   * with the queries to read it by; in a transaction, or with no picture to open, over `db` as it is.
   */
  readSnapshot<T>(db: Kysely<Database>, work: (db: Kysely<Database>, queries: CompiledQueries) => Promise<T>): Promise<T> {
    return db.isTransaction || this.snapshot === undefined ? work(db, this) : this.snapshot(work);
  }

  private compile<R>(db: Kysely<Database>, build: QueryBuilder<R>): CompiledQuery<R> {
    let query = this.compiled.get(build) as CompiledQuery<R> | undefined;
    if (query === undefined) {
      query = build(db).compile();
      this.compiled.set(build, query);
    }
    return query;
  }

  /** Runs `build`'s query with `parameters` (in the compiled SQL's order). */
  execute<R>(db: Kysely<Database>, build: QueryBuilder<R>, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    return this.run(db, build, parameters, false);
  }

  /**
   * `execute`'s rows for the hot reads of many rows (a page of posts), to be read by column name
   * and made into the caller's own objects: on SQLite's shortcut the driver hands them over as
   * arrays, each seen through a view that reads its columns by name, so no object is built per
   * row in C++ (decision 34); elsewhere (Kysely's executor, PostgreSQL) they are the driver's row
   * objects. A view has no properties of its own, so a row must not be spread or serialised.
   */
  async rowViews<R>(db: Kysely<Database>, build: QueryBuilder<R>, parameters: readonly unknown[]): Promise<R[]> {
    return (await this.run(db, build, parameters, true)).rows;
  }

  private run<R>(db: Kysely<Database>, build: QueryBuilder<R>, parameters: readonly unknown[], asViews: boolean): Promise<QueryResult<R>> {
    const query = this.compile(db, build);
    // A builder's literals become parameters too: a count that differs means a value went astray.
    if (parameters.length !== query.parameters.length) {
      throw new Error(`compiled query takes ${query.parameters.length} parameters, got ${parameters.length}: ${query.sql}`);
    }
    const bound = { ...query, parameters };
    // On SQLite a query skips Kysely's executor when it can have the connection at once.
    const now = this.sqlite === undefined ? undefined
      : db.isTransaction ? this.sqlite.runInTransaction(bound, asViews) : this.sqlite.runNow(bound, asViews);
    return now !== undefined ? Promise.resolve(now as QueryResult<R>) : db.executeQuery(bound);
  }

  async first<R>(db: Kysely<Database>, build: QueryBuilder<R>, parameters: readonly unknown[]): Promise<R | undefined> {
    return (await this.execute(db, build, parameters)).rows[0];
  }

  /**
   * A write that changes nothing a remembered query selects (when a token was last used, the DPoP
   * replay cache): it leaves the rows `firstRemembered` keeps standing, so `build` must not write
   * a column a remembered query selects.
   */
  executeQuiet<R>(db: Kysely<Database>, build: QueryBuilder<R>, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    this.sqlite?.quiet(this.compile(db, build).sql);
    return this.execute(db, build, parameters);
  }

  /**
   * One row by a unique key, for the lookups that most requests make (the bearer lookups of the
   * API, the client of a token request, the session of a page; issue 8). On PostgreSQL the lookups
   * asked for in one turn of the event loop go out together as one query, `many`, which takes the
   * array of keys as its only parameter: one round trip, one parse of the reply, one execution in
   * PostgreSQL for all of them. A key alone in its turn (or asked only by several requests of the
   * turn, as every token request of one app asks for its client) goes as `one`: PostgreSQL counts
   * the array's elements when it plans `many`, so for some tables the plan it keeps for any array
   * never looks cheaper than one made for a single key, and it planned `many` anew at every
   * execution (the clients': no generic plan in 200 executions, twice the server's CPU of `one`;
   * decision 58, and decision 51 for the same trap). On SQLite `one` (which takes the key) runs, remembered
   * (`firstRemembered`) when `remember` is set: for the reads that come many times between two
   * writes, as API calls do; on a path that writes, remembering costs a check and never finds the
   * row again. A lookup still reads what is committed after it was asked for. In a transaction
   * `one` runs at once.
   */
  lookup<R>(db: Kysely<Database>, key: string, how: { one: QueryBuilder<R>; many: QueryBuilder<R>; keyOf: (row: R) => string; remember?: true }): Promise<R | undefined> {
    if (db.isTransaction) return this.first(db, how.one, [key]);
    if (this.sqlite !== undefined) return how.remember ? this.firstRemembered(db, how.one, key) : this.first(db, how.one, [key]);
    let batch = this.batches.get(how.many) as LookupBatch<R> | undefined;
    if (batch === undefined) {
      batch = new LookupBatch((keys) => this.execute(db, keys.length === 1 ? how.one : how.many, keys.length === 1 ? keys : [keys]).then((result) => result.rows), how.keyOf);
      this.batches.set(how.many, batch as LookupBatch<unknown>);
    }
    return batch.load(key);
  }

  /**
   * PostgreSQL: the rows of one read, sent with the other reads of the same query asked for in
   * the same turn of the event loop as one statement, as `lookup` sends lookups. A read alone in
   * its turn, or in a transaction, runs `one` with `read.one`. Several run `many` once, with one
   * parameter: a JSON array whose elements are the reads' `read.many` (each an array), which it
   * reads with `jsonb_array_elements(…) with ordinality`, naming in each row's `i` the read it
   * belongs to, counted from 1. JSON, not an array parameter for each of a read's values:
   * PostgreSQL counts an array's elements when it plans, so the plan it keeps for any call never
   * looked cheaper than one made for the call's arrays, and it planned anew at every execution,
   * which cost it more than running the statement (docs/performance.md, decision 51). Alone, a
   * read costs both sides less as `one`. Each read is sent as asked, even when another asked the
   * same: these are reads of many rows (a page of posts), which two requests of one turn rarely
   * share. `how` is a pair built once: its reads are batched by it. A statement that fails fails
   * every read in it, as a batched lookup does.
   */
  readTogether<R>(db: Kysely<Database>, how: { one: QueryBuilder<R>; many: QueryBuilder<R & { i: number }> }, read: ReadTogether): Promise<R[]> {
    if (db.isTransaction) return this.rowViews(db, how.one, read.one);
    let batch = this.readsTogether.get(how) as TurnBatch<ReadTogether, R[]> | undefined;
    if (batch === undefined) {
      batch = new TurnBatch(async (reads) => {
        if (reads.length === 1) return [await this.rowViews(db, how.one, reads[0]!.one)];
        const answers = reads.map((): R[] => []);
        for (const row of await this.rowViews(db, how.many, [JSON.stringify(reads.map((each) => each.many))])) answers[row.i - 1]!.push(row);
        return answers;
      });
      this.readsTogether.set(how, batch as TurnBatch<ReadTogether, unknown[]>);
    }
    return batch.ask(read);
  }

  /**
   * Whether `firstOfEachRemembered` answers from memory (SQLite). On PostgreSQL it would read each
   * row again, a round trip, where a join in the caller's query costs none.
   */
  get remembers(): boolean {
    return this.sqlite !== undefined;
  }

  /**
   * `first` of `build` for each of `keys` (its one parameter), as `firstRemembered` reads one, with
   * one generation for all: for the category names of a page of posts, which SQLite read by twenty
   * seeks of the categories table through a join, 8.6 µs of a first page's 45 (decision 44). A
   * key read before, with no write since to a table the query reads, costs a map lookup.
   */
  async firstOfEachRemembered<R>(db: Kysely<Database>, build: QueryBuilder<R>, keys: readonly (string | number)[]): Promise<Array<R | undefined>> {
    const query = this.remembered.get(build);
    const generation = query === undefined || db.isTransaction ? undefined : query.generation();
    const found: Array<R | undefined> = [];
    for (const key of keys) {
      const remembered = generation === undefined ? undefined : rememberedAt<R>(query!, key, generation);
      found.push(remembered !== undefined ? remembered
        : db.isTransaction ? await this.first(db, build, [key]) : await this.firstRemembered(db, build, key));
    }
    return found;
  }

  /**
   * `first` of `build` with the one parameter `key`, answered from memory when it found a row for
   * `key` before and no table the query reads has been written since, by this process or another
   * (`SqliteWriteWatch`); on SQLite, outside transactions (`lookup`). For the bearer lookups (issue
   * 8), the client of a token request (issue 35) and a page's category names: a token's row, its
   * grant, client and user, a category, do not change between most requests, and a write to a
   * table the query reads (or one that cascades into it, or one the watch cannot place, or any
   * commit of another connection) makes every row remembered for the query be read again.
   */
  private async firstRemembered<R>(db: Kysely<Database>, build: QueryBuilder<R>, key: string | number): Promise<R | undefined> {
    let query = this.remembered.get(build);
    if (query === undefined) {
      const sqlite = this.sqlite;
      if (sqlite === undefined) return this.first(db, build, [key]);
      const reads = sqlite.reads(this.compile(db, build).sql);
      query = { generation: () => sqlite.generation(reads), rows: new Map() };
      this.remembered.set(build, query);
    }
    const generation = query.generation();
    if (generation === undefined) return this.first(db, build, [key]);
    const remembered = rememberedAt<R>(query, key, generation);
    if (remembered !== undefined) return remembered;
    // No await before the query: with the connection free, it runs in this same turn, so the row
    // is what the database held at `generation`.
    const row = await this.first(db, build, [key]);
    if (row === undefined) query.rows.delete(key);
    else remember(query, key, generation, row, REMEMBERED_ROWS);
    return row;
  }

  /**
   * What `read` answered for `key` before, while no table that the queries `reads` names read has
   * been written since, by this process or another: on SQLite as `firstRemembered` keeps rows; on
   * PostgreSQL while `PostgresChangeFeed` hears of no change to the tables it watches (which must
   * be all that `reads` read), and only while it knows its notifications arrive. Else `read` runs,
   * as it always does in a transaction. For an answer made of
   * several reads: a page of posts (its author's row, the page, the category names), which API
   * clients read again and again between two writes (issue 35 item 3). The generation is taken
   * before `read` begins, so a write while it reads has the answer read again next time, never an
   * older answer kept as newer. `reads` is a list built once, which names the kind of answer. An
   * answer is shared by every caller that asks for it: none may change it.
   */
  async rememberedAnswer<T>(db: Kysely<Database>, reads: readonly QueryBuilder<unknown>[], key: string, read: () => Promise<T>): Promise<T> {
    if (db.isTransaction) return read();
    let answers = this.answers.get(reads);
    if (answers === undefined) {
      const generationOf = this.answersGeneration(db, reads);
      if (generationOf === undefined) return read();
      answers = { generation: generationOf, rows: new Map() };
      this.answers.set(reads, answers);
    }
    const generation = answers.generation();
    if (generation === undefined) return read();
    const remembered = rememberedAt<T>(answers, key, generation);
    if (remembered !== undefined) return remembered;
    const answer = await read();
    remember(answers, key, generation, answer, REMEMBERED_ANSWERS);
    return answer;
  }

  /** How `rememberedAnswer` learns the generation of what `reads` read; undefined where nothing tells it (no change feed). */
  private answersGeneration(db: Kysely<Database>, reads: readonly QueryBuilder<unknown>[]): (() => number | undefined) | undefined {
    const sqlite = this.sqlite;
    if (sqlite !== undefined) {
      const tables = sqlite.reads(reads.map((build) => this.compile(db, build).sql).join('\n'));
      return () => sqlite.generation(tables);
    }
    const changes = this.changes;
    return changes === undefined ? undefined : () => changes.generation();
  }
}
