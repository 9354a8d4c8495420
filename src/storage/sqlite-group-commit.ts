/**
 * The core's transactions on SQLite's one connection, committed in groups (issue 35 item 1,
 * docs/performance.md decision 36).
 *
 * Transactions still run one at a time. Those asked for in one turn of the event loop, and those
 * asked for while a group holds the connection, wait in a queue of this class's own instead of
 * behind the connection's turn; they run one after another, each but the first in a SAVEPOINT of
 * the same open transaction, and the group is committed once the queue is empty. Under load the
 * requests read in one turn reach their transactions in that turn (codes issued; refreshes, whose
 * id_tokens are signed before their transactions begin, decision 68), and a code's redemption with
 * `openid` holds the connection while its id_token is signed on another thread, so that others
 * queue: one COMMIT then writes the pages they share to the WAL once instead of once each.
 *
 * The rules that keep this invisible:
 * - A transaction's promise settles only after the COMMIT that made its writes durable (as durable
 *   as a COMMIT of its own: `synchronous = NORMAL` in WAL mode), so nothing is answered before.
 * - One that throws is rolled back to its savepoint (the first of a group, which has none, by
 *   rolling the whole group back, which holds nothing else yet); the others are not touched. It is
 *   rejected with its error only after the COMMIT too: it may have thrown on what the group's
 *   earlier transactions wrote (a code already spent, a grant revoked), which a failed COMMIT undoes.
 * - A COMMIT (or a rollback to a savepoint) that fails fails every transaction of the group, each
 *   with that error: none of their writes is acknowledged, nor any refusal based on them.
 * - A BEGIN that fails (another instance held the write lock past `busy_timeout`) refuses every
 *   transaction queued: each waited as long, and each further BEGIN would block as long again.
 * - The group holds the connection's turn from BEGIN to COMMIT, so a read outside it waits, as it
 *   waited for any transaction, and never sees uncommitted writes. `SqliteWriteWatch` counted the
 *   group's writes as they ran, so a row remembered before the group from a table the group wrote
 *   is read again after it.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

type Work = (trx: Kysely<Database>) => Promise<unknown>;

interface Queued {
  work: Work;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Transactions a group takes at most before it commits. Under a closed loop (each client waiting
 * for its answer) a group is bounded by the requests in flight, but arrivals from many clients do
 * not wait for answers: without a bound a steady stream would keep one group open, and every
 * answer in it waiting, for as long as the stream lasts. 32 is the size d's groups reached at 64
 * connections, where committing together saved what it saves (decision 36).
 */
export const MAX_GROUP_SIZE = 32;

/** A group runs its transactions one at a time, so their savepoints never nest: one name does. */
const SAVEPOINT = sql.raw('savepoint grouped');
const RELEASE = sql.raw('release savepoint grouped');
const ROLLBACK_TO = sql.raw('rollback to savepoint grouped');

/** What the first transaction of a group threw: the whole group is rolled back for it alone. */
class FirstRefused {
  constructor(readonly item: Queued, readonly cause: unknown) {}
}

/**
 * Rolls back to the savepoint of a transaction that threw `error`. If that fails, SQLite ended the
 * whole transaction itself (a full disk: see `FairSqliteDriver.rollbackTransaction`), and `error`
 * is what every transaction of the group must hear.
 */
async function undo(trx: Kysely<Database>, error: unknown): Promise<void> {
  try {
    await ROLLBACK_TO.execute(trx);
    await RELEASE.execute(trx);
  } catch {
    throw error;
  }
}

export class SqliteGroupCommit {
  readonly #queue: Queued[] = [];
  #draining = false;

  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Runs `work` in the current group or the next; settles once its group has committed or failed.
   * A group begins at the end of the event loop's turn (`setImmediate`), not at once: the requests
   * read in one turn reach their transactions in that turn, so they commit together even when none
   * waits inside its transaction (a refresh without `openid`, an authorization's code).
   */
  run<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#draining) {
        this.#draining = true;
        setImmediate(this.#drain);
      }
    });
  }

  readonly #drain = async (): Promise<void> => {
    try {
      while (this.#queue.length > 0) await this.#group();
    } finally {
      this.#draining = false;
    }
  };

  /**
   * One group: BEGIN (on the connection's turn), the queued transactions, one COMMIT. Kysely's
   * `transaction()` rather than `startTransaction()`: a group is most often of one (a refresh
   * never waits inside its transaction), and the controlled transaction's
   * machinery cost twice as much per group (issue 35, decision 36).
   */
  async #group(): Promise<void> {
    const done: Array<{ item: Queued; value: unknown }> = [];
    const refused: Array<{ item: Queued; error: unknown }> = [];
    let current: Queued | undefined;
    let begun = false;
    try {
      await this.db.transaction().execute(async (trx) => {
        begun = true;
        current = this.#queue.shift()!;
        // The first needs no savepoint: if it throws, rolling the group back undoes only its writes.
        try {
          done.push({ item: current, value: await current.work(trx) });
        } catch (error) {
          throw new FirstRefused(current, error);
        }
        for (let taken = 1; taken < MAX_GROUP_SIZE && (current = this.#queue.shift()) !== undefined; taken += 1) {
          await SAVEPOINT.execute(trx);
          let value: unknown;
          try {
            value = await current.work(trx);
          } catch (error) {
            await undo(trx, error);
            refused.push({ item: current, error });
            continue;
          }
          await RELEASE.execute(trx);
          done.push({ item: current, value });
        }
        current = undefined;
      });
    } catch (error) {
      if (error instanceof FirstRefused) {
        error.item.reject(error.cause);
        return;
      }
      if (!begun) {
        // BEGIN IMMEDIATE failed: another instance held the write lock past `busy_timeout`, and
        // every transaction queued has waited that long too. Each further group would wait as long
        // again (`writeLockTaker`, in pauses that leave the event loop free), so all are refused.
        for (const item of this.#queue.splice(0)) item.reject(error);
        return;
      }
      // The group's COMMIT or statements failed, or SQLite ended the transaction itself (a full
      // disk, an I/O error): none of it is durable. Kysely rolled back what was open.
      for (const { item } of [...done, ...refused]) item.reject(error);
      current?.reject(error);
      return;
    }
    for (const { item, value } of done) item.resolve(value);
    for (const { item, error } of refused) item.reject(error);
  }
}
