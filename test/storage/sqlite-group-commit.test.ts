/**
 * SQLite's group commit (src/storage/sqlite-group-commit.ts): the transactions queued while one
 * holds the connection commit together, yet each one's outcome is its own, none is acknowledged
 * before its COMMIT, and a read outside never sees the group's uncommitted writes. PostgreSQL
 * commits each transaction alone; test/oauth/races.test.ts holds the rules over HTTP on both.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { MAX_GROUP_SIZE } from '../../src/storage/sqlite-group-commit.js';
import type { Database } from '../../src/storage/schema.js';
import { temporarySqlitePath } from '../support/databases.js';

let handle: DatabaseHandle;
/** A second connection to the file: it sees only what was committed. */
let outside: SQLite.Database;

before(async () => {
  const path = temporarySqlitePath();
  handle = openDatabase({ kind: 'sqlite', path });
  await sql`create table parents (id integer primary key)`.execute(handle.db);
  await sql`create table children (id integer primary key, parent_id integer not null references parents (id) deferrable initially deferred)`.execute(handle.db);
  await sql`insert into parents (id) values (1)`.execute(handle.db);
  outside = new SQLite(path, { readonly: true });
});
beforeEach(async () => { await sql`delete from children`.execute(handle.db); });
after(async () => {
  outside.close();
  await handle.close();
});

/** A promise a transaction waits on while it holds the connection, so that others queue behind it. */
function gate(): { passed: Promise<void>; open(): void } {
  let open!: () => void;
  const passed = new Promise<void>((resolve) => { open = resolve; });
  return { passed, open };
}

/** `Stores.transaction`'s path: inserts child `id` (of `parent`), then waits for `until`, then throws `failure` if given. */
function insertChild(id: number, options: { parent?: number; until?: Promise<void>; failure?: Error } = {}): Promise<number> {
  return handle.queries.transaction(handle.db, async (trx: Kysely<Database>) => {
    await sql`insert into children (id, parent_id) values (${id}, ${options.parent ?? 1})`.execute(trx);
    await options.until;
    if (options.failure) throw options.failure;
    return id;
  });
}

function committedChildren(): number[] {
  return outside.prepare('select id from children order by id').pluck().all() as number[];
}

test('a transaction of a group that throws is undone alone: the others of its group commit', async () => {
  const holding = gate();
  const first = insertChild(1, { until: holding.passed });
  const refused = new Error('refused');
  const queued = [insertChild(2), insertChild(3, { failure: refused }), insertChild(4)];
  holding.open();
  assert.deepEqual(await Promise.all([first, queued[0], queued[2]]), [1, 2, 4]);
  await assert.rejects(queued[1]!, (error) => error === refused);
  assert.deepEqual(committedChildren(), [1, 2, 4]);
});

test('the first transaction of a group that throws is undone alone: those queued behind it commit', async () => {
  const holding = gate();
  const refused = new Error('refused');
  const first = insertChild(1, { until: holding.passed, failure: refused });
  const queued = [insertChild(2), insertChild(3)];
  holding.open();
  await assert.rejects(first, (error) => error === refused);
  assert.deepEqual(await Promise.all(queued), [2, 3]);
  assert.deepEqual(committedChildren(), [2, 3]);
});

test('a COMMIT that fails fails every transaction of its group, and none of their writes lands', async () => {
  const holding = gate();
  const first = insertChild(1, { until: holding.passed });
  // A row naming no parent: the deferred foreign key fails the group's COMMIT.
  const queued = [insertChild(2), insertChild(3, { parent: 99 })];
  holding.open();
  const outcomes = await Promise.allSettled([first, ...queued]);
  assert.ok(outcomes.every((o) => o.status === 'rejected' && /FOREIGN KEY/.test(String(o.reason))), JSON.stringify(outcomes));
  assert.deepEqual(committedChildren(), []);
  assert.equal(await insertChild(4), 4, 'the connection serves the next group');
  assert.deepEqual(committedChildren(), [4]);
});

test('a transaction that throws settles only once its group is committed: what it saw of the others may yet be undone', async () => {
  const holding = gate();
  const first = insertChild(1, { until: holding.passed });
  let settled = false;
  // Refuses on what it reads: child 1, which its group has not committed.
  const refusing = handle.queries.transaction(handle.db, async (trx: Kysely<Database>) => {
    const { rows } = await sql<{ id: number }>`select id from children`.execute(trx);
    throw new Error(`refused on seeing ${rows.map((r) => r.id).join(',')}`);
  }).finally(() => { settled = true; });
  refusing.catch(() => { /* asserted below */ });
  const reached = gate();
  const committing = gate();
  // A row naming no parent: the deferred foreign key fails the group's COMMIT.
  const failing = handle.queries.transaction(handle.db, async (trx: Kysely<Database>) => {
    await sql`insert into children (id, parent_id) values (3, 99)`.execute(trx);
    reached.open();
    await committing.passed;
  });
  holding.open();
  // The refusal ran before this last transaction of the group: it has been answered, or never is before the COMMIT.
  await reached.passed;
  await new Promise((resolve) => setImmediate(resolve));
  const answeredEarly = settled;
  committing.open();
  const outcomes = await Promise.allSettled([first, refusing, failing]);
  assert.equal(answeredEarly, false, 'the refusal was answered before the COMMIT that could undo what it was based on');
  // Child 1 never existed: the refusal is the group's failure, not a verdict on a phantom.
  assert.ok(outcomes.every((o) => o.status === 'rejected' && /FOREIGN KEY/.test(String(o.reason))), JSON.stringify(outcomes.map((o) => o.status === 'rejected' ? String(o.reason) : o.status)));
  assert.deepEqual(committedChildren(), []);
});

test('a transaction settles only once its COMMIT is done, and a read outside the group waits for it', async () => {
  const holding = gate();
  const seen: string[] = [];
  const first = insertChild(1, { until: holding.passed }).then((id) => { seen.push(`committed ${id}: ${committedChildren().join(',')}`); });
  const queued = insertChild(2).then((id) => { seen.push(`committed ${id}: ${committedChildren().join(',')}`); });
  // The group begins at the end of this turn; the read is asked for once it holds the connection.
  await new Promise((resolve) => setImmediate(resolve));
  const read = handle.db.selectFrom('children' as never).select(sql<number>`count(*)`.as('n')).executeTakeFirst()
    .then((row) => { seen.push(`read ${(row as { n: number }).n}`); });
  // The read was asked for while the group held the connection: it has not run.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(seen, []);
  assert.deepEqual(committedChildren(), []);
  holding.open();
  await Promise.all([first, queued, read]);
  assert.deepEqual(seen.slice(0, 2), ['committed 1: 1,2', 'committed 2: 1,2']);
  assert.equal(seen[2], 'read 2');
});

test('transactions asked for in one turn of the event loop commit together, though none waits inside its own', async () => {
  // Two callbacks of one turn, as two requests read in one poll for I/O are.
  const [first, second] = await new Promise<Array<Promise<string>>>((resolve) => {
    const asked: Array<Promise<string>> = [];
    const ask = (id: number) => {
      asked.push(insertChild(id).then(() => committedChildren().join(',')));
      if (asked.length === 2) resolve(asked);
    };
    setImmediate(ask, 1);
    setImmediate(ask, 2);
  });
  // Each settles after the one COMMIT that wrote both.
  assert.deepEqual([await first, await second], ['1,2', '1,2']);
});

test('a group commits after MAX_GROUP_SIZE transactions, so a stream that never stops cannot hold its answers back', async () => {
  const holding = gate();
  const first = insertChild(1, { until: holding.passed });
  const rest = Array.from({ length: MAX_GROUP_SIZE + 4 }, (_, i) => insertChild(i + 2));
  // Asked for behind more than a group's worth: by the time it runs, the first group is committed.
  const late = handle.queries.transaction(handle.db, async () => committedChildren().length);
  holding.open();
  await Promise.all([first, ...rest]);
  assert.ok((await late) >= MAX_GROUP_SIZE, `the transaction after ${MAX_GROUP_SIZE + 5} others saw ${await late} committed`);
});

test('a group takes the write lock at BEGIN, so a commit by another instance on the file cannot leave its writers a stale snapshot', async () => {
  // Another instance on the same file (test/reliability/multi-instance.test.ts). It waits for no
  // lock here: in this one thread, waiting would hold up the group it waits for.
  const instance = new SQLite(outside.name);
  instance.pragma('busy_timeout = 0');
  try {
    const holding = gate();
    // A first transaction that only reads, then waits (a rotation signing its id_token).
    const reading = handle.queries.transaction(handle.db, async (trx: Kysely<Database>) => {
      await sql`select count(*) from children`.execute(trx);
      await holding.passed;
    });
    const writing = insertChild(2);
    await new Promise((resolve) => setImmediate(resolve));
    // The other instance commits meanwhile, if the group lets it: its write waits for the group's
    // COMMIT instead (SQLITE_BUSY at once, with no timeout).
    try { instance.prepare('insert into parents (id) values (2)').run(); } catch (error) { assert.equal((error as { code?: string }).code, 'SQLITE_BUSY'); }
    holding.open();
    await reading;
    // A deferred BEGIN read a snapshot the other instance's commit made stale, and the queued
    // write failed with SQLITE_BUSY_SNAPSHOT (answered 503), though alone it would have written.
    assert.equal(await writing, 2);
    assert.deepEqual(committedChildren(), [2]);
  } finally {
    instance.prepare('delete from parents where id = 2').run();
    instance.close();
  }
});

test('a transaction waiting for another instance\'s write lock leaves the event loop free: a holder in the same thread ends its transaction, and the waiter then writes', async () => {
  const instance = new SQLite(outside.name);
  try {
    instance.exec('begin immediate');
    const waiting = insertChild(5);
    // SQLite's own wait would sleep in this thread for busy_timeout (5 s): this timer could not
    // run, the lock would not be given back, and the insert would fail with SQLITE_BUSY.
    await new Promise((resolve) => setTimeout(resolve, 30));
    instance.exec('commit');
    assert.equal(await waiting, 5);
    assert.deepEqual(committedChildren(), [5]);
  } finally {
    if (instance.inTransaction) instance.exec('rollback');
    instance.close();
  }
});

test('a BEGIN that cannot take the write lock refuses every transaction queued with it, not one group after another', async () => {
  const instance = new SQLite(outside.name);
  // Ours gives up at once instead of waiting `busy_timeout` (5 s, in this one thread) for the lock.
  await sql`pragma busy_timeout = 0`.execute(handle.db);
  try {
    instance.exec('begin immediate');
    const queued = [insertChild(1), insertChild(2), insertChild(3)];
    // The lock is free again as soon as the first is refused: had the others been left queued,
    // the next group's BEGIN would have taken it and written them.
    void queued[0]!.catch(() => instance.exec('commit'));
    const outcomes = await Promise.allSettled(queued);
    assert.ok(outcomes.every((o) => o.status === 'rejected' && (o.reason as { code?: string }).code === 'SQLITE_BUSY'), JSON.stringify(outcomes));
    assert.equal(await insertChild(4), 4);
    assert.deepEqual(committedChildren(), [4]);
  } finally {
    if (instance.inTransaction) instance.exec('rollback');
    instance.close();
    await sql`pragma busy_timeout = 5000`.execute(handle.db);
  }
});
