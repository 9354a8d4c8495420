/**
 * PostgreSQL keeps a page of posts it read until the database announces a write to `posts`,
 * `users` or `categories` (`PostgresChangeFeed`, migration 2026-12-02-0010; issue 35 item 3), and
 * trusts nothing it remembered while it cannot hear the announcements. A write that announces
 * nothing (`session_replication_role = replica` fires no trigger) shows whether a read was
 * answered from memory.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { type DatabaseHandle, inTransaction, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { createStores } from '../../src/storage/stores.js';
import type { Stores } from '../../src/core/stores.js';
import { unique } from '../oauth/helpers.js';
import { onPostgres, outsideConnection } from '../support/databases.js';

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
    const before = await titleRead();
    await titled('unannounced', false);
    assert.equal(await titleRead(), before, 'a write the database did not announce is not seen');
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
    // Announced by no trigger: what moves the page is this instance's own commit.
    await inTransaction(serving.db, async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await trx.updateTable('posts').set({ title: 'written here' }).where('id', '=', postId).execute();
    });
    assert.equal(await titleRead(), 'written here');
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
      where datname = current_database() and pid <> pg_backend_pid() and query = 'listen svc_community_changed' and application_name = $1`,
    [new URL(database.url).searchParams.get('application_name')]);
    assert.equal(rowCount, 1, 'one listening connection, the serving instance\'s');
    // The other instance never read a page, so it listens on nothing: the serving instance hears nothing now.
    await titled('while deaf', false);
    await untilRead('while deaf', 1_000);
    await untilRemembering();
  });
});
