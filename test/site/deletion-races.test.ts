/**
 * The member's own deletion racing other writes for the account, on PostgreSQL, where a second
 * connection can write between another's read and write (SQLite's one writer rules that out).
 *
 * Writes that hold the account's row while it is active (`UserStore.holdActive`, an address change): A share lock joins the share locks already on a row without queueing behind an UPDATE
 * waiting for them (PostgreSQL's README.tuplock: share lockers skip the tuple lock when they meet
 * no conflict), so a steady stream of address changes, each overlapping the next, kept the
 * deletion's status UPDATE waiting until the stream stopped or its statement timed out (a 503).
 * The interleaving is pinned here: one write holds the row, the deletion waits for it, a second
 * write arrives; the second must wait its turn behind the deletion and then find the account gone.
 * An authorization by a remembered consent holds the account's row first, then the consent's, so a
 * stream of them cannot starve a withdrawal waiting for the consent either.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { hashSecret } from '../../src/core/credentials/formats.js';
import type { TestClient } from '../oauth/helpers.js';
import { authorizeQuery, consentForm, newClient, pkcePair } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { onPostgres } from '../support/databases.js';
import { type PageResponse, Visitor, signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';

onPostgres('the member\'s own deletion and writes holding the account', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  /** Waits for `ready`, polling: a step of the interleaving another connection must reach first. */
  const until = async (ready: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 500; i += 1) {
      if (await ready()) return;
      await sleep(10);
    }
    throw new Error(`never: ${what}`);
  };
  /** This suite's backends waiting for a lock, whose statement matches `pattern`: another suite's running beside it never count. */
  const waiting = async (outside: pg.Client, pattern: string) => (await outside.query(
    `select count(*)::int as n from pg_stat_activity where application_name = $1 and cardinality(pg_blocking_pids(pid)) > 0 and query ilike $2`, [database.schema, pattern],
  )).rows[0].n as number;

  test('a write holding an active account queues behind a deletion already waiting for the row: it never jumps ahead, so a stream of them cannot starve the deletion', async () => {
    const { user, visitor } = await signedInMember(t, 'queued', PASSWORD);
    const outside = new pg.Client({ connectionString: database.url });
    await outside.connect();
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
      await until(async () => (await waiting(outside, 'update "users" set "status"%')) > 0, 'the deletion waited for the row');
      // The second write, while the first holds the row and the deletion waits for it.
      let secondDone = false;
      second = t.deps.stores.transaction((tx) => tx.users.holdActive(user.id)).finally(() => { secondDone = true; });
      await until(async () => secondDone || (await waiting(outside, 'select "id" from "users"%')) > 0, 'the second write held the row or waited for it');
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

  /** The consent page's approval of `c`, as the member's browser sends it. */
  async function approval(visitor: Visitor, c: TestClient): Promise<() => Promise<PageResponse>> {
    const page = await visitor.get(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair() })}`);
    assert.equal(page.status, 200, 'the consent page');
    const body = new URLSearchParams([...consentForm(page.text), ['decision', 'approve']]);
    return () => visitor.request('/oauth/authorize', { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }

  test('an authorization by a remembered consent queues behind a withdrawal already waiting for the consent: it never jumps ahead, so a stream of them cannot starve the withdrawal', async () => {
    const { user, visitor } = await signedInMember(t, 'remembering', PASSWORD);
    const c = await newClient(t);
    assert.equal((await (await approval(visitor, c))()).status, 302, 'the consent, remembered');
    const now = t.clock.now();
    const code = (n: number) => ({
      codeHash: hashSecret(`remembered-${user.id}-${n}`), clientId: c.client.clientId, userId: user.id, redirectUri: c.redirectUri, scope: 'profile:read',
      codeChallenge: null, nonce: null, authTime: now, createdAt: now, expiresAt: now + 60_000,
    });
    const outside = new pg.Client({ connectionString: database.url });
    await outside.connect();
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    // The first authorization, its grant written and not yet committed: it holds what it locked.
    let firstWritten = false;
    const first = t.deps.stores.transaction(async (tx) => {
      firstWritten = await tx.codes.insertUnderRememberedConsent(code(1), null);
      await released;
    });
    let withdrawal: Promise<PageResponse> | undefined;
    let second: Promise<boolean> | undefined;
    try {
      await until(async () => firstWritten, 'the first authorization wrote its grant');
      withdrawal = visitor.post('/settings/applications/revoke', { client_id: c.client.clientId });
      await until(async () => (await waiting(outside, 'delete from "consents"%')) > 0, 'the withdrawal waited for the consent');
      // The second authorization, while the first holds the consent and the withdrawal waits for it.
      let secondDone = false;
      second = t.deps.stores.codes.insertUnderRememberedConsent(code(2), null).finally(() => { secondDone = true; });
      await until(async () => secondDone || (await waiting(outside, 'with %')) > 0, 'the second authorization wrote or waited');
      assert.equal(secondDone, false, 'the second authorization waits its turn, not past the withdrawal');
      release();
      await first;
      assert.equal((await withdrawal).status, 303, 'the withdrawal went through');
      await second;
      const live = await t.deps.database.db.selectFrom('grants').select('id')
        .where('user_id', '=', user.id).where('client_id', '=', c.client.clientId).where('revoked_at', 'is', null).execute();
      assert.deepEqual(live, [], 'no grant outlives the withdrawal');
    } finally {
      release();
      await Promise.allSettled([first, withdrawal, second].filter((p) => p !== undefined));
      await outside.end();
    }
  });

  /**
   * Pins `write` (a request of the member's) after it read the account active and wrote what it
   * makes, at its insert into `table`, which an outside lock holds; runs the member's deletion
   * (signed in with `visitor`) up to its own erase of `table`, or until it waits for `write`'s hold
   * of the account; then lets both finish. What `write` made must then be gone with the account.
   */
  async function racingDeletion(visitor: Visitor, table: string, write: () => Promise<unknown>): Promise<void> {
    const outside = new pg.Client({ connectionString: database.url });
    // Another connection watches: one inside a transaction reads the activity as it was at the transaction's first look.
    const watcher = new pg.Client({ connectionString: database.url });
    await outside.connect();
    await watcher.connect();
    let written: Promise<unknown> | undefined;
    let deletion: Promise<unknown> | undefined;
    try {
      await outside.query('begin');
      await outside.query(`lock table ${table} in share mode`);
      written = write();
      await until(async () => (await waiting(watcher, `insert into "${table}"%`)) > 0, `the write reached its insert into ${table}`);
      deletion = visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD });
      await until(async () => (await waiting(watcher, `delete from "${table}"%`)) + (await waiting(watcher, 'update "users" set "status"%')) > 0,
        `the deletion reached its erase of ${table}, or waited for the write`);
      await outside.query('commit');
      assert.equal(((await deletion) as { status: number }).status, 303, 'the deletion went through');
      await written;
    } finally {
      await outside.query('rollback').catch(() => undefined);
      await Promise.allSettled([written, deletion].filter((p) => p !== undefined));
      await Promise.all([outside.end(), watcher.end()]);
    }
  }

  test('a sign-in racing the member\'s own deletion leaves no session and no line of the log: the session is written only while the account is active, which the deletion waits for or sees', async () => {
    const { user, visitor } = await signedInMember(t, 'signing', PASSWORD);
    // Its line of the log waits, after its session is written and before it commits.
    await racingDeletion(visitor, 'security_events', () => new Visitor(t.baseUrl).post('/login', { username: user.username, password: PASSWORD, return_to: '/' }));
    const { db } = t.deps.database;
    assert.deepEqual(await db.selectFrom('sessions').select('address').where('user_id', '=', user.id).execute(), [], 'no session');
    assert.deepEqual(await db.selectFrom('security_events').select('kind').where('user_id', '=', user.id).execute(), [], 'no line of the log');
  });

  test('a wrong password racing the member\'s own deletion leaves no line in the erased log: the line is written only while the account is not deleted, which the deletion waits for or sees', async () => {
    const { user, visitor } = await signedInMember(t, 'mistyping', PASSWORD);
    const outside = new pg.Client({ connectionString: database.url });
    const watcher = new pg.Client({ connectionString: database.url });
    await outside.connect();
    await watcher.connect();
    // The wrong password read the account before the deletion; its line is pinned at its insert,
    // past whatever the statement holds before the row is inserted, until the deletion commits or waits.
    const key = 0x5ec0_0000 + user.id;
    let wrong: Promise<PageResponse> | undefined;
    let deletion: Promise<PageResponse> | undefined;
    try {
      await outside.query(`create function hold_line() returns trigger language plpgsql as $$ begin perform pg_advisory_xact_lock_shared(${key}); return new; end $$`);
      await outside.query(`create trigger hold_line before insert on security_events for each row when (new.user_id = ${user.id}) execute function hold_line()`);
      await outside.query('select pg_advisory_lock($1)', [key]);
      wrong = new Visitor(t.baseUrl).post('/login', { username: user.username, password: 'not the password', return_to: '/' });
      await until(async () => (await waiting(watcher, 'insert into "security_events"%')) > 0, 'the wrong password\'s line reached its insert');
      let deleted = false;
      deletion = visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD }).finally(() => { deleted = true; });
      await until(async () => deleted || (await waiting(watcher, 'update "users" set "status"%')) > 0, 'the deletion committed, or waited for the line\'s hold of the account');
      await outside.query('select pg_advisory_unlock($1)', [key]);
      assert.equal((await deletion).status, 303, 'the deletion went through');
      assert.equal((await wrong).status, 401);
      const { db } = t.deps.database;
      assert.deepEqual(await db.selectFrom('security_events').select('kind').where('user_id', '=', user.id).execute(), [], 'no line of the log');
    } finally {
      await outside.query('select pg_advisory_unlock_all()');
      await Promise.allSettled([wrong, deletion].filter((p) => p !== undefined));
      await outside.query('drop trigger if exists hold_line on security_events; drop function if exists hold_line()');
      await Promise.all([outside.end(), watcher.end()]);
    }
  });

  test('a personal token or an app made as the member deletes the account does not outlive it: each is made only while the account is active, which the deletion waits for or sees', async () => {
    const { user, visitor } = await signedInMember(t, 'making', PASSWORD);
    // The secret sealed to be shown once waits, after the token or app is written and before it commits.
    await racingDeletion(visitor, 'one_time_secrets', () => visitor.post('/settings/tokens', { name: 'racing', scopes: ['profile:read'], expires_in_days: '30', password: PASSWORD }));
    const { db } = t.deps.database;
    assert.deepEqual(await db.selectFrom('personal_tokens').select('name').where('user_id', '=', user.id).execute(), [], 'no personal token');

    const { user: developer, visitor: browser } = await signedInMember(t, 'developing', PASSWORD);
    await racingDeletion(browser, 'one_time_secrets', () => browser.post('/settings/developers', {
      name: 'Racing app', description: '', homepage: '', redirect_uris: 'https://member.example/cb', type: 'confidential',
    }));
    assert.deepEqual(await db.selectFrom('clients').select('status').where('owner_id', '=', developer.id).where('status', '=', 'active').execute(), [], 'no active app');
  });

  test('an app approved on the consent page as the member deletes the account leaves no grant, code, consent or log line: they are written only while the account is active, which the deletion waits for or sees', async () => {
    const { user, visitor } = await signedInMember(t, 'approving', PASSWORD);
    const approve = await approval(visitor, await newClient(t));
    // The consent waits, after the grant and code are written and before it commits.
    await racingDeletion(visitor, 'consents', approve);
    const { db } = t.deps.database;
    assert.deepEqual(await db.selectFrom('grants').select('id').where('user_id', '=', user.id).execute(), [], 'no grant');
    assert.deepEqual(await db.selectFrom('authorization_codes').select('code_hash').where('user_id', '=', user.id).execute(), [], 'no code');
    assert.deepEqual(await db.selectFrom('consents').select('client_id').where('user_id', '=', user.id).execute(), [], 'no consent');
    assert.deepEqual(await db.selectFrom('security_events').select('kind').where('user_id', '=', user.id).execute(), [], 'no line of the log');
  });
});
