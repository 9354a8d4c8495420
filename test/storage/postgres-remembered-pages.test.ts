/**
 * PostgreSQL keeps a page of posts it read until the database announces a write to `posts`,
 * `users` or `categories`, and at most one heartbeat (`PostgresChangeFeed`, migration
 * 2026-12-02-0010; issue 35 item 3), and trusts nothing it remembered while it cannot hear the
 * announcements. A write that announces nothing (`session_replication_role = replica` fires no
 * trigger) shows whether a read was answered from memory.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { type DatabaseHandle, inTransaction, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { createStores } from '../../src/storage/stores.js';
import type { Stores } from '../../src/core/stores.js';
import { unique } from '../oauth/helpers.js';
import { HEARTBEAT_MS } from '../../src/storage/postgres-change-feed.js';
import { dropSchema, onPostgres, outsideConnection, postgresUrl, withSearchPath } from '../support/databases.js';

const T0 = Date.UTC(2026, 11, 2, 0, 0, 0);

onPostgres('pages of posts remembered on PostgreSQL', (database) => {
  let serving: DatabaseHandle;
  let another: DatabaseHandle;
  let stores: Stores;
  let anotherStores: Stores;
  let authorId: number;
  let postId: number;
  const outside = outsideConnection(database);

  before(async () => {
    serving = openDatabase(database.target);
    another = openDatabase(database.target);
    await migrateToLatest(serving.db);
    stores = createStores(serving.db, serving.queries);
    anotherStores = createStores(another.db, another.queries);
    const author = await stores.users.create({ username: unique('author'), passwordHash: 'h', bio: '', member: false, level: 1, xp: 0 }, T0);
    const category = await stores.posts.ensureCategory(unique('Cat'));
    const post = await stores.posts.create({ authorId: author.id, categoryId: category.id, title: 'first', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published' }, T0);
    [authorId, postId] = [author.id, post.id];
  });

  after(async () => {
    await serving.close();
    await another.close();
  });

  const titleRead = async () => (await stores.posts.listPublishedByAuthor(authorId, 0, 20)).items.find((post) => post.id === postId)!.title;
  /** Writes the post's title from outside, announcing it or not. */
  const titled = async (title: string, announced: boolean) => {
    const client = outside();
    await client.query('begin');
    if (!announced) await client.query('set local session_replication_role = replica');
    await client.query(`update ${database.schema}.posts set title = $1 where id = $2`, [title, postId]);
    await client.query('commit');
  };
  /**
   * Writes the post's title in a transaction of the serving instance that no trigger announces, so
   * what moves the page is this instance's own commit; `meanwhile` runs before it commits.
   */
  const titledHere = (title: string, meanwhile = async () => {}) => inTransaction(serving.db, async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    await trx.updateTable('posts').set({ title }).where('id', '=', postId).execute();
    await meanwhile();
  });
  /** Until the serving instance hears announcements and answers a page read again from memory. */
  const untilRemembering = async () => {
    for (let attempt = 0; attempt < 500; attempt++) {
      await titleRead();
      const marker = unique('unannounced');
      await titled(marker, false);
      if (await titleRead() !== marker) return;
      await sleep(10);
    }
    assert.fail('the page was never remembered');
  };
  /** Polls the page until it reads `title`; how long that took. */
  const untilRead = async (title: string, withinMs: number) => {
    const start = performance.now();
    while (await titleRead() !== title) {
      assert.ok(performance.now() - start < withinMs, `the page still read otherwise than "${title}" after ${withinMs} ms`);
      await sleep(5);
    }
  };

  test('a page read again is answered from memory while nothing announces a write to its tables', async () => {
    await untilRemembering();
  });

  test('a page is kept at most one heartbeat: a change nothing announces (a count another instance moved) shows within it', async () => {
    await untilRemembering();
    await titled('unannounced, then seen', false);
    await untilRead('unannounced, then seen', HEARTBEAT_MS + 1_000);
  });

  test('a like another instance counts is announced to nobody, and shows within a heartbeat', async () => {
    await untilRemembering();
    const likes = async () => (await stores.posts.listPublishedByAuthor(authorId, 0, 20)).items.find((post) => post.id === postId)!.likeCount;
    const before = await likes();
    await sql`update posts set like_count = like_count + 1 where id = ${postId}`.execute(another.db);
    const { rows } = await outside().query(`select count(*)::int as n from pg_trigger where tgrelid = '${database.schema}.posts'::regclass and tgname = 'posts_changed'`);
    assert.equal(rows[0].n, 1);
    const start = performance.now();
    while (await likes() === before) {
      assert.ok(performance.now() - start < HEARTBEAT_MS + 1_000, 'the like never showed');
      await sleep(20);
    }
  });

  test('a write another instance commits is seen as soon as the database announces it', async () => {
    await untilRemembering();
    await titled('announced', true);
    await untilRead('announced', 2_000);
    await untilRemembering();
    await sql`update posts set title = 'by another instance' where id = ${postId}`.execute(another.db);
    await untilRead('by another instance', 2_000);
  });

  test('a write this instance commits is seen by its next read, before any announcement arrives', async () => {
    await untilRemembering();
    await titledHere('written here');
    assert.equal(await titleRead(), 'written here');
  });

  test('a page read while this instance\'s write is not yet committed is read again once it is', async () => {
    await untilRemembering();
    // Another pooled connection reads the page as it was, and may remember it.
    await titledHere('committed after a read', async () => assert.notEqual(await titleRead(), 'committed after a read'));
    assert.equal(await titleRead(), 'committed after a read');
  });

  test('a post another instance publishes is on the page once announced', async () => {
    await untilRemembering();
    const category = await anotherStores.posts.ensureCategory(unique('Cat'));
    const post = await anotherStores.posts.create({ authorId, categoryId: category.id, title: 'newest', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published' }, T0 + 60_000);
    const start = performance.now();
    for (;;) {
      const page = await stores.posts.listPublishedByAuthor(authorId, 0, 20);
      if (page.items[0]!.id === post.id) {
        assert.equal(page.total, 2);
        break;
      }
      assert.ok(performance.now() - start < 2_000, 'the new post is still not on the page after 2 s');
      await sleep(5);
    }
  });

  test('nothing remembered is trusted once the listening connection is lost, and it listens again', async () => {
    await untilRemembering();
    const { rowCount } = await outside().query(`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and application_name = $1
        and (query = 'listen svc_community_changed' or query like '%set_config(''idle_session_timeout''%')`,
    [new URL(database.url).searchParams.get('application_name')]);
    assert.equal(rowCount, 1, 'one listening connection, the serving instance\'s');
    // The other instance never read a page, so it listens on nothing: the serving instance hears nothing now.
    await titled('while deaf', false);
    await untilRead('while deaf', 1_000);
    await untilRemembering();
  });
});

onPostgres('pages of posts remembered on PostgreSQL, behind a schema made later ahead on the search path', (database) => {
  const ahead = `${database.schema!}_ahead`;
  let serving: DatabaseHandle;
  let stores: Stores;
  let authorId: number;
  let postId: number;
  const admin = new pg.Client({ connectionString: postgresUrl });
  const outside = () => admin;

  before(async () => {
    await admin.connect();
    // Tables in the deployment's schema; a schema named before it on the search path, made after
    // the start (PostgreSQL 15's advice for a new deployment: `create schema svc authorization svc`).
    const url = new URL(withSearchPath(postgresUrl!, `${ahead},${database.schema}`));
    url.searchParams.set('application_name', database.schema!);
    serving = openDatabase({ kind: 'postgres', url: url.toString() });
    await migrateToLatest(serving.db);
    stores = createStores(serving.db, serving.queries);
    const author = await stores.users.create({ username: unique('author'), passwordHash: 'h', bio: '', member: false, level: 1, xp: 0 }, T0);
    const category = await stores.posts.ensureCategory(unique('Cat'));
    const post = await stores.posts.create({ authorId: author.id, categoryId: category.id, title: 'first', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published' }, T0);
    [authorId, postId] = [author.id, post.id];
    await outside().query(`create schema ${ahead}`);
  });

  after(async () => {
    await serving.close();
    await dropSchema(admin, ahead);
    await admin.end();
  });

  test('a write announced for the tables\' schema is seen, whatever schema comes first on the search path', async () => {
    const titleRead = async () => (await stores.posts.listPublishedByAuthor(authorId, 0, 20)).items[0]!.title;
    // Remembering: a change announced by nothing is not seen at once.
    for (let attempt = 0; ; attempt++) {
      await titleRead();
      await outside().query('begin');
      await outside().query('set local session_replication_role = replica');
      await outside().query(`update ${database.schema}.posts set title = $1 where id = $2`, [`unannounced ${attempt}`, postId]);
      await outside().query('commit');
      if (await titleRead() !== `unannounced ${attempt}`) break;
      assert.ok(attempt < 500, 'the page was never remembered');
      await sleep(10);
    }
    await outside().query(`update ${database.schema}.posts set title = 'announced' where id = $1`, [postId]);
    const start = performance.now();
    while (await titleRead() !== 'announced') {
      assert.ok(performance.now() - start < 1_000, 'the announcement was not heard');
      await sleep(5);
    }
  });
});
