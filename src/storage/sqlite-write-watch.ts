/**
 * Knows when a SQLite database may have changed, so that a read remembered since then can be
 * trusted without running it again (`CompiledQueries.firstRemembered`, issue 8).
 *
 * Its generation moves on every write statement of this connection but the quiet ones (see
 * `quiet`), and on every commit of any other connection to the file, another process's included:
 * SQLite's `data_version` changes exactly then (https://sqlite.org/pragma.html#pragma_data_version).
 * A remembered read is therefore never older than the last write that could have changed it, which
 * is what lets a revoked token be refused from the next request on (INTERFACE section 2).
 *
 * Another connection's commit is looked for once per turn of the event loop: the requests that
 * arrive in one turn are concurrent, and reading `data_version` was a twentieth of a `/me`
 * (docs/performance.md). This connection's own writes count at once. One edge: with more than
 * 1,024 connections ready at once libuv polls again within the same turn, so a request read by
 * that second poll may still trust a read made before a commit of that same turn (by less than
 * the turn's length).
 */
import type SQLite from 'better-sqlite3';

/**
 * How this connection's transactions begin (`FairSqliteDriver`). SQLite counts it a write, since it
 * takes the write lock, but it changes nothing: it is quiet, or every transaction, one that only
 * reads included, would make every remembered read run again.
 */
export const BEGIN_IMMEDIATE = 'begin immediate';

export class SqliteWriteWatch {
  #generation = 0;
  #dataVersion: unknown;
  readonly #readDataVersion: () => unknown;
  readonly #quiet = new Set<string>([BEGIN_IMMEDIATE]);
  /** Whether `data_version` was read in this turn of the event loop. */
  #readThisTurn = false;
  readonly #nextTurn = () => { this.#readThisTurn = false; };

  constructor(sqlite: SQLite.Database) {
    const statement = sqlite.prepare('pragma data_version').pluck();
    this.#readDataVersion = () => statement.get();
    this.#dataVersion = this.#readDataVersion();
  }

  /**
   * Declares the write statement `text` quiet: it only sets bookkeeping columns (when a token was
   * last used) that no remembered read selects, so it leaves every remembered read true.
   */
  quiet(text: string): void {
    this.#quiet.add(text);
  }

  /** Called before each write statement of this connection runs. */
  wrote(text: string): void {
    if (!this.#quiet.has(text)) this.#generation++;
  }

  /**
   * The current generation: equal to an earlier one only if nothing but quiet writes happened in
   * between. Call it while no transaction of this connection is open (its snapshot would hide
   * other connections' commits).
   */
  generation(): number {
    if (!this.#readThisTurn) {
      this.#readThisTurn = true;
      setImmediate(this.#nextTurn);
      const dataVersion = this.#readDataVersion();
      if (dataVersion !== this.#dataVersion) {
        this.#dataVersion = dataVersion;
        this.#generation++;
      }
    }
    return this.#generation;
  }
}
