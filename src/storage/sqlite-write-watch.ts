/**
 * Knows when a table of a SQLite database may have changed, so that a read remembered since then
 * can be trusted without running it again (`CompiledQueries.firstRemembered`, issues 8 and 35).
 *
 * Each table has a write counter. A write statement of this connection moves the counter of the
 * table it writes (`insert into "x"`, `insert or replace into "x"`, `replace into "x"`, an upsert,
 * `update "x"`, `delete from "x"`, as Kysely writes them) and of every table a foreign key makes
 * it change in turn (CASCADE, SET NULL or SET DEFAULT: the ON DELETE actions of a delete or a
 * replace, the ON UPDATE ones of an update or an upsert; an insert sets none off, unless its
 * table resolves a constraint's conflicts by REPLACE, which makes it a replace), transitively. A
 * statement it cannot place, one that writes a table with triggers or whose foreign keys lead to
 * one, a schema change, and any commit of another connection to the file (another process's
 * included: SQLite's `data_version` changes exactly then, https://sqlite.org/pragma.html#pragma_data_version)
 * move every counter at once. Quiet writes (see `quiet`) move none, unless their table has triggers.
 *
 * A remembered read names the tables its SQL reads (`reads`) and keeps `generation(reads)`, a sum
 * of their counters (counters only grow, so the sum stands exactly while each does). It is
 * therefore never older than the last write that could have changed the tables it read, which is
 * what lets a revoked token, a deactivated client or a rotated secret be refused from the next
 * request on (INTERFACE section 2), while writes to other tables (a token issued, a session
 * touched) leave it standing.
 *
 * Another connection's commit is looked for once per turn of the event loop: the requests that
 * arrive in one turn are concurrent, and reading `data_version` was a twentieth of a `/me`
 * (docs/performance.md). This connection's own writes count at once. A turn ends at the event
 * loop's check phase (`setImmediate`) and at the start of each poll for I/O (`loopTurn`): a
 * request's I/O callback runs after the poll that brought it began, so a `data_version` read in
 * its turn was read after the request arrived. (Ended at the check phase alone, a read made in the
 * check phase or in a timer was trusted through the next poll, by requests that arrived after
 * another connection's commit.) With more than 1,024 connections ready at once libuv polls again
 * within the same turn, up to 48 times, so a turn of a saturated server lasts seconds (attack91:
 * another instance's commit unseen for 1.9–3.7 s under 2,500 busy connections): a read is also
 * trusted for at most `DATA_VERSION_TRUSTED_MS`.
 */
import { performance } from 'node:perf_hooks';
import type SQLite from 'better-sqlite3';

/**
 * How long a `data_version` read is trusted within one turn of the event loop: another
 * connection's commit counts from at most this long after it. A read costs about 4 µs, so at most
 * 4 ms a second.
 */
export const DATA_VERSION_TRUSTED_MS = 1;

/**
 * How this connection's transactions begin (`FairSqliteDriver`). SQLite counts it a write, since it
 * takes the write lock, but it changes nothing: it is quiet, or every transaction, one that only
 * reads included, would make every remembered read run again.
 */
export const BEGIN_IMMEDIATE = 'begin immediate';

/**
 * A write statement's verb (`insert`, `replace`, `update`, `delete`, with the conflict resolution
 * after `or`) and the table it writes, its first identifier after the verb; then a space, `(` or
 * the end (not `.`: a schema-qualified name is not placed).
 */
const WRITE_TARGET = /^\s*(?:(insert|update)(?:\s+or\s+([a-z]+))?(?:\s+into)?|(replace)\s+into|(delete)\s+from)\s+(?:"((?:[^"]|"")+)"|([a-z_][a-z0-9_$]*))(?=[\s(]|$)/i;
/** An upsert (`insert … on conflict … do update`): it may update rows of its table. */
const UPSERT = /\bon\s+conflict\b/i;
/**
 * A statement that changes the schema: the tables, their foreign keys and triggers are read again.
 * One spelt otherwise (a comment first) is caught by its schema version (`#unplaced`).
 */
const SCHEMA_CHANGE = /^\s*(?:create|drop|alter)\b/i;
/** A constraint's conflict resolution in a CREATE TABLE that deletes the rows a write conflicts with. */
const ON_CONFLICT_REPLACE = /\bon\s+conflict\s+replace\b/i;
/** A string literal (skipped), or an identifier: quoted, bracketed, backquoted or bare. */
const TOKEN = /'(?:[^']|'')*'|"((?:[^"]|"")+)"|`((?:[^`]|``)+)`|\[([^\]]+)\]|([a-z_][a-z0-9_$]*)/gi;
/** The foreign key actions by which a write to the parent changes rows of the child. */
const CHANGES_CHILD = new Set(['CASCADE', 'SET NULL', 'SET DEFAULT']);

/**
 * What a statement does to existing rows of a table, which decides the foreign key actions it sets
 * off: an update's are the `ON UPDATE` ones, a delete's the `ON DELETE` ones (a child's row that
 * CASCADE deletes is deleted, one that SET NULL or SET DEFAULT changes is updated). An insert
 * changes no existing row and sets none off.
 */
type RowChange = 'update' | 'delete';

/** A foreign key from `child` to a parent, by the change of a parent row that changes child rows, and how. */
interface ChildKey {
  child: string;
  onUpdate: RowChange | undefined;
  onDelete: RowChange | undefined;
}

/** What a write moves: the counters of these tables, or (`null`) all of them. */
type Moves = readonly number[] | null;

/** Write texts whose `Moves` are kept; past it, a text is placed again on each run (bulk inserts vary). */
const KEPT_MOVES = 1_000;

/**
 * The count of libuv's polls for I/O (`uv_metrics_info`, Node 20.18 and later), which moves just
 * before each poll: equal for two calls only when no poll began between them. Earlier Nodes have
 * none (`undefined`): there a turn ends at the check phase alone.
 */
const timing = performance.nodeTiming as { uvMetricsInfo?: { loopCount: number } };
export const loopTurn: (() => number) | undefined = timing.uvMetricsInfo === undefined ? undefined : () => timing.uvMetricsInfo!.loopCount;

/** The tables a query reads (`SqliteWriteWatch.reads`), for `generation`. */
export interface TableReads {
  readonly text: string;
  /** The schema this was worked out against (`SqliteWriteWatch.#schema`). */
  schema: number;
  /** Indexes of the tables' counters, or `undefined`: it may read anything (a view, SQLite's own tables, nothing recognised). */
  tables: readonly number[] | undefined;
  /**
   * Added to the counters' sum, so that the generations of these reads keep growing when a schema
   * change gives them other tables (whose counters may sum to less): an earlier generation is
   * never met again.
   */
  offset: number;
}

export class SqliteWriteWatch {
  /** Counter of each table, by index in `#tables`; indexes stay as they are given. */
  readonly #counters: number[] = [];
  /** Moves when every table may have changed; part of every generation. */
  #everything = 0;
  /** Moves with every write that is not quiet: the generation of a read that may read anything. */
  #anything = 0;
  readonly #tables = new Map<string, number>();
  #views = new Set<string>();
  /** The foreign keys that change a child when their parent changes, by parent. */
  #childKeys = new Map<string, ChildKey[]>();
  /** Tables with triggers. */
  #triggered = new Set<string>();
  /**
   * Tables with a constraint whose conflicts are resolved by REPLACE (`unique on conflict replace`
   * in their CREATE TABLE): a plain insert or update of them deletes the rows it conflicts with.
   */
  #replacing = new Set<string>();
  readonly #moves = new Map<string, Moves>();
  /** Moves each time the schema is read again, so `TableReads` worked out before are worked out anew. */
  #schema = 0;
  /** This connection changed the schema, or another did: read it again before it is next needed. */
  #schemaChanged = true;
  /**
   * This connection ran a statement that is neither an insert, update or delete the watch reads
   * nor a schema change it reads (`SCHEMA_CHANGE`) since `generation` last looked: it may still
   * have changed the schema (a comment before `create`), so `generation` asks SQLite whether the
   * schema's version (or the temp schema's) moved.
   */
  #unplaced = false;
  #schemaVersion: unknown;
  #dataVersion: unknown;
  readonly #sqlite: SQLite.Database;
  readonly #readDataVersion: () => unknown;
  readonly #readSchemaVersion: () => unknown;
  readonly #quiet = new Set<string>();
  /** Whether `data_version` was read since the last check phase of the event loop. */
  #readThisTurn = false;
  readonly #nextTurn = () => { this.#readThisTurn = false; };
  /** The `loopTurn` in which `data_version` was last read (0 without one). */
  #turnRead = -1;
  /** When `data_version` was last read (`#now()`). */
  #readAt = 0;
  readonly #loopTurn: (() => number) | null;
  readonly #now: () => number;

  /**
   * `turns`: `loopTurn`, or `null` for turns that end at the check phase alone (a test tries it).
   * `now`: milliseconds, for `DATA_VERSION_TRUSTED_MS` (a test holds it still, or moves it on).
   */
  constructor(sqlite: SQLite.Database, turns: (() => number) | null = loopTurn ?? null, now: () => number = () => performance.now()) {
    this.#loopTurn = turns;
    this.#now = now;
    this.#sqlite = sqlite;
    const dataVersion = sqlite.prepare('pragma data_version').pluck();
    this.#readDataVersion = () => dataVersion.get();
    // The temp schema's too: a temp trigger of this connection changes only that one.
    const schemaVersion = sqlite.prepare('pragma main.schema_version').pluck();
    const tempSchemaVersion = sqlite.prepare('pragma temp.schema_version').pluck();
    this.#readSchemaVersion = () => `${schemaVersion.get()}.${tempSchemaVersion.get()}`;
    this.#dataVersion = this.#readDataVersion();
    this.#schemaVersion = this.#readSchemaVersion();
  }

  /**
   * Declares the write statement `text` quiet: it only sets bookkeeping columns (when a token was
   * last used) that no remembered read selects, so it leaves every remembered read true.
   */
  quiet(text: string): void {
    this.#quiet.add(text);
  }

  /**
   * Called before each write statement of this connection runs. While the schema is not known (it
   * is read by `generation`, between transactions: one under way may yet roll a change of it
   * back), every write moves every counter.
   */
  wrote(text: string): void {
    if (text === BEGIN_IMMEDIATE) return;
    let moves: Moves = null;
    if (!this.#schemaChanged) {
      const kept = this.#moves.get(text);
      if (kept !== undefined) moves = kept;
      else {
        moves = this.#place(text);
        if (this.#moves.size < KEPT_MOVES) this.#moves.set(text, moves);
      }
    }
    // A quiet write whose table has triggers (or while the schema is not known) is not known to be
    // quiet: what a trigger writes may be anything.
    if (moves !== null && this.#quiet.has(text)) return;
    this.#anything++;
    if (moves === null) {
      this.#everything++;
      if (SCHEMA_CHANGE.test(text)) this.#schemaChanged = true;
      else if (!WRITE_TARGET.test(text)) this.#unplaced = true;
      return;
    }
    for (let i = 0; i < moves.length; i++) this.#counters[moves[i]!]!++;
  }

  /**
   * The tables the query `text` reads, for `generation`: every identifier of its text that names a
   * table (a column or alias spelt as a table only adds a table). Worked out by `generation`
   * against the schema of the moment, again whenever it changes.
   */
  reads(text: string): TableReads {
    return { text, schema: -1, tables: undefined, offset: 0 };
  }

  /**
   * The generation of the tables `reads` names (every table without it): equal to an earlier one
   * only if nothing but quiet writes touched them in between. Call it while no transaction of this
   * connection is open (its snapshot would hide other connections' commits).
   */
  generation(reads?: TableReads): number {
    if (this.#newTurn()) {
      const dataVersion = this.#readDataVersion();
      if (dataVersion !== this.#dataVersion) {
        this.#dataVersion = dataVersion;
        this.#everything++;
        this.#anything++;
        if (this.#readSchemaVersion() !== this.#schemaVersion) this.#schemaChanged = true;
      }
    }
    if (this.#unplaced) {
      this.#unplaced = false;
      if (!this.#schemaChanged && this.#readSchemaVersion() !== this.#schemaVersion) this.#schemaChanged = true;
    }
    if (this.#schemaChanged) this.#readSchema();
    if (reads === undefined) return this.#anything;
    if (reads.schema !== this.#schema) {
      const before = this.#sum(reads);
      this.#workOut(reads);
      reads.offset += before + 1 - this.#sum(reads);
    }
    return this.#sum(reads);
  }

  /**
   * Whether no `generation` of this turn of the event loop read `data_version` yet; it will now. A
   * turn ends at the check phase (`setImmediate`) and, where libuv counts them, at the start of a
   * poll: a read in the check phase or in a timer would otherwise be trusted by the requests of the
   * next poll, which may have arrived after another connection's commit. A read older than
   * `DATA_VERSION_TRUSTED_MS` is made again, however long the turn.
   */
  #newTurn(): boolean {
    const turn = this.#loopTurn?.() ?? 0;
    const now = this.#now();
    if (this.#readThisTurn && turn === this.#turnRead && now - this.#readAt < DATA_VERSION_TRUSTED_MS) return false;
    this.#turnRead = turn;
    this.#readAt = now;
    if (!this.#readThisTurn) {
      this.#readThisTurn = true;
      setImmediate(this.#nextTurn);
    }
    return true;
  }

  #sum(reads: TableReads): number {
    const tables = reads.tables;
    if (tables === undefined) return reads.offset + this.#anything;
    let sum = reads.offset + this.#everything;
    for (let i = 0; i < tables.length; i++) sum += this.#counters[tables[i]!]!;
    return sum;
  }

  /**
   * What the write `text` moves: its table and every table the foreign key actions it sets off
   * change, transitively; everything when it is not placed or reaches a table with triggers.
   * `insert or replace` and `update or replace` delete the rows they conflict with, as does any
   * insert or update of a table whose constraint says `on conflict replace`.
   */
  #place(text: string): Moves {
    const match = WRITE_TARGET.exec(text);
    if (match === null) return null;
    const [, insertOrUpdate, resolution, replace, remove, quoted, bare] = match;
    const table = (quoted === undefined ? bare! : quoted.replaceAll('""', '"')).toLowerCase();
    if (!this.#tables.has(table)) return null;
    const changes: RowChange[] = [];
    if (replace !== undefined || resolution?.toLowerCase() === 'replace' || (remove === undefined && this.#replacing.has(table))) {
      changes.push('update', 'delete');
    }
    else if (remove !== undefined) changes.push('delete');
    else if (insertOrUpdate!.toLowerCase() === 'update' || UPSERT.test(text)) changes.push('update');
    const reached = new Set<string>([table]);
    const seen = new Set<string>();
    const pending = changes.map((change) => ({ table, change }));
    while (pending.length > 0) {
      const { table: parent, change } = pending.pop()!;
      if (seen.has(`${change} ${parent}`)) continue;
      seen.add(`${change} ${parent}`);
      for (const key of this.#childKeys.get(parent) ?? []) {
        const childChange = change === 'update' ? key.onUpdate : key.onDelete;
        if (childChange === undefined) continue;
        reached.add(key.child);
        pending.push({ table: key.child, change: childChange });
        if (childChange === 'update' && this.#replacing.has(key.child)) pending.push({ table: key.child, change: 'delete' });
      }
    }
    const indexes: number[] = [];
    for (const name of reached) {
      const index = this.#tables.get(name);
      if (index === undefined || this.#triggered.has(name)) return null;
      indexes.push(index);
    }
    return indexes;
  }

  #workOut(reads: TableReads): void {
    const tables = new Set<number>();
    let anything = false;
    for (const match of reads.text.matchAll(TOKEN)) {
      const [, doubleQuoted, backQuoted, bracketed, bare] = match;
      const spelt = doubleQuoted?.replaceAll('""', '"') ?? backQuoted?.replaceAll('``', '`') ?? bracketed ?? bare;
      if (spelt === undefined) continue; // a string literal
      const name = spelt.toLowerCase();
      const index = this.#tables.get(name);
      if (index !== undefined) tables.add(index);
      if (this.#views.has(name) || name.startsWith('sqlite_')) anything = true;
    }
    reads.schema = this.#schema;
    reads.tables = anything || tables.size === 0 ? undefined : [...tables];
  }

  /**
   * Reads the tables, the foreign keys that change a child when their parent is written, and the
   * tables with triggers (those of the temp schema too), for `#place`. Every counter moves: the
   * schema change itself may have changed what a query answers.
   */
  #readSchema(): void {
    this.#schemaChanged = false;
    this.#schemaVersion = this.#readSchemaVersion();
    const objects = this.#sqlite.prepare(`select type, lower(name) as name, lower(tbl_name) as target, sql from sqlite_master
      where type in ('table', 'view', 'trigger') union all select type, lower(name), lower(tbl_name), sql from sqlite_temp_master
      where type = 'trigger'`).all() as Array<{ type: string; name: string; target: string; sql: string | null }>;
    const keys = this.#sqlite.prepare(`select lower(m.name) as child, lower(f."table") as parent, f.on_update, f.on_delete
      from sqlite_master m join pragma_foreign_key_list(m.name) f where m.type = 'table'`).all() as Array<{ child: string; parent: string; on_update: string; on_delete: string }>;
    const triggered = new Set<string>();
    this.#views = new Set();
    this.#triggered = triggered;
    this.#replacing = new Set();
    for (const { type, name, target, sql } of objects) {
      if (type === 'table' && sql !== null && ON_CONFLICT_REPLACE.test(sql)) this.#replacing.add(name);
      if (type === 'table' && !this.#tables.has(name)) {
        this.#tables.set(name, this.#counters.length);
        this.#counters.push(0);
      } else if (type === 'view') this.#views.add(name);
      else if (type === 'trigger') triggered.add(target);
    }
    // ON UPDATE actions leave a child's row in place, changed; ON DELETE CASCADE deletes it.
    const action = (name: string, onDelete: boolean): RowChange | undefined =>
      !CHANGES_CHILD.has(name.toUpperCase()) ? undefined : onDelete && name.toUpperCase() === 'CASCADE' ? 'delete' : 'update';
    this.#childKeys = new Map();
    for (const { child, parent, on_update, on_delete } of keys) {
      const key: ChildKey = { child, onUpdate: action(on_update, false), onDelete: action(on_delete, true) };
      if (key.onUpdate === undefined && key.onDelete === undefined) continue;
      this.#childKeys.set(parent, [...(this.#childKeys.get(parent) ?? []), key]);
    }
    this.#moves.clear();
    this.#schema++;
    this.#everything++;
    this.#anything++;
  }
}
