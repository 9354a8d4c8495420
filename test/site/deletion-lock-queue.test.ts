/**
 * The member's own deletion against writes that hold the account's row while it is active
 * (`UserStore.holdActive`, an address change), on PostgreSQL, whose row locks decide who goes
 * first. A share lock joins the share locks already on a row without queueing behind an UPDATE
 * waiting for them (PostgreSQL's README.tuplock: share lockers skip the tuple lock when they meet
 * no conflict), so a steady stream of address changes, each overlapping the next, kept the
 * deletion's status UPDATE waiting until the stream stopped or its statement timed out (a 503).
 * The interleaving is pinned here: one write holds the row, the deletion waits for it, a second
 * write arrives; the second must wait its turn behind the deletion and then find the account gone.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { type TestApp, startTestApp } from '../support/app.js';
import { onPostgres } from '../support/databases.js';
import { signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';

onPostgres('the member\'s own deletion and writes holding the account', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  test('a write holding an active account queues behind a deletion already waiting for the row: it never jumps ahead, so a stream of them cannot starve the deletion', async () => {
    const { user, visitor } = await signedInMember(t, 'queued', PASSWORD);
    const outside = new pg.Client({ connectionString: database.url });
    await outside.connect();
    /** Backends of this database waiting for a lock, whose statement matches `pattern`. */
    const waiting = async (pattern: string) => (await outside.query(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and cardinality(pg_blocking_pids(pid)) > 0 and query ilike $1`, [pattern],
    )).rows[0].n as number;
    const until = async (ready: () => Promise<boolean>, what: string) => {
      for (let i = 0; i < 500; i += 1) {
        if (await ready()) return;
        await sleep(10);
      }
      throw new Error(`never: ${what}`);
    };

    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    // The first write (an address change in flight): it holds the active account's row.
    let firstHeld = false;
    const first = t.deps.stores.transaction(async (tx) => {
      firstHeld = await tx.users.holdActive(user.id);
      await released;
    });
    let deletion: Promise<unknown> | undefined;
    let second: Promise<boolean> | undefined;
    try {
      await until(async () => firstHeld, 'the first write held the row');
      deletion = visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD });
      await until(async () => (await waiting('update "users" set "status"%')) > 0, 'the deletion waited for the row');
      // The second write, while the first holds the row and the deletion waits for it.
      let secondDone = false;
      second = t.deps.stores.transaction((tx) => tx.users.holdActive(user.id)).finally(() => { secondDone = true; });
      await until(async () => secondDone || (await waiting('select "id" from "users"%')) > 0, 'the second write held the row or waited for it');
      release();
      await first;
      assert.equal(((await deletion) as { status: number }).status, 303, 'the deletion went through');
      assert.equal(await second, false, 'the second write waited for the deletion and found the account no longer active');
    } finally {
      release();
      await Promise.allSettled([first, deletion, second].filter((p) => p !== undefined));
      await outside.end();
    }
  });
});
