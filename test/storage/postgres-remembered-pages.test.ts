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
import { type Kysely, sql } from 'kysely';
import { type DatabaseHandle, inTransaction, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { createStores } from '../../src/storage/stores.js';
import type { Database } from '../../src/storage/schema.js';
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
  const titledHere = (title: string, meanwhile = async () => {}) => unannouncedHere(async (trx) => {
    await trx.updateTable('posts').set({ title }).where('id', '=', postId).execute();
    await meanwhile();
  });
  /** Runs `write` in a transaction of the serving instance that no trigger announces. */
  const unannouncedHere = (write: (trx: Kysely<Database>) => Promise<unknown>) => inTransaction(serving.db, async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    await write(trx);
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

  test('a post this instance adds or deletes is on the page, or off it, at its next read', async () => {
    await untilRemembering();
    const ids = async () => (await stores.posts.listPublishedByAuthor(authorId, 0, 20)).items.map((post) => post.id);
    const [category] = await serving.db.selectFrom('categories').select('id').limit(1).execute();
    const row = { author_id: authorId, category_id: category!.id, title: 'added here', body: 'b', body_html: '<p>b</p>', excerpt: 'b', status: 'published', created_at: T0 + 120_000, updated_at: T0 + 120_000 };
    let added = 0;
    await unannouncedHere(async (trx) => {
      added = (await trx.insertInto('posts').values(row).returning('id').executeTakeFirstOrThrow()).id;
    });
    assert.equal((await ids())[0], added);
    await unannouncedHere((trx) => trx.deleteFrom('posts').where('id', '=', added).execute());
    assert.ok(!(await ids()).includes(added));
  });

  test('a write announced while a page is being read has the page read again next time', async () => {
    await untilRemembering();
    const reads = [(db: Kysely<Database>) => db.selectFrom('posts').select('title')];
    const read = async () => (await sql<{ title: string }>`select title from posts where id = ${postId}`.execute(serving.db)).rows[0]!.title;
    const first = await serving.queries.rememberedAnswer(serving.db, reads, 'title', async () => {
      const title = await read();
      await titled('announced mid-read', true);
      // Its notification arrives while this read is still under way.
      await sleep(200);
      return title;
    });
    assert.notEqual(first, 'announced mid-read');
    assert.equal(await serving.queries.rememberedAnswer(serving.db, reads, 'title', read), 'announced mid-read');
  });

  test('the database announces a write to what a page shows, and none to a count', async () => {
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query('listen svc_community_changed');
    const schema = database.schema!;
    /** Whether `statement` was announced: a fence notified after it comes in commit order, so anything it set off is heard first. */
    const announced = async (statement: string, values: unknown[] = []) => {
      heard.length = 0;
      await outside().query(statement, values);
      const fence = unique('fence');
      await outside().query('select pg_notify($1, $2)', ['svc_community_changed', fence]);
      while (!heard.includes(fence)) await sleep(2);
      return heard.includes(schema);
    };
    try {
      const [{ id: categoryId }] = (await outside().query(`select id from ${schema}.categories limit 1`)).rows;
      for (const column of ['author_id', 'category_id', 'title', 'excerpt', 'status', 'created_at', 'updated_at']) {
        assert.ok(await announced(`update ${schema}.posts set ${column} = ${column} where id = $1`, [postId]), `posts.${column}`);
      }
      for (const column of ['username', 'nickname', 'status', 'published_posts']) {
        assert.ok(await announced(`update ${schema}.users set ${column} = ${column} where id = $1`, [authorId]), `users.${column}`);
      }
      assert.ok(await announced(`update ${schema}.categories set name = name where id = $1`, [categoryId]), 'categories.name');
      assert.ok(await announced(`insert into ${schema}.posts (author_id, category_id, title, body, status, created_at, updated_at)
        values ($1, $2, 'fenced', 'b', 'draft', 1, 1)`, [authorId, categoryId]), 'a post added');
      const { rows: [made] } = await outside().query(`select id from ${schema}.posts where title = 'fenced'`);
      assert.ok(await announced(`delete from ${schema}.posts where id = $1`, [made.id]), 'a post deleted');
      assert.ok(await announced(`insert into ${schema}.categories (name, name_key) values ($1, $1)`, [unique('fenced')]), 'a category added');
      for (const column of ['like_count', 'comment_count', 'view_count', 'body']) {
        assert.equal(await announced(`update ${schema}.posts set ${column} = ${column} where id = $1`, [postId]), false, `posts.${column}`);
      }
      for (const column of ['bio', 'password_hash']) {
        assert.equal(await announced(`update ${schema}.users set ${column} = ${column} where id = $1`, [authorId]), false, `users.${column}`);
      }
    } finally {
      await listener.end();
    }
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
