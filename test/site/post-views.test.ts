/**
 * A published post's views (src/core/community/views.ts) over real HTTP, on every database: each
 * instance counts them in memory and adds them to the post when its counts are flushed (every
 * 10 s while it listens, and as it closes). Here the tests flush, so the flush timer is stopped.
 * A view counts as a reader would expect: not the author's own, and one viewer (a signed-in member,
 * else an address; here each visitor has its own, TRUST_PROXY=1) at most once per post an hour.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import type { Post } from '../../src/core/community/ports.js';
import { writePost } from '../../src/core/community/posts.js';
import type { Stores } from '../../src/core/stores.js';
import { openDatabase } from '../../src/storage/database.js';
import { traceSqliteQueriesWith } from '../../src/storage/query-tracing.js';
import { createStores } from '../../src/storage/stores.js';
import { get, newAccessToken, newPersonalToken, newUser } from '../api/fixtures.js';
import { VIEW_WINDOW_MS } from '../../src/core/community/views.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { type TestDatabase, forEachDatabase, temporarySqliteDatabase } from '../support/databases.js';
import { startAppsForSuite } from '../support/instances.js';
import { uniqueName } from '../staff/support.js';
import { AddressedVisitor, Visitor, signedInMember } from './visitor.js';

/** Every statement the SQLite databases opened in this file run, as its SQL text (src/storage/query-tracing.ts). */
const statements: string[] = [];
traceSqliteQueriesWith({ trace: (text, execute) => { statements.push(text); return execute(); } });

const PASSWORD = 'correct horse battery';

/** Each visitor at an address of its own, as X-Forwarded-For says. */
const APP_OPTIONS = { env: { TRUST_PROXY: '1' } };

/** A published post by a new member of `t`. */
async function publishedPost(t: TestApp): Promise<Post> {
  const author = await newUser(t.deps);
  return writePost(t.deps.stores, t.clock, { authorId: author.id, title: 'Seen', body: 'Words.', category: 'General', status: 'published' });
}

/** Opens `post`'s page on `t` once each from `viewers` new visitors, each at an address of its own and answered 200. */
async function view(t: TestApp, post: Post, viewers: number): Promise<void> {
  for (let i = 0; i < viewers; i++) assert.equal((await new AddressedVisitor(t.baseUrl).get(`/posts/${post.id}`)).status, 200);
}

/** Opens `post`'s page as `visitor`, `times` times; the views its page showed each time. */
async function viewsSeenBy(visitor: Visitor, post: Post, times = 1): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < times; i++) {
    const page = await visitor.get(`/posts/${post.id}`);
    assert.equal(page.status, 200);
    seen.push(Number(/<span>(\d+) views?<\/span>/.exec(page.text)![1]));
  }
  return seen;
}

/** Starts an app whose counts only the test flushes (or its closing). */
async function startWithoutFlushTimer(database: TestDatabase): Promise<TestApp> {
  const t = await startTestApp(database, APP_OPTIONS);
  await t.deps.countFlush.stop();
  return t;
}

forEachDatabase('post views', (database) => {
  let a: TestApp;
  let b: TestApp;
  startAppsForSuite(database, 2, APP_OPTIONS, (apps) => { [a, b] = apps; });
  before(async () => {
    for (const t of [a, b]) await t.deps.countFlush.stop();
  });

  const viewCount = async (post: Post) => (await a.deps.stores.posts.findById(post.id))?.viewCount;

  test('a post\'s views are in the database after the flush, and its page shows those written and its own', async () => {
    const post = await publishedPost(a);
    await view(a, post, 3);
    assert.equal(await viewCount(post), 0, 'a view writes nothing');
    await a.deps.views.flush(a.deps.stores);
    assert.equal(await viewCount(post), 3);
    assert.match((await new Visitor(a.baseUrl).get(`/posts/${post.id}`)).text, /<span>4 views<\/span>/, 'the views written and its own');
    await a.deps.views.flush(a.deps.stores);
    assert.equal(await viewCount(post), 4);
  });

  test('two instances\' views of one post add up', async () => {
    const post = await publishedPost(a);
    await view(a, post, 2);
    await view(b, post, 3);
    await Promise.all([a.deps.views.flush(a.deps.stores), b.deps.views.flush(b.deps.stores)]);
    assert.equal(await viewCount(post), 5);
  });

  test('an author\'s views of their own post do not count', async () => {
    const { user, visitor } = await signedInMember(a, uniqueName('author'), PASSWORD);
    const post = await writePost(a.deps.stores, a.clock, { authorId: user.id, title: 'Mine', body: 'Words.', category: 'General', status: 'published' });
    assert.deepEqual(await viewsSeenBy(visitor, post, 3), [0, 0, 0], 'the page adds no view of its own');
    await a.deps.views.flush(a.deps.stores);
    assert.equal(await viewCount(post), 0);
  });

  test('one address counts at most one view of a post an hour', async () => {
    const [post, other] = [await publishedPost(a), await publishedPost(a)];
    const reader = new AddressedVisitor(a.baseUrl);
    assert.deepEqual(await viewsSeenBy(reader, post, 3), [1, 1, 1], 'its page shows the one view counted each time');
    assert.deepEqual(await viewsSeenBy(reader, other), [1], 'another post counts its own');
    a.clock.advance(VIEW_WINDOW_MS - 1);
    await viewsSeenBy(reader, post);
    await a.deps.views.flush(a.deps.stores);
    assert.equal(await viewCount(post), 1, 'within the hour');
    a.clock.advance(1);
    await viewsSeenBy(reader, post, 2);
    await a.deps.views.flush(a.deps.stores);
    assert.equal(await viewCount(post), 2, 'an hour after the view counted, one more');
  });

  test('a signed-in member counts at most one view of a post an hour, from whatever address', async () => {
    const post = await publishedPost(a);
    const { visitor } = await signedInMember(a, uniqueName('reader'), PASSWORD);
    const elsewhere = new AddressedVisitor(a.baseUrl);
    for (const [name, value] of visitor.cookies) elsewhere.cookies.set(name, value);
    await viewsSeenBy(visitor, post, 2);
    await viewsSeenBy(elsewhere, post, 2);
    await a.deps.views.flush(a.deps.stores);
    assert.equal(await viewCount(post), 1);
  });

  test('two instances may each count one view by the same viewer: each remembers its own viewers', async () => {
    const post = await publishedPost(a);
    const reader = new AddressedVisitor(a.baseUrl);
    await viewsSeenBy(reader, post, 2);
    await viewsSeenBy(new AddressedVisitor(b.baseUrl, reader.address), post, 2);
    await Promise.all([a.deps.views.flush(a.deps.stores), b.deps.views.flush(b.deps.stores)]);
    assert.equal(await viewCount(post), 2);
  });

  test('closing an app writes the views it has not written yet', async () => {
    const post = await publishedPost(a);
    const closing = await startWithoutFlushTimer(database);
    try {
      await view(closing, post, 2);
      await closing.app.close();
      assert.equal(await viewCount(post), 2);
    } finally {
      await closing.close();
    }
  });

  test('a post\'s view count past 2^31 is stored, and read by the API as a JSON number (migration 2026-11-28-0030-bigint-counters)', async () => {
    const post = await publishedPost(a);
    await a.deps.stores.posts.addViews(new Map([[post.id, 2 ** 31 - 1]]));
    await a.deps.stores.posts.addViews(new Map([[post.id, 5]]));
    assert.equal(await viewCount(post), 2 ** 31 + 4);
    const { token } = await newAccessToken(a.deps, (await a.deps.stores.users.findById(post.authorId))!, 'posts:read');
    const response = await get(a.baseUrl, '/api/open/v1/me/posts', { token });
    assert.equal(response.status, 200);
    assert.match(await response.text(), new RegExp(`"viewCount":${2 ** 31 + 4}[,}]`));
  });

  test('views that could not be written, the database away, are kept and written by the next flush', async () => {
    const post = await publishedPost(a);
    // Stores over a connection that has closed: each write fails as it would with the database away.
    const away = openDatabase(database.target);
    const awayStores: Stores = createStores(away.db, away.queries);
    await away.ping();
    await away.close();
    await view(a, post, 2);
    await assert.rejects(a.deps.views.flush(awayStores));
    assert.equal(await viewCount(post), 0);
    await view(a, post, 1);
    await a.deps.views.flush(a.deps.stores);
    assert.equal(await viewCount(post), 3);
  });
});

describe('a post\'s view and the API\'s remembered reads [sqlite]', () => {
  const database = temporarySqliteDatabase();
  let t: TestApp;
  before(async () => { t = await startWithoutFlushTimer(database); });
  after(() => t.close());

  // On SQLite a write to `posts`, which has triggers, makes every remembered read be read again
  // (src/storage/sqlite-write-watch.ts): a write per view kept the bearer lookups cold.
  test('viewing a post page leaves the bearer lookups remembered: the API\'s next calls read no token row', async () => {
    const user = await newUser(t.deps);
    const post = await publishedPost(t);
    const tokens = [(await newAccessToken(t.deps, user, 'profile:read')).token, (await newPersonalToken(t.deps, user, ['profile:read'])).token];
    const tokenReads = () => statements.splice(0).filter((text) => /^select\b/i.test(text) && /"(access|personal)_tokens"/.test(text));
    for (let i = 0; i < 2; i++) for (const token of tokens) assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 200);
    tokenReads();
    for (const token of tokens) assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 200);
    assert.deepEqual(tokenReads(), [], 'remembered before any view');
    await view(t, post, 1);
    for (const token of tokens) assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 200);
    assert.deepEqual(tokenReads(), [], 'still remembered after a view');
  });

  // A bare statement slept in SQLite's busy wait while another connection held the write lock:
  // the instance answered nothing for up to 5 s at each flush (attack93).
  test('a flush waits for another connection\'s write lock without holding up the event loop', async () => {
    const post = await publishedPost(t);
    await view(t, post, 1);
    assert.equal(database.target.kind, 'sqlite');
    const other = new SQLite(database.target.path);
    const order: string[] = [];
    try {
      other.exec('begin immediate');
      const flushing = t.deps.views.flush(t.deps.stores).then(() => { order.push('flushed'); });
      await new Promise((resolve) => setTimeout(resolve, 50));
      order.push('a timer ran');
      other.exec('commit');
      await flushing;
    } finally {
      other.close();
    }
    assert.deepEqual(order, ['a timer ran', 'flushed']);
    assert.equal((await t.deps.stores.posts.findById(post.id))?.viewCount, 1);
  });
});
