/**
 * The storage contract: every store behaves the same on SQLite and PostgreSQL.
 * Each test makes the users and clients it needs; nothing is shared between tests.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { MAX_PAGING_VALUE } from '../../src/core/api/views.js';
import { ConflictError } from '../../src/core/errors.js';
import type { KeysetCursor } from '../../src/core/community/ports.js';
import type { Stores } from '../../src/core/stores.js';
import type { Kysely } from 'kysely';
import { type DatabaseHandle, keyIsAnyOf, openDatabase } from '../../src/storage/database.js';
import type { Database } from '../../src/storage/schema.js';
import { createStores } from '../../src/storage/stores.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { unique } from '../oauth/helpers.js';
import { forEachDatabase } from '../support/databases.js';
import { holdsWithin } from '../support/eventually.js';
import { purgeOptions, storesForSuite } from '../support/stores.js';

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);
const MINUTE = 60_000;
/** Resolves in the next turn of the event loop (after its check phase). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

forEachDatabase('storage contract', (database) => {
  let handle: DatabaseHandle;
  let stores: Stores;
  storesForSuite(database, (opened, openedHandle) => { stores = opened; handle = openedHandle; });

  const newUser = (username = unique('user')) =>
    stores.users.create({ username, passwordHash: 'hash', bio: '', member: false, level: 1, xp: 0 }, T0);

  const newClient = (ownerId: number | null = null) =>
    stores.clients.create({
      clientId: unique('client'), name: 'App', description: '', homepageUrl: '', ownerId, type: 'confidential',
      redirectUris: ['https://app.example/cb'], allowedScopes: ['openid', 'profile:read'], secretHash: 'h', idTokenAlg: 'RS256',
    }, T0);

  const newGrant = async () => {
    const user = await newUser();
    const client = await newClient();
    const grant = await stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 'profile:read', nonce: null, authTime: T0 }, T0);
    return { user, client, grant };
  };

  test('migrations run again without change', async () => {
    assert.deepEqual(await migrateToLatest(handle.db), { applied: [] });
  });

  test('a read outside a transaction never sees the writes of a transaction still open', async () => {
    const user = await newUser();
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => { written = resolve; });
    const open = stores.transaction(async (tx) => {
      await tx.users.setStatus(user.id, 'suspended', T0 + 1);
      written();
      await held;
      throw new Error('rolled back');
    });
    await wrote;
    const read = stores.users.findById(user.id);
    release();
    await assert.rejects(open, /rolled back/);
    assert.equal((await read)?.status, 'active');
  });

  test('a user round-trips with every field, timestamps as UTC epoch milliseconds', async () => {
    const created = await stores.users.create({ username: unique('Ann'), passwordHash: 'argon', bio: 'hi', member: true, level: 3, xp: 42 }, T0);
    assert.equal(typeof created.id, 'number');
    assert.deepEqual(await stores.users.findById(created.id), created);
    assert.equal(created.member, true);
    assert.equal(created.status, 'active');
    assert.equal(created.createdAt, T0);
  });

  test('usernames are unique regardless of letter case, and found in any case', async () => {
    const name = unique('Case');
    const user = await newUser(name);
    await assert.rejects(newUser(name.toUpperCase()), ConflictError);
    assert.equal((await stores.users.findByUsername(name.toLowerCase()))?.id, user.id);
  });

  test('credentials are only returned by the sign-in lookup', async () => {
    const user = await newUser();
    assert.equal('passwordHash' in (await stores.users.findById(user.id))!, false);
    assert.equal((await stores.users.findCredentials(user.username))?.passwordHash, 'hash');
  });

  test('an account status change is stored', async () => {
    const user = await newUser();
    assert.equal((await stores.users.setStatus(user.id, 'suspended', T0 + 1))?.status, 'suspended');
    assert.equal(await stores.users.setStatus(987654321, 'banned', T0), undefined);
  });

  test('status_changed_at moves in the status change\'s own write when the account enters or leaves active, and with nothing else: not a profile edit, nor a move between two statuses that are not active', async () => {
    const user = await newUser();
    assert.equal(user.statusChangedAt, T0, 'made active at its creation');
    assert.equal((await stores.users.setStatus(user.id, 'suspended', T0 + 1))?.statusChangedAt, T0 + 1);
    await stores.users.updateProfile(user.id, { bio: 'edited' }, T0 + 2);
    assert.equal((await stores.users.setStatus(user.id, 'banned', T0 + 3))?.statusChangedAt, T0 + 1, 'still ended at its suspension');
    assert.equal((await stores.users.findById(user.id))?.updatedAt, T0 + 3);
    assert.equal((await stores.users.setStatus(user.id, 'active', T0 + 4))?.statusChangedAt, T0 + 4);
    assert.equal((await stores.users.setStatus(user.id, 'deleted', T0 + 5, 'active'))?.statusChangedAt, T0 + 5);
  });

  test('a new password hash replaces the old one; an unknown user is reported', async () => {
    const user = await newUser();
    assert.equal(await stores.users.setPasswordHash(user.id, 'argon-new', T0 + 1), true);
    assert.equal((await stores.users.findCredentials(user.username))?.passwordHash, 'argon-new');
    assert.equal((await stores.users.findById(user.id))?.updatedAt, T0 + 1);
    assert.equal(await stores.users.setPasswordHash(987654321, 'x', T0), false);
  });

  test('a rehash replaces the stored hash only while it is still the account\'s, and leaves updated_at', async () => {
    const user = await newUser();
    assert.equal(await stores.users.rehashPassword(user.id, 'other', 'argon-rehashed'), false, 'a password changed meanwhile stays');
    assert.equal((await stores.users.findCredentials(user.username))?.passwordHash, 'hash');
    assert.equal(await stores.users.rehashPassword(user.id, 'hash', 'argon-rehashed'), true);
    assert.equal((await stores.users.findCredentials(user.username))?.passwordHash, 'argon-rehashed');
    assert.equal((await stores.users.findById(user.id))?.updatedAt, user.updatedAt);
    assert.equal(await stores.users.rehashPassword(user.id, 'hash', 'argon-again'), false, 'the second of two at once finds it replaced');
  });

  test('users list by id in pages after an id, of one status when asked', async () => {
    const made = [await newUser(), await newUser(), await newUser()];
    await stores.users.setStatus(made[1]!.id, 'suspended', T0 + 1);
    const after = made[0]!.id - 1;
    assert.deepEqual((await stores.users.list({ afterId: after, limit: 2 })).map((u) => u.id), [made[0]!.id, made[1]!.id]);
    assert.deepEqual((await stores.users.list({ afterId: made[1]!.id, limit: 2 })).map((u) => u.id), [made[2]!.id]);
    const suspended = await stores.users.list({ afterId: after, limit: 10, status: 'suspended' });
    assert.deepEqual(suspended.map((u) => u.id), [made[1]!.id]);
    assert.deepEqual(suspended[0], await stores.users.findById(made[1]!.id));
  });

  test('an avatar is stored and replaced', async () => {
    const user = await newUser();
    await stores.users.setAvatar(user.id, 'image/png', new Uint8Array([1, 2, 3]), T0);
    await stores.users.setAvatar(user.id, 'image/jpeg', new Uint8Array([4, 5]), T0 + 1);
    const avatar = await stores.users.findAvatar(user.id);
    assert.equal(avatar?.contentType, 'image/jpeg');
    assert.deepEqual([...avatar!.image], [4, 5]);
  });

  test('published posts list newest first, ties broken by id, drafts excluded, total counted', async () => {
    const author = await newUser();
    const category = await stores.posts.ensureCategory(unique('Cat'));
    const make = (title: string, at: number, status: 'published' | 'draft' = 'published') =>
      stores.posts.create({ authorId: author.id, categoryId: category.id, title, body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status }, at);
    const a = await make('a', T0);
    const b = await make('b', T0 + MINUTE);
    const c = await make('c', T0 + MINUTE); // same instant as b: the higher id comes first
    await make('draft', T0 + 2 * MINUTE, 'draft');
    const page = await stores.posts.listPublishedByAuthor(author.id, 0, 10);
    assert.deepEqual(page.items.map((p) => p.id), [c.id, b.id, a.id]);
    assert.equal(page.total, 3);
    const second = await stores.posts.listPublishedByAuthor(author.id, 2, 2);
    assert.deepEqual(second.items.map((p) => p.id), [a.id]);
    assert.equal((await stores.posts.listDraftsByAuthor(author.id)).length, 1);
    assert.equal(page.items[0]!.categoryName, category.name);
    assert.equal(page.items[0]!.authorUsername, author.username);
  });

  test('a member\'s posts (drafts too), comments and likes read in keyset pages come oldest first, ties by id, each once, and no one else\'s', async () => {
    const [author, other] = [await newUser(), await newUser()];
    const category = await stores.posts.ensureCategory(unique('Cat'));
    const make = (authorId: number, title: string, at: number, status: 'published' | 'draft' = 'published') =>
      stores.posts.create({ authorId, categoryId: category.id, title, body: title, bodyHtml: '<p>b</p>', excerpt: 'b', status }, at);
    // Two instants, three rows each: a page boundary falls inside a tie.
    const posts = [];
    for (const at of [T0 + MINUTE, T0]) for (const i of [1, 2, 3]) posts.push(await make(author.id, `${at}-${i}`, at, i === 2 ? 'draft' : 'published'));
    await make(other.id, 'not mine', T0);
    const expected = [...posts].sort((x, y) => x.createdAt - y.createdAt || x.id - y.id).map((p) => p.id);
    const comments = [];
    for (const [post, at] of [[posts[0]!, T0 + MINUTE], [posts[1]!, T0], [posts[0]!, T0], [posts[2]!, T0 + MINUTE]] as const) {
      comments.push(await stores.posts.addComment(post.id, author.id, `on ${post.id}`, at));
    }
    await stores.posts.addComment(posts[0]!.id, other.id, 'not mine', T0);
    for (const [post, at] of [[posts[3]!, T0 + MINUTE], [posts[0]!, T0], [posts[4]!, T0], [posts[5]!, T0 + MINUTE]] as const) await stores.posts.like(post.id, author.id, at);
    await stores.posts.like(posts[0]!.id, other.id, T0);
    /** Every row `read` gives, two at a time, each page after the last row of the one before. */
    const paged = async <R>(read: (after: KeysetCursor | undefined) => Promise<R[]>, cursor: (row: R) => KeysetCursor) => {
      const rows: R[] = [];
      for (let page = await read(undefined); page.length > 0; page = await read(cursor(page.at(-1)!))) {
        assert.ok(page.length <= 2);
        rows.push(...page);
      }
      return rows;
    };
    assert.deepEqual((await paged((after) => stores.posts.listAllByAuthor(author.id, after, 2), (p) => p)).map((p) => p.id), expected);
    assert.deepEqual((await paged((after) => stores.posts.listCommentsByAuthor(author.id, after, 2), (c) => c)).map((c) => c.id),
      [...comments].sort((x, y) => x.createdAt - y.createdAt || x.id - y.id).map((c) => c.id));
    assert.deepEqual((await paged((after) => stores.posts.listLikesBy(author.id, after, 2), (l) => ({ createdAt: l.createdAt, id: l.postId }))).map((l) => [l.createdAt, l.postId]),
      [[T0, posts[0]!.id], [T0, posts[4]!.id], [T0 + MINUTE, posts[3]!.id], [T0 + MINUTE, posts[5]!.id]].sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!));
  });

  test('a listed post carries its title, excerpt, counts and instants as stored, whatever their characters', async () => {
    const author = await newUser();
    const category = await stores.posts.ensureCategory(unique('类别 "q" \\'));
    const text = '"quoted" \\ back\\slash\ttab\nline \u2028 </script> 引号 😀 \u0001';
    const post = await stores.posts.create({
      authorId: author.id, categoryId: category.id, title: text, body: 'b', bodyHtml: '<p>b</p>', excerpt: `${text}…`,
      status: 'published', likeCount: 2_147_483_647, commentCount: 0, viewCount: 9,
    }, 4_102_444_800_123);
    const { body: _body, bodyHtml: _html, ...summary } = (await stores.posts.findById(post.id))!;
    const alone = await stores.posts.listPublishedByAuthor(author.id, 0, 10);
    const [together] = await Promise.all([stores.posts.listPublishedByAuthor(author.id, 0, 10), stores.posts.listPublishedByAuthor(author.id, 0, 5)]);
    assert.deepEqual(alone, { items: [summary], total: 1 });
    assert.deepEqual(together, alone, 'read with another page of its turn');
    assert.equal(summary.title, text);
  });

  test('every page, deep ones read from the oldest end included, is the same slice of the whole list, read alone or all at once, before and after the total changes', async () => {
    const author = await newUser();
    const other = await newUser();
    const category = await stores.posts.ensureCategory(unique('Cat'));
    const make = (authorId: number, at: number, status: 'published' | 'draft' = 'published') =>
      stores.posts.create({ authorId, categoryId: category.id, title: 't', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status }, at);
    const posts = [];
    // Three posts a minute, so pages cut through ties that only the id orders; enough that pages in
    // the middle are past what a page skips with OFFSET from either end (200 entries, posts.ts).
    // They are dated before T0, so they never crowd other tests' posts out of the newest.
    const start = T0 - 1_000 * MINUTE;
    for (let i = 0; i < 450; i += 1) posts.push(await make(author.id, start + Math.floor(i / 3) * MINUTE));
    const draft = await make(author.id, start + 5 * MINUTE, 'draft');
    await make(other.id, start + 5 * MINUTE);
    const everyPage = async (expectedTotal: number) => {
      const all = await stores.posts.listPublishedByAuthor(author.id, 0, 1000);
      assert.equal(all.total, expectedTotal);
      assert.equal(all.items.length, expectedTotal);
      const asked: Array<[number, number]> = [];
      for (const size of [1, 7, 20]) {
        for (let offset = 0; offset <= expectedTotal + size; offset += size) asked.push([offset, size]);
      }
      const expected = ([offset, size]: [number, number]) => ({ items: all.items.slice(offset, offset + size), total: expectedTotal });
      for (const [offset, size] of asked) {
        assert.deepEqual(await stores.posts.listPublishedByAuthor(author.id, offset, size), expected([offset, size]), `offset ${offset}, size ${size}`);
      }
      // Asked in one turn, with the other author's pages among them (PostgreSQL reads them together).
      const atOnce = await Promise.all(asked.flatMap(([offset, size]) => [
        stores.posts.listPublishedByAuthor(author.id, offset, size), stores.posts.listPublishedByAuthor(other.id, offset, size),
      ]));
      asked.forEach((read, i) => {
        assert.deepEqual(atOnce[2 * i], expected(read), `at once: offset ${read[0]}, size ${read[1]}`);
        assert.equal(atOnce[2 * i + 1]!.total, 1);
        assert.equal(atOnce[2 * i + 1]!.items.length, read[0] === 0 ? 1 : 0);
      });
    };
    await everyPage(450);
    await stores.posts.delete(posts[3]!.id, author.id);
    await stores.posts.delete(posts[438]!.id, author.id);
    await stores.posts.publish(draft.id, author.id, start + 2 * MINUTE);
    await everyPage(449);
  });

  test('first pages asked at once, of several authors, one twice at two sizes, one with no posts and one with no account, are each the page read alone', async () => {
    const [one, two, none] = [await newUser(), await newUser(), await newUser()];
    const category = await stores.posts.ensureCategory(unique('Cat'));
    for (const [author, count] of [[one, 3], [two, 2]] as const) {
      for (let i = 0; i < count; i += 1) {
        await stores.posts.create({ authorId: author.id, categoryId: category.id, title: `${author.id}-${i}`, body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published' }, T0 + i * MINUTE);
      }
    }
    const asked: Array<[number, number]> = [[one.id, 10], [two.id, 10], [none.id, 10], [one.id, 2], [2 ** 31 - 1, 10], [two.id, 1]];
    const alone = [];
    for (const [author, size] of asked) alone.push(await stores.posts.listPublishedByAuthor(author, 0, size));
    assert.deepEqual(alone.map((page) => [page.items.length, page.total]), [[3, 3], [2, 2], [0, 0], [2, 3], [0, 0], [1, 2]]);
    assert.deepEqual(await Promise.all(asked.map(([author, size]) => stores.posts.listPublishedByAuthor(author, 0, size))), alone);
  });

  test('a page past the end, up to the largest offset the API can ask for, is empty and still says the total', async () => {
    const author = await newUser();
    const category = await stores.posts.ensureCategory(unique('Cat'));
    for (let i = 0; i < 3; i += 1) {
      await stores.posts.create({ authorId: author.id, categoryId: category.id, title: 't', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published' }, T0 + i * MINUTE);
    }
    // Twice these passes a 32-bit integer, and the last is the API's last page of its largest size.
    const offsets = [3, 2 ** 30, 2 ** 31, MAX_PAGING_VALUE * 50];
    for (const offset of offsets) {
      assert.deepEqual(await stores.posts.listPublishedByAuthor(author.id, offset, 50), { items: [], total: 3 }, `offset ${offset}`);
    }
    const atOnce = await Promise.all(offsets.map((offset) => stores.posts.listPublishedByAuthor(author.id, offset, 50)));
    assert.deepEqual(atOnce, offsets.map(() => ({ items: [], total: 3 })));
  });

  test('a page of posts carries each post\'s every column as the post itself reads, whether read at once or behind a transaction', async () => {
    const author = await newUser();
    const reader = await newUser();
    await stores.users.updateProfile(author.id, { nickname: unique('Nick') }, T0);
    const [first, second] = [await stores.posts.ensureCategory(unique('A')), await stores.posts.ensureCategory(unique('B'))];
    const make = (categoryId: number, title: string, excerpt: string, at: number) =>
      stores.posts.create({ authorId: author.id, categoryId, title, body: 'b', bodyHtml: '<p>b</p>', excerpt, status: 'published' }, at);
    const older = await make(first.id, 'older', 'first words', T0);
    const newer = await make(second.id, 'newer', 'other words', T0 + MINUTE);
    // Every counter and both instants differ, so a column read from another's place shows.
    await stores.posts.edit(older.id, author.id, { categoryId: first.id, title: 'older, edited', body: 'b2', bodyHtml: '<p>b2</p>', excerpt: 'edited words', publish: false }, T0 + 5 * MINUTE);
    await stores.posts.like(older.id, reader.id, T0 + 6 * MINUTE);
    for (let i = 0; i < 2; i += 1) await stores.posts.addComment(older.id, reader.id, 'hi', T0 + 7 * MINUTE);
    await stores.posts.addViews(new Map([[older.id, 3]]));
    const summary = async (id: number) => {
      const { body: _body, bodyHtml: _bodyHtml, ...rest } = (await stores.posts.findById(id))!;
      return rest;
    };
    const expected = { items: [await summary(newer.id), await summary(older.id)], total: 2 };
    assert.deepEqual(await stores.posts.listPublishedByAuthor(author.id, 0, 10), expected);
    assert.deepEqual(await stores.posts.listPublishedByAuthor(author.id, 1, 1), { items: [expected.items[1]], total: 2 });
    // While a transaction holds SQLite's one connection, a page waits for it in Kysely's executor.
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let begun!: () => void;
    const holding = new Promise<void>((resolve) => { begun = resolve; });
    const open = stores.transaction(async (tx) => {
      await tx.users.findById(reader.id);
      begun();
      await held;
    });
    await holding;
    const pages = [stores.posts.listPublishedByAuthor(author.id, 0, 10), stores.posts.listPublishedByAuthor(author.id, 1, 1)];
    release();
    await open;
    assert.deepEqual(await pages[0], expected);
    assert.deepEqual(await pages[1], { items: [expected.items[1]], total: 2 });
  });

  test('posts and comments carry their author\'s nickname, the username when none is set (INTERFACE section 12)', async () => {
    const author = await newUser();
    const reader = await newUser();
    await stores.users.updateProfile(author.id, { nickname: '林小伟' }, T0);
    const category = await stores.posts.ensureCategory(unique('N'));
    const make = (status: 'published' | 'draft') =>
      stores.posts.create({ authorId: author.id, categoryId: category.id, title: 't', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status }, T0);
    const post = await make('published');
    await make('draft');
    const names = (p: { authorUsername: string; authorNickname: string } | undefined) => [p?.authorUsername, p?.authorNickname];
    const named = [author.username, '林小伟'];
    assert.deepEqual(names(post), named, 'create');
    assert.deepEqual(names(await stores.posts.findById(post.id)), named, 'findById');
    assert.deepEqual(names((await stores.posts.listPublishedByAuthor(author.id, 0, 10)).items[0]), named, 'listPublishedByAuthor');
    assert.deepEqual(names((await stores.posts.listDraftsByAuthor(author.id))[0]), named, 'listDraftsByAuthor');
    assert.deepEqual(names((await stores.posts.listRecentPublished(50)).find((p) => p.id === post.id)), named, 'listRecentPublished');
    assert.deepEqual(names(await stores.posts.addComment(post.id, reader.id, 'hi', T0)), [reader.username, reader.username], 'addComment');
    await stores.posts.addComment(post.id, author.id, 'thanks', T0 + MINUTE);
    assert.deepEqual((await stores.posts.listComments(post.id)).map(names), [[reader.username, reader.username], named], 'listComments');
  });

  test('a post is edited, published and deleted by its author only, each in one conditional write', async () => {
    const author = await newUser();
    const other = await newUser();
    const category = await stores.posts.ensureCategory(unique('Cat'));
    const moved = await stores.posts.ensureCategory(unique('Moved'));
    const draft = await stores.posts.create({ authorId: author.id, categoryId: category.id, title: 'd', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'draft' }, T0);
    const edit = { categoryId: moved.id, title: 'e', body: 'e2', bodyHtml: '<p>e2</p>', excerpt: 'e2', publish: false };

    assert.equal(await stores.posts.edit(draft.id, other.id, edit, T0 + MINUTE), false, "another's post");
    assert.equal(await stores.posts.publish(draft.id, other.id, T0 + MINUTE), false);
    assert.equal(await stores.posts.delete(draft.id, other.id), false);
    assert.deepEqual(await stores.posts.findById(draft.id), draft, 'unchanged');

    assert.equal(await stores.posts.edit(draft.id, author.id, edit, T0 + MINUTE), true);
    const edited = await stores.posts.findById(draft.id);
    assert.deepEqual([edited?.title, edited?.body, edited?.bodyHtml, edited?.excerpt, edited?.categoryName, edited?.status, edited?.createdAt, edited?.updatedAt],
      ['e', 'e2', '<p>e2</p>', 'e2', moved.name, 'draft', T0, T0 + MINUTE]);

    assert.equal(await stores.posts.publish(draft.id, author.id, T0 + 2 * MINUTE), true);
    assert.equal(await stores.posts.publish(draft.id, author.id, T0 + 3 * MINUTE), false, 'published once');
    const published = await stores.posts.findById(draft.id);
    assert.deepEqual([published?.status, published?.createdAt, published?.updatedAt], ['published', T0 + 2 * MINUTE, T0 + 2 * MINUTE], 'dated when published');
    assert.equal(await stores.posts.edit(draft.id, author.id, { ...edit, publish: true }, T0 + 4 * MINUTE), true);
    assert.equal((await stores.posts.findById(draft.id))?.createdAt, T0 + 2 * MINUTE, 'an edit of a published post keeps its date');

    const second = await stores.posts.create({ authorId: author.id, categoryId: category.id, title: 'd2', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'draft' }, T0);
    assert.equal(await stores.posts.edit(second.id, author.id, { ...edit, publish: true }, T0 + 5 * MINUTE), true);
    assert.deepEqual([(await stores.posts.findById(second.id))?.status, (await stores.posts.findById(second.id))?.createdAt], ['published', T0 + 5 * MINUTE],
      'a draft published by its edit is dated then');

    await stores.posts.like(draft.id, other.id, T0);
    await stores.posts.addComment(draft.id, other.id, 'nice', T0);
    assert.equal(await stores.posts.delete(draft.id, author.id), true);
    assert.equal(await stores.posts.findById(draft.id), undefined);
    assert.deepEqual(await stores.posts.listComments(draft.id), []);
    assert.equal(await stores.posts.delete(draft.id, author.id), false, 'gone');
    assert.equal(await stores.posts.edit(draft.id, author.id, edit, T0), false);
  });

  test('an author\'s published total follows each publish, edit that publishes, and delete; drafts, views and other authors leave it', async () => {
    const author = await newUser();
    const other = await newUser();
    const category = await stores.posts.ensureCategory(unique('Cat'));
    const make = (authorId: number, status: 'published' | 'draft') =>
      stores.posts.create({ authorId, categoryId: category.id, title: 't', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status }, T0);
    const total = async () => (await stores.posts.listPublishedByAuthor(author.id, 0, 1)).total;
    const published = await make(author.id, 'published');
    const draft = await make(author.id, 'draft');
    const another = await make(author.id, 'draft');
    await make(other.id, 'published');
    assert.equal(await total(), 1);
    await stores.posts.addViews(new Map([[published.id, 1]]));
    await stores.posts.like(published.id, other.id, T0);
    await stores.posts.edit(published.id, author.id, { categoryId: category.id, title: 'e', body: 'e', bodyHtml: '<p>e</p>', excerpt: 'e', publish: true }, T0);
    assert.equal(await total(), 1, 'views, likes and edits of a published post');
    await stores.posts.publish(draft.id, author.id, T0);
    assert.equal(await total(), 2);
    await stores.posts.edit(another.id, author.id, { categoryId: category.id, title: 'e', body: 'e', bodyHtml: '<p>e</p>', excerpt: 'e', publish: true }, T0);
    assert.equal(await total(), 3, 'a draft published by its edit');
    await stores.posts.delete(published.id, author.id);
    assert.equal(await total(), 2);
    assert.equal((await stores.posts.listPublishedByAuthor(other.id, 0, 1)).total, 1);
  });

  test('an author\'s published total counts every one of many publishes and deletes made at once', async () => {
    const author = await newUser();
    const category = await stores.posts.ensureCategory(unique('Cat'));
    const drafts = await Promise.all(Array.from({ length: 24 }, () =>
      stores.posts.create({ authorId: author.id, categoryId: category.id, title: 't', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'draft' }, T0)));
    const total = async () => (await stores.posts.listPublishedByAuthor(author.id, 0, 1)).total;
    assert.deepEqual(await Promise.all(drafts.map((d) => stores.posts.publish(d.id, author.id, T0))), drafts.map(() => true));
    assert.equal(await total(), 24);
    await Promise.all(drafts.slice(0, 10).map((d) => stores.posts.delete(d.id, author.id)));
    assert.equal(await total(), 14);
  });

  test('views are added to many posts at once, each its own count; a post deleted meanwhile is left out', async () => {
    const author = await newUser();
    const category = await stores.posts.ensureCategory(unique('Views'));
    const make = (views: number) => stores.posts.create({ authorId: author.id, categoryId: category.id, title: 't', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published', viewCount: views }, T0);
    const [first, second, untouched, deleted] = [await make(0), await make(40), await make(7), await make(0)];
    await stores.posts.delete(deleted.id, author.id);
    await stores.posts.addViews(new Map([[first.id, 1], [second.id, 2_000], [deleted.id, 5]]));
    await stores.posts.addViews(new Map());
    const views = async (id: number) => (await stores.posts.findById(id))?.viewCount;
    assert.deepEqual([await views(first.id), await views(second.id), await views(untouched.id), await views(deleted.id)], [1, 2_040, 7, undefined]);
  });

  test('a category is found in any letter case instead of being created twice', async () => {
    const name = unique('Travel');
    const first = await stores.posts.ensureCategory(name);
    assert.equal((await stores.posts.ensureCategory(name.toUpperCase())).id, first.id);
  });

  test('a like counts once per user; a comment and a view move their counts', async () => {
    const author = await newUser();
    const reader = await newUser();
    const category = await stores.posts.ensureCategory(unique('C'));
    const post = await stores.posts.create({ authorId: author.id, categoryId: category.id, title: 't', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published' }, T0);
    assert.equal(await stores.posts.like(post.id, reader.id, T0), true);
    assert.equal(await stores.posts.like(post.id, reader.id, T0), false);
    await stores.posts.addComment(post.id, reader.id, 'nice', T0);
    await stores.posts.addViews(new Map([[post.id, 1]]));
    const after = await stores.posts.findById(post.id);
    assert.deepEqual([after?.likeCount, after?.commentCount, after?.viewCount], [1, 1, 1]);
    assert.equal((await stores.posts.listComments(post.id))[0]?.authorUsername, reader.username);
  });

  test('an owner\'s new addresses make an app the member\'s and end its verification in the same write; the same addresses, or the operator\'s change, leave both', async () => {
    const owner = await newUser();
    const client = await newClient(owner.id);
    const verify = async (clientId: string) => {
      const found = (await stores.clients.findById(clientId))!;
      return stores.clients.setVerified(clientId, { verified: true, reviewed: found }, T0);
    };
    const state = async (clientId = client.clientId) => {
      const found = await stores.clients.findById(clientId);
      return { memberRegistered: found?.memberRegistered, verified: found?.verifiedAt !== null };
    };
    await verify(client.clientId);
    await stores.clients.setRedirectUris(client.clientId, ['https://app.example/cb'], T0 + 1, 'owner');
    assert.deepEqual(await state(), { memberRegistered: false, verified: true }, 'the same redirect URIs saved again');
    await stores.clients.setRedirectUris(client.clientId, ['https://app.example/cb', 'https://elsewhere.example/cb'], T0 + 2, 'operator');
    assert.deepEqual(await state(), { memberRegistered: false, verified: true }, 'the operator\'s change');
    await stores.clients.setRedirectUris(client.clientId, ['https://app.example/cb', 'https://evil.example/cb'], T0 + 3, 'owner');
    assert.deepEqual(await state(), { memberRegistered: true, verified: false }, 'the owner\'s new redirect URI');
    assert.deepEqual((await stores.clients.findById(client.clientId))?.redirectUris, ['https://app.example/cb', 'https://evil.example/cb']);

    const other = await newClient(owner.id);
    await verify(other.clientId);
    const logout = (postLogoutRedirectUris: string[], backchannelLogoutUri: string | null) =>
      stores.clients.setLogoutUris(other.clientId, { postLogoutRedirectUris, backchannelLogoutUri }, T0 + 4, 'owner');
    await logout([], null);
    assert.deepEqual(await state(other.clientId), { memberRegistered: false, verified: true }, 'the same logout addresses (none) saved again');
    await logout([], 'https://elsewhere.example/bc');
    assert.deepEqual(await state(other.clientId), { memberRegistered: false, verified: false }, 'a new back-channel address: no browser goes there, but staff saw another');
    await verify(other.clientId);
    await logout(['https://evil.example/bye'], 'https://elsewhere.example/bc');
    const changed = await stores.clients.findById(other.clientId);
    assert.deepEqual([changed?.memberRegistered, changed?.verifiedAt, changed?.postLogoutRedirectUris], [true, null, ['https://evil.example/bye']]);
  });

  test('a document naming other addresses ends its app\'s verification as it is saved; the same addresses keep it', async () => {
    const described = {
      clientId: `https://docs.example/${unique('app')}.json`, name: 'Described', description: '', homepageUrl: '', ownerId: null, type: 'public' as const,
      redirectUris: ['https://docs.example/cb'], allowedScopes: ['openid' as const], secretHash: null, idTokenAlg: 'RS256' as const, postLogoutRedirectUris: [],
    };
    await stores.clients.saveDescribed(described, T0);
    const saved = (await stores.clients.findById(described.clientId))!;
    assert.notEqual((await stores.clients.setVerified(described.clientId, { verified: true, reviewed: saved }, T0))?.verifiedAt, null);
    await stores.clients.saveDescribed(described, T0 + 1);
    assert.notEqual((await stores.clients.findById(described.clientId))?.verifiedAt, null, 'the same addresses');
    await stores.clients.saveDescribed({ ...described, postLogoutRedirectUris: ['https://evil.example/bye'] }, T0 + 2);
    assert.equal((await stores.clients.findById(described.clientId))?.verifiedAt, null, 'a post-logout address of its own');
    await stores.clients.setVerified(described.clientId, { verified: true, reviewed: (await stores.clients.findById(described.clientId))! }, T0 + 3);
    await stores.clients.saveDescribed({ ...described, redirectUris: ['https://docs.example/cb', 'https://evil.example/cb'] }, T0 + 4);
    assert.equal((await stores.clients.findById(described.clientId))?.verifiedAt, null, 'a redirect URI of its own');
  });

  test('a document naming another name or homepage ends its app\'s verification as it is saved; the same name and homepage keep it', async () => {
    const described = {
      clientId: `https://docs.example/${unique('app')}.json`, name: 'Community Tools', description: '', homepageUrl: 'https://docs.example/', ownerId: null, type: 'public' as const,
      redirectUris: ['https://docs.example/cb'], allowedScopes: ['openid' as const], secretHash: null, idTokenAlg: 'RS256' as const, postLogoutRedirectUris: [],
    };
    const verify = async () => stores.clients.setVerified(described.clientId, { verified: true, reviewed: (await stores.clients.findById(described.clientId))! }, T0);
    const verified = async () => (await stores.clients.findById(described.clientId))?.verifiedAt !== null;
    await stores.clients.saveDescribed(described, T0);
    await verify();
    await stores.clients.saveDescribed(described, T0 + 1);
    assert.equal(await verified(), true, 'the same name and homepage');
    await stores.clients.saveDescribed({ ...described, name: 'Community Official Tools' }, T0 + 2);
    assert.equal(await verified(), false, 'another name (attack87: "Verified by" beside a name staff never saw)');
    await verify();
    await stores.clients.saveDescribed({ ...described, name: 'Community Official Tools', homepageUrl: 'https://docs.example/official' }, T0 + 3);
    assert.equal(await verified(), false, 'another homepage');
    assert.deepEqual(await stores.clients.findById(described.clientId).then((c) => [c?.name, c?.homepageUrl]), ['Community Official Tools', 'https://docs.example/official']);
  });

  test('an owner\'s other name, description or homepage ends its app\'s verification in the same write; the same ones, or the operator\'s change, keep it', async () => {
    const owner = await newUser();
    const stored = { name: 'App', description: '', homepageUrl: '' };
    const changes: Array<[string, Partial<typeof stored>]> = [
      ['name', { name: 'Community Official Tools' }],
      ['description', { description: 'Official: sign in on the next page.' }],
      ['homepage', { homepageUrl: 'https://official.example/' }],
    ];
    for (const [what, change] of changes) {
      const client = await newClient(owner.id);
      await stores.clients.setVerified(client.clientId, { verified: true, reviewed: client }, T0);
      const state = async () => {
        const found = await stores.clients.findById(client.clientId);
        return { memberRegistered: found?.memberRegistered, verified: found?.verifiedAt !== null };
      };
      await stores.clients.setDetails(client.clientId, stored, T0 + 1, 'owner');
      assert.deepEqual(await state(), { memberRegistered: false, verified: true }, `${what}: the same details saved again`);
      await stores.clients.setDetails(client.clientId, { ...stored, ...change }, T0 + 2, 'operator');
      assert.deepEqual(await state(), { memberRegistered: false, verified: true }, `${what}: the operator's change (the demo's move)`);
      await stores.clients.setDetails(client.clientId, stored, T0 + 3, 'operator');
      await stores.clients.setDetails(client.clientId, { ...stored, ...change }, T0 + 4, 'owner');
      assert.deepEqual(await state(), { memberRegistered: false, verified: false }, `${what}: the owner's other one; no browser is sent there, but staff saw another`);
      const found = await stores.clients.findById(client.clientId);
      assert.deepEqual(found && { name: found.name, description: found.description, homepageUrl: found.homepageUrl }, { ...stored, ...change });
    }
  });

  test('verifying a client takes its name, description, homepage and addresses as staff reviewed them, and happens only while the client still has exactly those', async () => {
    const client = await newClient();
    const reviewed = {
      name: client.name, description: client.description, homepageUrl: client.homepageUrl,
      redirectUris: client.redirectUris, postLogoutRedirectUris: client.postLogoutRedirectUris, backchannelLogoutUri: client.backchannelLogoutUri,
    };
    for (const other of [
      { ...reviewed, name: 'App, renamed' },
      { ...reviewed, description: 'Official: enter your password on the next page.' },
      { ...reviewed, homepageUrl: 'https://app.example/' },
      { ...reviewed, redirectUris: [...reviewed.redirectUris, 'https://evil.example/cb'] },
      { ...reviewed, postLogoutRedirectUris: ['https://app.example/bye'] },
      { ...reviewed, backchannelLogoutUri: 'https://app.example/bc' },
    ]) {
      assert.equal(await stores.clients.setVerified(client.clientId, { verified: true, reviewed: other }, T0), undefined, JSON.stringify(other));
    }
    assert.equal((await stores.clients.findById(client.clientId))?.verifiedAt, null);
    assert.equal((await stores.clients.setVerified(client.clientId, { verified: true, reviewed }, T0))?.verifiedAt, T0);
    assert.equal((await stores.clients.setVerified(client.clientId, { verified: false }, T0 + 1))?.verifiedAt, null, 'a mark removed needs no review');
  });

  test('a client keeps its redirect URIs as exact strings; secret and status change', async () => {
    const owner = await newUser();
    const client = await newClient(owner.id);
    assert.deepEqual(client.redirectUris, ['https://app.example/cb']);
    assert.equal(await stores.clients.rotateSecret(client.clientId, 'new', T0 + 10, T0 + 1), true);
    assert.equal((await stores.clients.findById(client.clientId))?.secretHash, 'new');
    await stores.clients.setRedirectUris(client.clientId, ['https://app.example/cb?x=1', 'http://127.0.0.1/cb'], T0, 'operator');
    assert.deepEqual((await stores.clients.findById(client.clientId))?.redirectUris, ['https://app.example/cb?x=1', 'http://127.0.0.1/cb']);
    assert.equal((await stores.clients.setStatus(client.clientId, 'deactivated', T0))?.status, 'deactivated');
    assert.deepEqual((await stores.clients.listByOwner(owner.id)).map((c) => c.clientId), [client.clientId]);
  });

  test('a rotation keeps the replaced secret as the previous one until deleted, one previous secret at a time', async () => {
    const client = await newClient();
    const original = client.secretHash!;
    assert.equal(client.previousSecret, null);
    assert.equal(await stores.clients.rotateSecret(client.clientId, 'second', T0 + 100, T0), true);
    assert.deepEqual((await stores.clients.findById(client.clientId))?.previousSecret, { hash: original, expiresAt: T0 + 100 });
    assert.equal(await stores.clients.rotateSecret(client.clientId, 'third', T0 + 200, T0 + 1), true);
    const rotatedTwice = await stores.clients.findById(client.clientId);
    assert.equal(rotatedTwice?.secretHash, 'third');
    assert.deepEqual(rotatedTwice?.previousSecret, { hash: 'second', expiresAt: T0 + 200 });
    assert.equal(await stores.clients.deletePreviousSecret(client.clientId, T0 + 2), true);
    assert.equal((await stores.clients.findById(client.clientId))?.previousSecret, null);
    assert.equal(await stores.clients.deletePreviousSecret(client.clientId, T0 + 3), false);
  });

  test('a rotation that keeps no previous secret stores none, and ends one kept before', async () => {
    const client = await newClient();
    assert.equal(await stores.clients.rotateSecret(client.clientId, 'second', T0 + 100, T0), true);
    assert.equal(await stores.clients.rotateSecret(client.clientId, 'third', null, T0 + 1), true);
    const rotated = await stores.clients.findById(client.clientId);
    assert.equal(rotated?.secretHash, 'third');
    assert.equal(rotated?.previousSecret, null);
  });

  test('a previous secret past its expiry cannot be deleted: it is already gone', async () => {
    const client = await newClient();
    await stores.clients.rotateSecret(client.clientId, 'second', T0 + 100, T0);
    assert.equal(await stores.clients.deletePreviousSecret(client.clientId, T0 + 100), false);
  });

  // On SQLite the client lookup is remembered (issue 35): a write to another table leaves the row
  // standing, and any change to the client is read from the next lookup on.
  test('a client looked up before is looked up anew after each change to it, and as it was after writes elsewhere', async () => {
    const owner = await newUser();
    const client = await newClient(owner.id);
    for (let i = 0; i < 2; i++) assert.deepEqual(await stores.clients.findById(client.clientId), client);
    const grant = await stores.grants.create({ userId: owner.id, clientId: client.clientId, scope: 'profile:read', nonce: null, authTime: T0 }, T0);
    await stores.tokens.insertAccess({ tokenHash: unique('at'), grantId: grant.id, clientId: client.clientId, userId: owner.id, scope: 'profile:read', createdAt: T0, expiresAt: T0 + MINUTE });
    assert.deepEqual(await stores.clients.findById(client.clientId), client);
    await stores.clients.rotateSecret(client.clientId, 'rotated', T0 + 100, T0 + 1);
    assert.equal((await stores.clients.findById(client.clientId))?.secretHash, 'rotated');
    await stores.clients.deletePreviousSecret(client.clientId, T0 + 2);
    assert.equal((await stores.clients.findById(client.clientId))?.previousSecret, null);
    await stores.clients.setStatus(client.clientId, 'deactivated', T0 + 3);
    assert.equal((await stores.clients.findById(client.clientId))?.status, 'deactivated');
    await stores.clients.setStatus(client.clientId, 'active', T0 + 4);
    assert.equal((await stores.clients.findById(client.clientId))?.status, 'active');
  });

  test('a remembered lookup of a table is looked up anew once a delete from its parent cascades into it', async () => {
    const { user, client, grant } = await newGrant();
    const hash = unique('at');
    await stores.tokens.insertAccess({ tokenHash: hash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 'profile:read', createdAt: T0, expiresAt: T0 + MINUTE });
    const columns = (db: Kysely<Database>) => db.selectFrom('access_tokens').select(['token_hash', 'grant_id']);
    // Reads access_tokens alone: only the foreign key from grants tells a delete of the grant ends it.
    const how = {
      one: (db: Kysely<Database>) => columns(db).where('token_hash', '=', ''),
      many: (db: Kysely<Database>) => columns(db).where(keyIsAnyOf('token_hash')),
      keyOf: (row: { token_hash: string }) => row.token_hash,
      remember: true,
    } as const;
    for (let i = 0; i < 2; i++) assert.equal((await handle.queries.lookup(handle.db, hash, how))?.grant_id, grant.id);
    await handle.db.deleteFrom('grants').where('id', '=', grant.id).execute();
    assert.equal(await handle.queries.lookup(handle.db, hash, how), undefined);
  });

  test('a public client has no secret to rotate', async () => {
    const client = await stores.clients.create({
      clientId: unique('client'), name: 'Public', description: '', homepageUrl: '', ownerId: null, type: 'public',
      redirectUris: ['http://127.0.0.1/cb'], allowedScopes: ['openid'], secretHash: null, idTokenAlg: 'RS256',
    }, T0);
    assert.equal(await stores.clients.rotateSecret(client.clientId, 'x', T0 + 100, T0), false);
    assert.equal((await stores.clients.findById(client.clientId))?.previousSecret, null);
  });

  test('every client is listed, oldest first, as stored', async () => {
    const first = await newClient();
    const second = await stores.clients.create({
      clientId: unique('client'), name: 'Later', description: '', homepageUrl: '', ownerId: null, type: 'public',
      redirectUris: ['http://127.0.0.1/cb'], allowedScopes: ['openid'], secretHash: null, idTokenAlg: 'ES256',
    }, T0 + 1);
    const listed = await stores.clients.listAll();
    const mine = listed.filter((c) => c.clientId === first.clientId || c.clientId === second.clientId);
    assert.deepEqual(mine, [first, second]);
    assert.ok(listed.every((c, i) => i === 0 || listed[i - 1]!.createdAt <= c.createdAt));
  });

  test('consent is saved, replaced and removed', async () => {
    const user = await newUser();
    const client = await newClient();
    await stores.consents.save(user.id, client.clientId, 'profile:read', T0);
    await stores.consents.save(user.id, client.clientId, 'profile:read posts:read', T0 + 1);
    assert.equal((await stores.consents.find(user.id, client.clientId))?.scope, 'profile:read posts:read');
    assert.equal(await stores.consents.remove(user.id, client.clientId), true);
    assert.equal(await stores.consents.find(user.id, client.clientId), undefined);
  });

  test('a code is consumed by exactly one of 20 racing redemptions', async () => {
    const { user, client, grant } = await newGrant();
    const codeHash = unique('code');
    await stores.codes.insert({
      codeHash, grantId: grant.id, clientId: client.clientId, userId: user.id, redirectUri: 'https://app.example/cb',
      scope: 'profile:read', codeChallenge: null, nonce: null, authTime: T0, createdAt: T0, expiresAt: T0 + 5 * MINUTE,
    });
    const results = await Promise.all(Array.from({ length: 20 }, () => stores.codes.consume({ codeHash, clientId: client.clientId, redirectUri: 'https://app.example/cb', codeChallenge: null }, T0 + 1)));
    assert.equal(results.filter((r) => r !== undefined).length, 1);
    assert.equal((await stores.codes.find(codeHash))?.usedAt, T0 + 1);
  });

  test('a code is consumed only by a request with all it is bound to: client, redirect URI, challenge, before it expires; any other leaves it as it was', async () => {
    const { user, client, grant } = await newGrant();
    const other = await newClient();
    for (const challenge of [null, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM']) {
      const codeHash = unique('code');
      await stores.codes.insert({
        codeHash, grantId: grant.id, clientId: client.clientId, userId: user.id, redirectUri: 'https://app.example/cb',
        scope: 'profile:read', codeChallenge: challenge, nonce: null, authTime: T0, createdAt: T0, expiresAt: T0 + 5 * MINUTE,
      });
      const right = { codeHash, clientId: client.clientId, redirectUri: 'https://app.example/cb', codeChallenge: challenge };
      for (const wrong of [
        { ...right, clientId: other.clientId },
        { ...right, redirectUri: 'https://app.example/cb/' },
        { ...right, codeChallenge: challenge === null ? 'x'.repeat(43) : null },
        { ...right, codeChallenge: challenge === null ? null : 'y'.repeat(43) },
      ]) {
        if (wrong.codeChallenge === right.codeChallenge && wrong.clientId === right.clientId && wrong.redirectUri === right.redirectUri) continue;
        assert.equal(await stores.codes.consume(wrong, T0 + 1), undefined, JSON.stringify(wrong));
      }
      assert.equal(await stores.codes.consume(right, T0 + 5 * MINUTE), undefined, 'expired');
      assert.equal((await stores.codes.find(codeHash))?.usedAt, null, 'still unused');
      assert.equal((await stores.codes.consume(right, T0 + 2))?.code.usedAt, T0 + 2);
    }
  });

  test('a refresh token is rotated by exactly one of 20 racing refreshes', async () => {
    const { user, client, grant } = await newGrant();
    const tokenHash = unique('rt');
    await stores.tokens.insertRefresh({ tokenHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 'profile:read', createdAt: T0, expiresAt: T0 + 60 * MINUTE });
    const results = await Promise.all(Array.from({ length: 20 }, () => stores.tokens.consumeRefresh(tokenHash, T0 + 1)));
    assert.equal(results.filter((r) => r !== undefined).length, 1);
  });

  test('a rotation\'s writes in a transaction that fails are rolled back with it, and unseen outside while it is open', async () => {
    const { user, client, grant } = await newGrant();
    const common = { grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 's', createdAt: T0, expiresAt: T0 + 60 * MINUTE };
    const [old, next] = [unique('rt'), unique('rt')];
    const stored = await stores.tokens.insertRefresh({ ...common, tokenHash: old });
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => { written = resolve; });
    const access = unique('at');
    const rotation = stores.transaction(async (tx) => {
      assert.ok(await tx.tokens.consumeRefresh(old, T0 + 1));
      await tx.tokens.insertPair({ ...common, tokenHash: access }, { ...common, tokenHash: next }, { tokenId: stored.id, tokenHash: old, sealed: 'sealed' });
      written();
      await held;
      throw new Error('rolled back');
    });
    await wrote;
    const outside = stores.tokens.findReplay(old);
    release();
    await assert.rejects(rotation, /rolled back/);
    const unchanged = { token: { ...stored, usedAt: null }, sealed: null, successor: undefined };
    assert.deepEqual(await outside, unchanged);
    assert.deepEqual(await stores.tokens.findReplay(old), unchanged);
    assert.equal(await stores.tokens.findRefresh(next), undefined);
    assert.equal(await stores.tokens.findAccess(access), undefined);
  });

  test('a family revoked while one of its tokens is being rotated waits for the rotation, and then ends its successor too', async () => {
    const { user, client, grant } = await newGrant();
    const common = { grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 's', createdAt: T0, expiresAt: T0 + 60 * MINUTE };
    const [first, second, third] = [unique('rt'), unique('rt'), unique('rt')];
    const one = await stores.tokens.insertRefresh({ ...common, tokenHash: first });
    await stores.tokens.consumeRefresh(first, T0 + 1);
    await stores.tokens.insertPair({ ...common, tokenHash: unique('at') }, { ...common, tokenHash: second }, { tokenId: one.id, tokenHash: first, sealed: 'sealed-1' });
    const two = (await stores.tokens.findRefresh(second))!;
    let consumed!: () => void;
    const holding = new Promise<void>((resolve) => { consumed = resolve; });
    // The rotation of the second token takes its row, then (a moment later, while the revocation of
    // the reused first token is under way) its predecessor's: the order must not deadlock.
    const rotation = stores.transaction(async (tx) => {
      assert.ok(await tx.tokens.consumeRefresh(second, T0 + 2));
      consumed();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await tx.tokens.insertPair({ ...common, tokenHash: unique('at') }, { ...common, tokenHash: third }, { tokenId: two.id, tokenHash: second, sealed: 'sealed-2' });
    });
    await holding;
    const revocation = stores.transaction((tx) => tx.tokens.revokeByGrant(grant.id, T0 + 3));
    await Promise.all([rotation, revocation]);
    for (const hash of [first, second, third]) assert.equal((await stores.tokens.findRefresh(hash))?.revokedAt, T0 + 3, hash === third ? 'the successor' : 'a rotated token');
  });

  // PostgreSQL only: SQLite runs one transaction at a time, so nothing there can deadlock (and on CI
  // no test skips).
  if (database.name !== 'sqlite') test('a family revoked while its tokens are rotated twice in a row neither deadlocks nor leaves a live token', async () => {
    const { user, client, grant } = await newGrant();
    const common = { grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 's', createdAt: T0, expiresAt: T0 + 60 * MINUTE };
    const [first, second, third, fourth] = [unique('rt'), unique('rt'), unique('rt'), unique('rt')];
    const access = unique('at');
    const one = await stores.tokens.insertRefresh({ ...common, tokenHash: first });
    await stores.tokens.consumeRefresh(first, T0 + 1);
    await stores.tokens.insertPair({ ...common, tokenHash: access }, { ...common, tokenHash: second }, { tokenId: one.id, tokenHash: first, sealed: 'sealed-1' });
    const two = (await stores.tokens.findRefresh(second))!;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const signal = () => { let done!: () => void; const happened = new Promise<void>((resolve) => { done = resolve; }); return { done, happened }; };
    // Something else holds one of the grant's access tokens a moment (a revocation of that token,
    // a "last used" write): the family's revocation, its refresh tokens locked, waits for it
    // before its UPDATE, as a slow turn of the event loop would make it wait.
    const accessHeld = signal();
    const releaseAccess = signal();
    const other = stores.transaction(async (tx) => {
      await tx.tokens.revokeAccess(access, client.clientId, T0 + 2);
      accessHeld.done();
      await releaseAccess.happened;
    });
    await accessHeld.happened;
    const consumed = signal();
    const rotation = stores.transaction(async (tx) => {
      assert.ok(await tx.tokens.consumeRefresh(second, T0 + 2));
      consumed.done();
      await pause(200);
      await tx.tokens.insertPair({ ...common, tokenHash: unique('at') }, { ...common, tokenHash: third }, { tokenId: two.id, tokenHash: second, sealed: 'sealed-2' });
    });
    await consumed.happened;
    const revocation = stores.transaction(async (tx) => { await tx.tokens.revokeByGrant(grant.id, T0 + 3); await tx.grants.revoke(grant.id, 'refresh_reuse', T0 + 3); });
    await rotation;
    await pause(100);
    // The holder of the third token rotates it at once, before the revocation's UPDATE ran.
    const next = stores.transaction(async (tx) => {
      const took = await tx.tokens.consumeRefresh(third, T0 + 4);
      if (!took) return;
      await tx.tokens.insertPair({ ...common, tokenHash: unique('at') }, { ...common, tokenHash: fourth }, { tokenId: took.token.id, tokenHash: third, sealed: 'sealed-3' });
    });
    await pause(100);
    releaseAccess.done();
    const settled = await Promise.allSettled([other, revocation, next]);
    assert.deepEqual(settled.map((s) => s.status === 'rejected' ? String((s.reason as Error).message) : 'ok'), ['ok', 'ok', 'ok']);
    for (const hash of [first, second, third, fourth]) {
      const token = await stores.tokens.findRefresh(hash);
      if (token) assert.notEqual(token.revokedAt, null, 'a refresh token of the revoked family is still live');
    }
  });

  test('a code stored under a new grant makes the grant of its own fields, and is consumed with it', async () => {
    const user = await newUser();
    const client = await newClient();
    const codeHash = unique('code');
    const code = {
      codeHash, clientId: client.clientId, userId: user.id, redirectUri: 'https://app.example/cb', scope: 'openid profile:read',
      codeChallenge: null, nonce: 'n-1', authTime: T0 - MINUTE, createdAt: T0, expiresAt: T0 + 5 * MINUTE,
    };
    await stores.codes.insertUnderNewGrant({ ...code, amr: ['pwd', 'otp'] }, 'sid-1');
    const consumed = await stores.codes.consume({ codeHash, clientId: client.clientId, redirectUri: 'https://app.example/cb', codeChallenge: null }, T0 + 1);
    const grantId = consumed!.code.grantId;
    assert.deepEqual(consumed, {
      code: { ...code, grantId, usedAt: T0 + 1, dpopJkt: null },
      granted: {
        grant: {
          id: grantId, userId: user.id, clientId: client.clientId, scope: 'openid profile:read', nonce: 'n-1', authTime: T0 - MINUTE,
          createdAt: T0, lastUsedAt: T0, revokedAt: null, revokedReason: null, sid: 'sid-1', amr: ['pwd', 'otp'], resource: null,
        },
        user,
      },
    });
  });

  test('a code whose hash is taken leaves no new grant behind', async () => {
    const { user, client, grant } = await newGrant();
    const codeHash = unique('code');
    const code = {
      codeHash, clientId: client.clientId, userId: user.id, redirectUri: 'https://app.example/cb', scope: 'profile:read',
      codeChallenge: null, nonce: null, authTime: T0, createdAt: T0 + MINUTE, expiresAt: T0 + 5 * MINUTE,
    };
    await stores.codes.insert({ ...code, grantId: grant.id });
    await assert.rejects(stores.codes.insertUnderNewGrant(code, null));
    assert.deepEqual((await stores.grants.summarizeForUser(user.id)).map((g) => g.lastUsedAt), [T0]);
  });

  test('a consumed code and a rotated refresh token come with their grant and its user, every field as stored', async () => {
    const { user, client, grant } = await newGrant();
    await stores.grants.touch(grant.id, T0 + MINUTE);
    const expected = { grant: await stores.grants.findById(grant.id), user: await stores.users.findById(user.id) };
    const codeHash = unique('code');
    const code = {
      codeHash, grantId: grant.id, clientId: client.clientId, userId: user.id, redirectUri: 'https://app.example/cb',
      scope: 'profile:read', codeChallenge: 'challenge', nonce: 'n', authTime: T0, createdAt: T0, expiresAt: T0 + 5 * MINUTE,
    };
    await stores.codes.insert(code);
    assert.deepEqual(await stores.codes.consume({ codeHash, clientId: client.clientId, redirectUri: 'https://app.example/cb', codeChallenge: 'challenge' }, T0 + 1), { code: { ...code, usedAt: T0 + 1, dpopJkt: null }, granted: expected });
    const tokenHash = unique('rt');
    const stored = await stores.tokens.insertRefresh({ tokenHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 'profile:read', createdAt: T0, expiresAt: T0 + 60 * MINUTE });
    assert.deepEqual(await stores.tokens.consumeRefresh(tokenHash, T0 + 2), { token: { ...stored, usedAt: T0 + 2 }, granted: expected });
  });

  test('a token\'s last use only moves forward: a later write then an earlier one (another instance\'s, or a slow one) leaves the later time, on a grant and a personal token', async () => {
    const { user, grant } = await newGrant();
    await stores.grants.touch(grant.id, T0 + 2 * MINUTE);
    await stores.grants.touch(grant.id, T0 + MINUTE);
    assert.equal((await stores.grants.findById(grant.id))?.lastUsedAt, T0 + 2 * MINUTE, 'the grant');
    const personal = await stores.personalTokens.insert({ userId: user.id, name: 'ci', tokenHash: unique('pt'), scope: 'profile:read', expiresAt: null }, T0);
    const personalLastUse = async () => (await stores.personalTokens.listForUser(user.id)).find((p) => p.id === personal.id)?.lastUsedAt;
    await stores.personalTokens.touch(personal.id, T0 + MINUTE);
    assert.equal(await personalLastUse(), T0 + MINUTE, 'a personal token never used takes its first use');
    await stores.personalTokens.touch(personal.id, T0 + 2 * MINUTE);
    await stores.personalTokens.touch(personal.id, T0 + MINUTE);
    assert.equal(await personalLastUse(), T0 + 2 * MINUTE, 'the personal token');
  });

  test('a use is never recorded on a revoked grant or personal token: one admitted before the revocation whose write lands after it leaves the last use before it', async () => {
    const { user, grant } = await newGrant();
    await stores.grants.revoke(grant.id, 'consent_withdrawn', T0 + MINUTE);
    await stores.grants.touch(grant.id, T0 + 2 * MINUTE);
    assert.equal((await stores.grants.findById(grant.id))?.lastUsedAt, grant.lastUsedAt, 'the grant');
    const personal = await stores.personalTokens.insert({ userId: user.id, name: 'ci', tokenHash: unique('pt'), scope: 'profile:read', expiresAt: null }, T0);
    assert.equal(await stores.personalTokens.revoke(personal.id, user.id, T0 + MINUTE), true);
    await stores.personalTokens.touch(personal.id, T0 + 2 * MINUTE);
    assert.equal((await stores.personalTokens.listForUser(user.id)).find((p) => p.id === personal.id)?.lastUsedAt, null, 'the personal token');
  });

  test('a consumed refresh token shows its grant revoked and its user ended as they are at the rotation', async () => {
    const { user, client, grant } = await newGrant();
    const tokenHash = unique('rt');
    await stores.tokens.insertRefresh({ tokenHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 's', createdAt: T0, expiresAt: T0 + MINUTE });
    await stores.grants.revoke(grant.id, 'consent_withdrawn', T0 + 1);
    await stores.users.setStatus(user.id, 'banned', T0 + 1);
    const consumed = await stores.tokens.consumeRefresh(tokenHash, T0 + 2);
    assert.equal(consumed?.granted?.grant.revokedAt, T0 + 1);
    assert.equal(consumed?.granted?.user.status, 'banned');
  });

  test('a rotated refresh token\'s successor is stored with its sealed answer, and the successor\'s rotation erases that answer', async () => {
    const { user, client, grant } = await newGrant();
    const common = { grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 's', createdAt: T0, expiresAt: T0 + 60 * MINUTE };
    const [first, second, third] = [unique('rt'), unique('rt'), unique('rt')];
    const one = await stores.tokens.insertRefresh({ ...common, tokenHash: first });
    assert.deepEqual(await stores.tokens.findReplay(first), { token: { ...one, usedAt: null }, sealed: null, successor: undefined });
    await stores.tokens.consumeRefresh(first, T0 + 1);
    await stores.tokens.insertPair({ ...common, tokenHash: unique('at') }, { ...common, tokenHash: second }, { tokenId: one.id, tokenHash: first, sealed: 'sealed-1' });
    assert.deepEqual(await stores.tokens.findReplay(first), { token: { ...one, usedAt: T0 + 1 }, sealed: 'sealed-1', successor: { usedAt: null, revokedAt: null } });
    const two = (await stores.tokens.findRefresh(second))!;
    await stores.tokens.consumeRefresh(second, T0 + 2);
    await stores.tokens.insertPair({ ...common, tokenHash: unique('at') }, { ...common, tokenHash: third }, { tokenId: two.id, tokenHash: second, sealed: null });
    assert.deepEqual(await stores.tokens.findReplay(first), { token: { ...one, usedAt: T0 + 1 }, sealed: null, successor: { usedAt: T0 + 2, revokedAt: null } });
    assert.deepEqual(await stores.tokens.findReplay(second), { token: { ...two, usedAt: T0 + 2 }, sealed: null, successor: { usedAt: null, revokedAt: null } });
    assert.equal(await stores.tokens.findReplay(unique('rt')), undefined);
  });

  test('the row naming a successor is found through the successor index, which leaves out the rows naming none', async () => {
    // Without a replay window (the default) no row names a successor: a full index took an entry,
    // and a page for the COMMIT to write, for every new refresh token.
    const lookup = 'select id from refresh_tokens where successor_hash = \'x\'';
    if (handle.dialect === 'sqlite') {
      const plan = await sql.raw<{ detail: string }>(`explain query plan ${lookup}`).execute(handle.db);
      assert.match(plan.rows.map((row) => row.detail).join('\n'), /USING (COVERING )?INDEX refresh_tokens_by_successor/);
      const index = await sql<{ sql: string }>`select sql from sqlite_master where name = 'refresh_tokens_by_successor'`.execute(handle.db);
      assert.match(index.rows[0]!.sql, /where "successor_hash" is not null/i);
    } else {
      const plan = await handle.db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        return sql.raw<{ 'QUERY PLAN': string }>(`explain ${lookup}`).execute(trx);
      });
      assert.match(plan.rows.map((row) => row['QUERY PLAN']).join('\n'), /refresh_tokens_by_successor/);
      const index = await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'refresh_tokens_by_successor'`.execute(handle.db);
      assert.match(index.rows[0]!.indexdef, /WHERE \(successor_hash IS NOT NULL\)/);
    }
  });

  test('an access token and its refresh token are stored together', async () => {
    const { user, client, grant } = await newGrant();
    // Bound to a DPoP key (RFC 9449 6): both tokens keep the thumbprint. The access token is for
    // one resource alone (RFC 8707), the refresh token names none.
    const common = { grantId: grant.id, clientId: client.clientId, userId: user.id, createdAt: T0, dpopJkt: 'jkt-1' };
    const access = { ...common, tokenHash: unique('at'), scope: 'profile:read', expiresAt: T0 + MINUTE, resource: 'https://idp.example/api/open/v1' };
    const refresh = { ...common, tokenHash: unique('rt'), scope: 'profile:read posts:read', expiresAt: T0 + 60 * MINUTE, resource: null };
    await stores.tokens.insertPair(access, refresh);
    assert.deepEqual(await stores.tokens.findAccess(access.tokenHash), { ...access, id: (await stores.tokens.findAccess(access.tokenHash))!.id, revokedAt: null });
    assert.deepEqual(await stores.tokens.findRefresh(refresh.tokenHash), { ...refresh, id: (await stores.tokens.findRefresh(refresh.tokenHash))!.id, revokedAt: null, usedAt: null });
  });

  test('a code with a dpop_jkt is consumed only by a request proving that key (RFC 9449 10)', async () => {
    const { user, client, grant } = await newGrant();
    const codeHash = unique('code');
    await stores.codes.insert({
      codeHash, grantId: grant.id, clientId: client.clientId, userId: user.id, redirectUri: 'https://app.example/cb', scope: 's',
      codeChallenge: null, nonce: null, authTime: T0, createdAt: T0, expiresAt: T0 + 5 * MINUTE, dpopJkt: 'jkt-1',
    });
    const presented = { codeHash, clientId: client.clientId, redirectUri: 'https://app.example/cb', codeChallenge: null };
    assert.equal(await stores.codes.consume(presented, T0 + 1), undefined, 'no proof');
    assert.equal(await stores.codes.consume({ ...presented, dpopJkt: 'jkt-2' }, T0 + 1), undefined, 'another key');
    assert.equal((await stores.codes.consume({ ...presented, dpopJkt: 'jkt-1' }, T0 + 1))?.code.dpopJkt, 'jkt-1');
  });

  test('a DPoP proof key is claimed once until it expires, by exactly one of racing callers (RFC 9449 11.1)', async () => {
    const key = unique('proof');
    const claims = await Promise.all(Array.from({ length: 10 }, () => stores.dpopProofs.claim(key, T0 + MINUTE, T0)));
    assert.equal(claims.filter(Boolean).length, 1);
    assert.equal(await stores.dpopProofs.claim(key, T0 + 2 * MINUTE, T0 + MINUTE - 1), false, 'still remembered');
    assert.equal(await stores.dpopProofs.claim(key, T0 + 2 * MINUTE, T0 + MINUTE), true, 'an expired row is taken over');
    const options = purgeOptions();
    await stores.housekeeping.purge(T0 + 2 * MINUTE - 1, options);
    assert.equal(await stores.dpopProofs.claim(key, T0 + 3 * MINUTE, T0 + 2 * MINUTE - 1), false, 'the janitor keeps a row until it expires');
    assert.ok((await stores.housekeeping.purge(T0 + 2 * MINUTE + 1, options)).dpop_proofs! >= 1, 'and deletes it after');
  });

  test('a pushed request is consumed once by its client, stays open for its flow, and is completed once (RFC 9126 4)', async () => {
    const client = await newClient();
    const requestHash = unique('par');
    await stores.pushedRequests.insert({ requestHash, clientId: client.clientId, parameters: [['scope', 'openid']], createdAt: T0, expiresAt: T0 + MINUTE });
    assert.equal(await stores.pushedRequests.complete(requestHash, T0 + 1), false, 'not opened yet');
    assert.equal(await stores.pushedRequests.consume(requestHash, (await newClient()).clientId, T0 + 1, T0 + 30 * MINUTE), undefined, 'another client');
    const opened = await Promise.all(Array.from({ length: 5 }, () => stores.pushedRequests.consume(requestHash, client.clientId, T0 + 1, T0 + 30 * MINUTE)));
    assert.deepEqual(opened.filter(Boolean).map((r) => r!.parameters), [[['scope', 'openid']]]);
    const completed = await Promise.all(Array.from({ length: 5 }, () => stores.pushedRequests.complete(requestHash, T0 + 10 * MINUTE)));
    assert.equal(completed.filter(Boolean).length, 1, 'open past the 60 seconds of its request_uri, and completed by exactly one');
  });

  test('an opened pushed request is found, for its client only, while its flow is open and until it is completed (RFC 9126 4)', async () => {
    const client = await newClient();
    const requestHash = unique('par');
    await stores.pushedRequests.insert({ requestHash, clientId: client.clientId, parameters: [['scope', 'openid']], createdAt: T0, expiresAt: T0 + MINUTE });
    assert.equal(await stores.pushedRequests.findOpen(requestHash, client.clientId, T0 + 1), undefined, 'not opened yet');
    await stores.pushedRequests.consume(requestHash, client.clientId, T0 + 1, T0 + 30 * MINUTE);
    assert.deepEqual((await stores.pushedRequests.findOpen(requestHash, client.clientId, T0 + 10 * MINUTE))?.parameters, [['scope', 'openid']], 'open past its request_uri\'s minute');
    assert.deepEqual((await stores.pushedRequests.findOpen(requestHash, client.clientId, T0 + 10 * MINUTE))?.parameters, [['scope', 'openid']], 'a read: found again');
    assert.equal(await stores.pushedRequests.findOpen(requestHash, (await newClient()).clientId, T0 + 10 * MINUTE), undefined, 'another client');
    assert.equal(await stores.pushedRequests.findOpen(requestHash, client.clientId, T0 + 30 * MINUTE), undefined, 'its flow\'s time is up');
    assert.equal(await stores.pushedRequests.complete(requestHash, T0 + 10 * MINUTE), true);
    assert.equal(await stores.pushedRequests.findOpen(requestHash, client.clientId, T0 + 10 * MINUTE), undefined, 'completed');
  });

  test('housekeeping deletes pushed requests once expired, unopened or left open past their flow, and keeps one still open', async () => {
    const client = await newClient();
    const at = T0 + 40 * 86_400_000;
    const request = (requestHash: string) => ({ requestHash, clientId: client.clientId, parameters: [], createdAt: at, expiresAt: at + MINUTE });
    const [unopened, abandoned, open] = [unique('par'), unique('par'), unique('par')];
    for (const hash of [unopened, abandoned, open]) await stores.pushedRequests.insert(request(hash));
    await stores.pushedRequests.consume(abandoned, client.clientId, at + 1, at + 2 * MINUTE);
    await stores.pushedRequests.consume(open, client.clientId, at + 1, at + 30 * MINUTE);
    const options = purgeOptions({ batchSize: 1 });
    assert.ok((await stores.housekeeping.purge(at + 2 * MINUTE + 1, options)).pushed_authorization_requests! >= 2);
    assert.equal(await stores.pushedRequests.consume(unopened, client.clientId, at + 1, at + 30 * MINUTE), undefined, 'the unopened one is gone');
    assert.equal(await stores.pushedRequests.complete(abandoned, at + 1), false, 'the abandoned one is gone');
    assert.equal(await stores.pushedRequests.complete(open, at + 2 * MINUTE + 2), true, 'the open one stayed');
  });

  test('a pair whose refresh token cannot be stored leaves no access token either', async () => {
    const { user, client, grant } = await newGrant();
    const common = { grantId: grant.id, clientId: client.clientId, userId: user.id, createdAt: T0, scope: 's', expiresAt: T0 + MINUTE };
    const taken = unique('rt');
    await stores.tokens.insertRefresh({ ...common, tokenHash: taken });
    const access = unique('at');
    await assert.rejects(stores.transaction((tx) => tx.tokens.insertPair({ ...common, tokenHash: access }, { ...common, tokenHash: taken })));
    assert.equal(await stores.tokens.findAccess(access), undefined);
  });

  test('a revoked refresh token cannot be rotated', async () => {
    const { user, client, grant } = await newGrant();
    const tokenHash = unique('rt');
    await stores.tokens.insertRefresh({ tokenHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 's', createdAt: T0, expiresAt: T0 + MINUTE });
    await stores.tokens.revokeByGrant(grant.id, T0);
    assert.equal(await stores.tokens.consumeRefresh(tokenHash, T0 + 1), undefined);
  });

  test('the bearer lookup returns the user row and sees the revocation of the token, of its grant, and a deactivated client', async () => {
    const { user, client, grant } = await newGrant();
    const insert = (tokenHash: string) => stores.tokens.insertAccess({ tokenHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 'profile:read', createdAt: T0, expiresAt: T0 + 60 * MINUTE });
    const live = unique('at');
    await insert(live);
    const record = await stores.tokens.findAccessBearer(live);
    assert.deepEqual(record && { ...record, tokenId: 0 }, {
      tokenId: 0, user, clientId: client.clientId,
      grantId: grant.id, scope: 'profile:read', expiresAt: T0 + 60 * MINUTE, revokedAt: null, dpopJkt: null, resource: null,
    });
    assert.ok(await stores.tokens.revokeAccess(live, client.clientId, T0 + 1));
    assert.equal((await stores.tokens.findAccessBearer(live))?.revokedAt, T0 + 1);

    const second = unique('at');
    await insert(second);
    await stores.grants.revoke(grant.id, 'consent_withdrawn', T0 + 2);
    assert.equal((await stores.tokens.findAccessBearer(second))?.revokedAt, T0 + 2);

    const other = await newGrant();
    const third = unique('at');
    await stores.tokens.insertAccess({ tokenHash: third, grantId: other.grant.id, clientId: other.client.clientId, userId: other.user.id, scope: 's', createdAt: T0, expiresAt: T0 + MINUTE });
    await stores.clients.setStatus(other.client.clientId, 'deactivated', T0 + 3);
    assert.notEqual((await stores.tokens.findAccessBearer(third))?.revokedAt, null);
    assert.equal(await stores.tokens.findAccessBearer('no such token'), undefined);
  });

  test('revokeAccess marks a live access token of the client once, and leaves another client\'s, one expired or one of a revoked grant as it was', async () => {
    const { user, client, grant } = await newGrant();
    const other = await newGrant();
    const insert = async () => {
      const tokenHash = unique('at');
      await stores.tokens.insertAccess({ tokenHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 's', createdAt: T0, expiresAt: T0 + MINUTE });
      return tokenHash;
    };
    const [live, expired, ofRevokedGrant] = [await insert(), await insert(), await insert()];
    assert.equal(await stores.tokens.revokeAccess(live, other.client.clientId, T0 + 1), undefined);
    assert.equal((await stores.tokens.findAccess(live))?.revokedAt, null);
    assert.deepEqual(await stores.tokens.revokeAccess(live, client.clientId, T0 + 1), { userId: user.id, grantId: grant.id });
    assert.equal(await stores.tokens.revokeAccess(live, client.clientId, T0 + 2), undefined);
    assert.equal((await stores.tokens.findAccess(live))?.revokedAt, T0 + 1);
    assert.equal(await stores.tokens.revokeAccess(expired, client.clientId, T0 + MINUTE), undefined);
    assert.equal((await stores.tokens.findAccess(expired))?.revokedAt, null);
    await stores.grants.revoke(grant.id, 'consent_withdrawn', T0 + 3);
    assert.equal(await stores.tokens.revokeAccess(ofRevokedGrant, client.clientId, T0 + 4), undefined);
  });

  test('the bearer lookups see this connection\'s writes from the next lookup on, writes that return rows included', async () => {
    const { user, client, grant } = await newGrant();
    const access = unique('at');
    await stores.tokens.insertAccess({ tokenHash: access, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 'profile:read', createdAt: T0, expiresAt: T0 + 60 * MINUTE });
    const personalHash = unique('pt');
    await stores.personalTokens.insert({ userId: user.id, name: 'ci', tokenHash: personalHash, scope: 'profile:read', expiresAt: null }, T0);
    for (let i = 0; i < 2; i++) {
      assert.equal((await stores.tokens.findAccessBearer(access))?.user.status, 'active');
      assert.equal((await stores.personalTokens.findBearer(personalHash))?.user.status, 'active');
    }
    // users.setStatus answers the changed row (UPDATE … RETURNING).
    assert.equal((await stores.users.setStatus(user.id, 'banned', T0 + 1))?.status, 'banned');
    assert.equal((await stores.tokens.findAccessBearer(access))?.user.status, 'banned');
    assert.equal((await stores.personalTokens.findBearer(personalHash))?.user.status, 'banned');
  });

  test('bearer lookups made together each get their own token\'s row, an unknown token none', async () => {
    const { user, client, grant } = await newGrant();
    const hashes = Array.from({ length: 5 }, () => unique('at'));
    for (const [i, tokenHash] of hashes.entries()) {
      await stores.tokens.insertAccess({ tokenHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: `scope${i}`, createdAt: T0, expiresAt: T0 + MINUTE });
    }
    const personalHashes = [unique('pt'), unique('pt')];
    for (const [i, tokenHash] of personalHashes.entries()) {
      await stores.personalTokens.insert({ userId: user.id, name: `t${i}`, tokenHash, scope: `personal${i}`, expiresAt: null }, T0);
    }
    const asked = [...hashes, 'no such token', hashes[0]!];
    const [access, personal] = await Promise.all([
      Promise.all(asked.map((hash) => stores.tokens.findAccessBearer(hash))),
      Promise.all([...personalHashes, 'no such token'].map((hash) => stores.personalTokens.findBearer(hash))),
    ]);
    assert.deepEqual(access.map((record) => record?.scope), ['scope0', 'scope1', 'scope2', 'scope3', 'scope4', undefined, 'scope0']);
    assert.deepEqual(personal.map((record) => record?.scope), ['personal0', 'personal1', undefined]);
  });

  test('sessions and clients looked up at the same time each get their own', async () => {
    const users = await Promise.all([newUser(), newUser()]);
    const sessions = users.map((user) => ({ idHash: unique('s'), userId: user.id, authTime: T0, expiresAt: T0 + MINUTE }));
    for (const session of sessions) await stores.sessions.create(session, T0);
    const clients = await Promise.all([newClient(), newClient()]);
    const [found, foundClients] = await Promise.all([
      Promise.all([...sessions.map((session) => session.idHash), 'no such session'].map((idHash) => stores.sessions.findLive(idHash, T0 + 1))),
      Promise.all([...clients.map((client) => client.clientId), 'no such client'].map((clientId) => stores.clients.findById(clientId))),
    ]);
    assert.deepEqual(found.map((live) => live?.user.id), [...users.map((user) => user.id), undefined]);
    assert.deepEqual(foundClients, [...clients, undefined]);
  });

  // The client lookup is remembered on SQLite, as the bearer lookups are (below): another
  // connection's commit counts from the next turn of the event loop on; the session lookup is not.
  test('session lookups see what another connection committed from the next lookup on, client lookups from the next turn of the event loop on', async () => {
    const user = await newUser();
    const client = await newClient();
    const idHash = unique('s');
    await stores.sessions.create({ idHash, userId: user.id, authTime: T0, expiresAt: T0 + MINUTE }, T0);
    const otherHandle = openDatabase(database.target);
    try {
      const other = createStores(otherHandle.db, otherHandle.queries);
      // Each lookup is made twice before the other connection writes, so a remembered row exists.
      for (let i = 0; i < 2; i++) {
        assert.equal((await stores.sessions.findLive(idHash, T0 + 1))?.user.status, 'active');
        assert.equal((await stores.clients.findById(client.clientId))?.status, 'active');
      }
      await other.clients.setStatus(client.clientId, 'deactivated', T0 + 1);
      await nextTurn();
      assert.equal((await stores.clients.findById(client.clientId))?.status, 'deactivated');
      await other.users.setStatus(user.id, 'suspended', T0 + 2);
      assert.equal((await stores.sessions.findLive(idHash, T0 + 3))?.user.status, 'suspended');
      await other.sessions.end(idHash, T0 + 4);
      assert.equal(await stores.sessions.findLive(idHash, T0 + 5), undefined);
    } finally {
      await otherHandle.close();
    }
  });

  /**
   * Until `read` answers `expected` after another connection's commit to the tables a page of
   * posts reads: on SQLite from the next turn of the event loop (the write watch, decision 54), on
   * PostgreSQL once the database's notification of the commit arrives (decision 65), a round trip
   * later, so there it is asked again for up to 2 s.
   */
  const seenFromAnotherConnection = async <T>(read: () => Promise<T>, expected: T, message: string): Promise<void> => {
    await nextTurn();
    let answer: T | undefined;
    await holdsWithin(database.name === 'postgres' ? 2_000 : 0, async () => isDeepStrictEqual(answer = await read(), expected));
    assert.deepEqual(answer, expected, message);
  };

  // On SQLite a page's category names are remembered apart from its rows (decision 44): the
  // service never renames a category, but a write to the table by anyone has them read again.
  test('a page of posts shows a category renamed by another connection (another instance or process) from the next turn of the event loop on, on PostgreSQL once announced', async () => {
    const author = await newUser();
    const [first, second] = [await stores.posts.ensureCategory(unique('Old')), await stores.posts.ensureCategory(unique('Kept'))];
    for (const [i, category] of [first, second, first].entries()) {
      await stores.posts.create({ authorId: author.id, categoryId: category.id, title: 't', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published' }, T0 + i);
    }
    const names = async () => (await stores.posts.listPublishedByAuthor(author.id, 0, 10)).items.map((post) => post.categoryName);
    const otherHandle = openDatabase(database.target);
    try {
      // Read twice before the other connection writes, so remembered names exist.
      for (let i = 0; i < 2; i++) assert.deepEqual(await names(), [first.name, second.name, first.name]);
      const renamed = unique('New');
      await otherHandle.db.updateTable('categories').set({ name: renamed }).where('id', '=', first.id).execute();
      await seenFromAnotherConnection(names, [renamed, second.name, renamed], 'a category renamed by another connection');
    } finally {
      await otherHandle.close();
    }
  });

  // On SQLite a page of posts is remembered whole until a post, a user or a category is written
  // (decision 54): this connection's writes count from the next read, another's from the next turn.
  test('a page of posts read again shows each change to its posts and author: this connection\'s at once, another connection\'s from the next turn of the event loop on, on PostgreSQL once announced', async () => {
    const author = await newUser();
    const category = await stores.posts.ensureCategory(unique('Page'));
    const post = (title: string, i: number) => stores.posts.create({ authorId: author.id, categoryId: category.id, title, body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published' }, T0 + i);
    const [older, newer] = [await post('older', 0), await post('newer', 1)];
    const page = async () => {
      const { items, total } = await stores.posts.listPublishedByAuthor(author.id, 0, 10);
      return { total, items: items.map((item) => `${item.title} ${item.viewCount} ${item.authorNickname}`) };
    };
    const name = author.nickname;
    const otherHandle = openDatabase(database.target);
    try {
      const other = createStores(otherHandle.db, otherHandle.queries);
      // Read twice before each write, so a remembered page exists.
      for (let i = 0; i < 2; i++) assert.deepEqual(await page(), { total: 2, items: [`newer 0 ${name}`, `older 0 ${name}`] });
      await stores.posts.addViews(new Map([[older.id, 1]]));
      assert.deepEqual((await page()).items, [`newer 0 ${name}`, `older 1 ${name}`], 'a view added');
      await page();
      await stores.posts.edit(newer.id, author.id, { categoryId: category.id, title: 'edited', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', publish: false }, T0 + 2);
      assert.deepEqual((await page()).items, [`edited 0 ${name}`, `older 1 ${name}`], 'a post edited');
      await page();
      await stores.users.updateProfile(author.id, { nickname: 'Renamed' }, T0 + 3);
      assert.deepEqual((await page()).items, ['edited 0 Renamed', 'older 1 Renamed'], 'the author renamed');
      await page();
      await other.posts.delete(older.id, author.id);
      await seenFromAnotherConnection(page, { total: 1, items: ['edited 0 Renamed'] }, 'a post deleted by another connection');
      await page();
      await post('newest', 4);
      assert.deepEqual(await page(), { total: 2, items: ['newest 0 Renamed', 'edited 0 Renamed'] }, 'a post published');
    } finally {
      await otherHandle.close();
    }
  });

  // On SQLite another connection's commit is looked for once per turn of the event loop (the
  // requests of one turn are concurrent with it): from the next turn on, every lookup sees it.
  test('the bearer lookups see what another connection (another instance or process) committed, from the next turn of the event loop on', async () => {
    const { user, client, grant } = await newGrant();
    const access = unique('at');
    await stores.tokens.insertAccess({ tokenHash: access, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 'profile:read', createdAt: T0, expiresAt: T0 + 60 * MINUTE });
    const personalHash = unique('pt');
    const personal = await stores.personalTokens.insert({ userId: user.id, name: 'ci', tokenHash: personalHash, scope: 'profile:read', expiresAt: null }, T0);
    const otherHandle = openDatabase(database.target);
    try {
      const other = createStores(otherHandle.db, otherHandle.queries);
      // Each lookup is made twice before the other connection writes, so a remembered row exists.
      for (let i = 0; i < 2; i++) {
        assert.equal((await stores.tokens.findAccessBearer(access))?.revokedAt, null);
        assert.equal((await stores.personalTokens.findBearer(personalHash))?.revokedAt, null);
      }
      await other.tokens.revokeAccess(access, client.clientId, T0 + 1);
      await nextTurn();
      assert.equal((await stores.tokens.findAccessBearer(access))?.revokedAt, T0 + 1);
      await other.personalTokens.revoke(personal.id, user.id, T0 + 2);
      await nextTurn();
      assert.equal((await stores.personalTokens.findBearer(personalHash))?.revokedAt, T0 + 2);
      await other.users.setStatus(user.id, 'suspended', T0 + 3);
      await nextTurn();
      assert.equal((await stores.tokens.findAccessBearer(access))?.user.status, 'suspended');
      assert.equal((await stores.personalTokens.findBearer(personalHash))?.user.status, 'suspended');
    } finally {
      await otherHandle.close();
    }
  });

  test('grants are revoked once, per user and client, per client and per user', async () => {
    const { user, client, grant } = await newGrant();
    const second = await stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 's', nonce: null, authTime: T0 }, T0);
    assert.equal(await stores.grants.revokeForUserAndClient(user.id, client.clientId, 'code_reuse', T0 + 1), 2);
    assert.equal(await stores.grants.revoke(grant.id, 'refresh_reuse', T0 + 2), false);
    assert.equal((await stores.grants.findById(second.id))?.revokedReason, 'code_reuse');
    const other = await newGrant();
    assert.equal(await stores.grants.revokeForClient(other.client.clientId, 'client_deactivated', T0), 1);
    const third = await newGrant();
    assert.deepEqual(await stores.grants.revokeForUser(third.user.id, 'account_unusable', T0), [third.client.clientId]);
  });

  test('the clients signed into in given sessions, with a live grant, are listed once per client and session', async () => {
    const { user, client, grant } = await newGrant();
    for (let i = 0; i < 2; i++) await stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 's', nonce: null, authTime: T0, sid: 'sid-a' }, T0);
    const other = await newClient();
    await stores.grants.create({ userId: user.id, clientId: other.clientId, scope: 's', nonce: null, authTime: T0, sid: 'sid-b' }, T0);
    const revoked = await stores.grants.create({ userId: user.id, clientId: other.clientId, scope: 's', nonce: null, authTime: T0, sid: 'sid-a' }, T0);
    await stores.grants.revoke(revoked.id, 'revoked_by_client', T0 + 1);
    assert.deepEqual(await stores.grants.liveClientsOfSessions(user.id, ['sid-a']), [{ clientId: client.clientId, sid: 'sid-a' }]);
    assert.equal((await stores.grants.liveClientsOfSessions(user.id, ['sid-a', 'sid-b', 'sid-c'])).length, 2);
    assert.deepEqual(await stores.grants.liveClientsOfSessions((await newUser()).id, ['sid-a']), [], 'another user signed into nothing');
    assert.equal((await stores.grants.findById(grant.id))?.sid, null);
    const many = Array.from({ length: 1200 }, (_, i) => `sid-${i}`);
    assert.equal((await stores.grants.liveClientsOfSessions(user.id, [...many, 'sid-b'])).length, 1, 'thousands of sessions in one call');
  });

  test('a client keeps its post-logout redirect URIs and back-channel logout URI, and they can be replaced', async () => {
    const client = await stores.clients.create({
      clientId: unique('client'), name: 'App', description: '', homepageUrl: '', ownerId: null, type: 'public',
      redirectUris: ['https://app.example/cb'], allowedScopes: ['openid'], secretHash: null, idTokenAlg: 'RS256',
      postLogoutRedirectUris: ['https://app.example/bye'], backchannelLogoutUri: 'https://app.example/bc',
    }, T0);
    assert.deepEqual(await stores.clients.findById(client.clientId), client);
    assert.deepEqual([client.postLogoutRedirectUris, client.backchannelLogoutUri], [['https://app.example/bye'], 'https://app.example/bc']);
    assert.equal(await stores.clients.setLogoutUris(client.clientId, { postLogoutRedirectUris: [], backchannelLogoutUri: null }, T0 + 1, 'operator'), true);
    const changed = await stores.clients.findById(client.clientId);
    assert.deepEqual([changed?.postLogoutRedirectUris, changed?.backchannelLogoutUri, changed?.updatedAt], [[], null, T0 + 1]);
    const plain = await newClient();
    assert.deepEqual([plain.postLogoutRedirectUris, plain.backchannelLogoutUri], [[], null]);
  });

  test('a client\'s name, description and homepage can be replaced', async () => {
    const client = await newClient();
    const details = { name: 'Renamed', description: 'Now with a description', homepageUrl: 'https://app.example/home' };
    assert.equal(await stores.clients.setDetails(client.clientId, details, T0 + 1, 'owner'), true);
    const changed = await stores.clients.findById(client.clientId);
    assert.deepEqual(changed, { ...client, ...details, updatedAt: T0 + 1 });
    assert.equal(await stores.clients.setDetails(unique('client'), details, T0 + 1, 'owner'), false, 'no such client');
  });

  test('a deactivated client keeps its previous secret: deletePreviousSecret is conditional on status = active', async () => {
    const client = await newClient();
    await stores.clients.rotateSecret(client.clientId, 'second', T0 + 100, T0);
    const deactivated = await stores.clients.setStatus(client.clientId, 'deactivated', T0 + 1);
    assert.equal(await stores.clients.deletePreviousSecret(client.clientId, T0 + 2), false);
    assert.deepEqual(await stores.clients.findById(client.clientId), deactivated);
  });

  test('a deactivated client keeps its name, description and homepage: setDetails is conditional on status = active', async () => {
    const client = await newClient();
    const deactivated = await stores.clients.setStatus(client.clientId, 'deactivated', T0 + 1);
    for (const changedBy of ['owner', 'operator'] as const) {
      assert.equal(await stores.clients.setDetails(client.clientId, { name: 'Revived', description: 'Changed', homepageUrl: 'https://app.example/' }, T0 + 2, changedBy), false, changedBy);
    }
    assert.deepEqual(await stores.clients.findById(client.clientId), deactivated);
  });

  test('a deactivated client keeps its secret, addresses and pushed-request setting: rotateSecret, setRedirectUris, setLogoutUris and setRequirePushedAuthorizationRequests are conditional on status = active', async () => {
    const client = await newClient();
    const deactivated = await stores.clients.setStatus(client.clientId, 'deactivated', T0 + 1);
    assert.equal(await stores.clients.rotateSecret(client.clientId, 'second', T0 + 100, T0 + 2), false, 'rotateSecret');
    assert.equal(await stores.clients.setRequirePushedAuthorizationRequests(client.clientId, true, T0 + 2), false, 'setRequirePushedAuthorizationRequests');
    for (const changedBy of ['owner', 'operator'] as const) {
      assert.equal(await stores.clients.setRedirectUris(client.clientId, ['https://elsewhere.example/cb'], T0 + 2, changedBy), false, `setRedirectUris by ${changedBy}`);
      assert.equal(await stores.clients.setLogoutUris(client.clientId, { postLogoutRedirectUris: ['https://elsewhere.example/bye'], backchannelLogoutUri: 'https://elsewhere.example/bc' }, T0 + 2, changedBy), false, `setLogoutUris by ${changedBy}`);
    }
    assert.deepEqual(await stores.clients.findById(client.clientId), deactivated);
  });

  test('a grant is read with its user in one read, every field of both as stored', async () => {
    const { user, grant } = await newGrant();
    await stores.grants.touch(grant.id, T0 + MINUTE);
    const found = await stores.grants.findWithUser(grant.id);
    assert.deepEqual(found, { grant: await stores.grants.findById(grant.id), user: await stores.users.findById(user.id) });
    assert.equal(found?.grant.lastUsedAt, T0 + MINUTE);
    assert.equal(await stores.grants.findWithUser(grant.id + 1_000_000), undefined);
  });

  test('the live grants of a user are summarised per client', async () => {
    const { user, client } = await newGrant();
    const later = await stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 's', nonce: null, authTime: T0 }, T0 + MINUTE);
    await stores.grants.touch(later.id, T0 + 5 * MINUTE);
    assert.deepEqual(await stores.grants.summarizeForUser(user.id), [{ clientId: client.clientId, firstAuthorizedAt: T0, lastUsedAt: T0 + 5 * MINUTE }]);
  });

  test('personal tokens: stored by hash, listed newest first, revoked by their owner only', async () => {
    const user = await newUser();
    const stranger = await newUser();
    const first = await stores.personalTokens.insert({ userId: user.id, name: 'ci', tokenHash: unique('pt'), scope: 'profile:read', expiresAt: null }, T0);
    const hash = unique('pt');
    const second = await stores.personalTokens.insert({ userId: user.id, name: 'cli', tokenHash: hash, scope: 'posts:read', expiresAt: T0 + MINUTE }, T0 + 1);
    assert.deepEqual((await stores.personalTokens.listForUser(user.id)).map((t) => t.id), [second.id, first.id]);
    assert.deepEqual((await stores.personalTokens.findBearer(hash))?.user, user);
    assert.equal((await stores.personalTokens.findBearer(hash))?.clientId, null);
    assert.equal((await stores.personalTokens.findBearer(hash))?.grantId, null);
    assert.equal(await stores.personalTokens.revoke(second.id, stranger.id, T0), false);
    assert.equal(await stores.personalTokens.revoke(second.id, user.id, T0 + 2), true);
    assert.equal((await stores.personalTokens.findBearer(hash))?.revokedAt, T0 + 2);
    await stores.personalTokens.touch(first.id, T0 + 3);
    assert.equal((await stores.personalTokens.listForUser(user.id)).find((t) => t.id === first.id)?.lastUsedAt, T0 + 3);
  });

  test('the counts a cap is judged by: a user\'s passkeys, live personal tokens (not revoked, not expired at the instant) and an owner\'s active apps, no one else\'s', async () => {
    const user = await newUser();
    const stranger = await newUser();
    for (const [owner, id] of [[user, 'a'], [user, 'b'], [stranger, 'c']] as const) {
      await stores.passkeys.insert({ credentialId: unique(id), userId: owner.id, name: 'Key', publicKey: 'AAAA', counter: 0, transports: [], backedUp: false }, T0);
    }
    assert.equal(await stores.passkeys.countForUser(user.id), 2);
    const token = (userId: number, expiresAt: number | null) =>
      stores.personalTokens.insert({ userId, name: 't', tokenHash: unique('pt'), scope: 'profile:read', expiresAt }, T0);
    await token(user.id, null);
    await token(user.id, T0 + MINUTE);
    const revoked = await token(user.id, null);
    await stores.personalTokens.revoke(revoked.id, user.id, T0);
    await token(stranger.id, null);
    assert.equal(await stores.personalTokens.countLive(user.id, T0), 2);
    assert.equal(await stores.personalTokens.countLive(user.id, T0 + MINUTE), 1, 'expired at its instant, as hasExpired reads it');
    const apps = [await newClient(user.id), await newClient(user.id), await newClient(stranger.id), await newClient(null)];
    await stores.clients.setStatus(apps[1]!.clientId, 'deactivated', T0);
    assert.equal(await stores.clients.countActiveByOwner(user.id), 1);
    assert.equal(await stores.clients.countActiveByOwner(stranger.id), 1);
  });

  test('the creations a day\'s limit is judged by: a user\'s personal tokens and an owner\'s member-registered apps made after the instant, revoked or deactivated ones too, newest first, at most the limit, no one else\'s', async () => {
    const user = await newUser();
    const stranger = await newUser();
    const token = (userId: number, at: number) =>
      stores.personalTokens.insert({ userId, name: 't', tokenHash: unique('pt'), scope: 'profile:read', expiresAt: null }, at);
    await token(user.id, T0);
    await token(user.id, T0 + 1);
    const revoked = await token(user.id, T0 + 3);
    await stores.personalTokens.revoke(revoked.id, user.id, T0 + 3);
    await token(user.id, T0 + 2);
    await token(stranger.id, T0 + 2);
    assert.deepEqual(await stores.personalTokens.createdSince(user.id, T0, 10), [T0 + 3, T0 + 2, T0 + 1], 'after the instant, not at it');
    assert.deepEqual(await stores.personalTokens.createdSince(user.id, T0 - 1, 2), [T0 + 3, T0 + 2]);
    const app = (ownerId: number | null, at: number, memberRegistered = true) => stores.clients.create({
      clientId: unique('client'), name: 'App', description: '', homepageUrl: '', ownerId, type: 'public', memberRegistered,
      redirectUris: ['https://app.example/cb'], allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256',
    }, at);
    await app(user.id, T0);
    const deactivated = await app(user.id, T0 + 2);
    await stores.clients.setStatus(deactivated.clientId, 'deactivated', T0 + 3);
    await app(user.id, T0 + 1);
    await app(user.id, T0 + 3, false);
    await app(stranger.id, T0 + 3);
    await app(null, T0 + 3, false);
    assert.deepEqual(await stores.clients.memberRegisteredSince(user.id, T0, 10), [T0 + 2, T0 + 1], 'the operator\'s not counted');
    assert.deepEqual(await stores.clients.memberRegisteredSince(user.id, T0 - 1, 1), [T0 + 2]);
  });

  test('signing keys: a retired key stays published until its withdrawal, a withdrawn one goes at once, and the janitor deletes it', async () => {
    const key = (kid: string, at: number) => ({ kid, alg: 'ES256' as const, publicJwk: '{}', privateJwk: '{"d":"x"}', createdAt: at, activeAt: at });
    const listed = async (at: number) => (await stores.keys.listPublished(at)).map((k) => k.kid);
    const [old, next, newest] = [unique('kid'), unique('kid'), unique('kid')];
    await stores.keys.insert(key(old, T0));
    // A rotation: the old key signs until the new one is active, and is published a while longer.
    assert.equal(await stores.keys.retire('ES256', T0 + MINUTE, T0 + 10 * MINUTE), 1);
    await stores.keys.insert({ ...key(next, T0 + 1), activeAt: T0 + MINUTE });
    const stored = (await stores.keys.listAll()).find((k) => k.kid === old)!;
    assert.deepEqual([stored.activeAt, stored.retiredAt, stored.withdrawnAt], [T0, T0 + MINUTE, T0 + 10 * MINUTE]);
    assert.deepEqual(await listed(T0 + 10 * MINUTE - 1), [next, old], 'newest first');
    assert.deepEqual(await listed(T0 + 10 * MINUTE), [next]);
    // An immediate rotation retires the pending key too, and one retired later moves up.
    assert.equal(await stores.keys.retire('ES256', T0 + 2, T0 + 5 * MINUTE), 2);
    const times = Object.fromEntries((await stores.keys.listAll()).map((k) => [k.kid, [k.retiredAt, k.withdrawnAt]]));
    assert.deepEqual(times[old], [T0 + 2, T0 + 5 * MINUTE]);
    assert.deepEqual(times[next], [T0 + 2, T0 + 5 * MINUTE]);
    await stores.keys.insert(key(newest, T0 + 2));
    // After a compromise: every older key leaves the JWKS at once.
    assert.equal(await stores.keys.withdraw('ES256', T0 + 3), 3);
    assert.deepEqual(await listed(T0 + 3), []);
    // Sealing replaces a private key only if it is still the one read.
    assert.equal(await stores.sealedColumns.replace('signing_keys.private_jwk', old, '{"d":"other"}', 'enc:v2:x'), false);
    assert.equal(await stores.sealedColumns.replace('signing_keys.private_jwk', old, '{"d":"x"}', 'enc:v2:x'), true);
    assert.equal((await stores.keys.listAll()).find((k) => k.kid === old)?.privateJwk, 'enc:v2:x');
    const deleted = await stores.housekeeping.purge(T0 + 3, purgeOptions({ batchSize: 1 }));
    assert.ok(deleted.signing_keys! >= 3);
    assert.deepEqual((await stores.keys.listAll()).filter((k) => [old, next, newest].includes(k.kid)), []);
  });

  test('signing keys: a first key is added only while its algorithm has none that signs or waits to sign', async () => {
    const at = T0 + 20 * MINUTE;
    // RS256 keys other tests left, if any, leave the JWKS at `at`: none of them is live from then.
    await stores.keys.withdraw('RS256', at);
    const key = (kid: string, created: number) => ({ kid, alg: 'RS256' as const, publicJwk: '{}', privateJwk: '{"d":"x"}', createdAt: created, activeAt: created });
    const [first, second, third] = [unique('kid'), unique('kid'), unique('kid')];
    assert.equal(await stores.keys.insertUnlessLive(key(first, at), at), true);
    assert.equal(await stores.keys.insertUnlessLive(key(second, at), at), false, 'one signs already');
    assert.equal(await stores.keys.withdraw('RS256', at + 1), 1);
    assert.equal(await stores.keys.insertUnlessLive(key(third, at + 1), at + 1), true, 'a withdrawn key is not live');
    const stored = (await stores.keys.listAll()).find((k) => k.kid === third)!;
    assert.deepEqual([stored.alg, stored.publicJwk, stored.privateJwk, stored.createdAt, stored.activeAt, stored.retiredAt, stored.withdrawnAt], ['RS256', '{}', '{"d":"x"}', at + 1, at + 1, null, null]);
    assert.equal((await stores.keys.listAll()).some((k) => k.kid === second), false, 'the refused key was not stored');
  });

  test('a session is live until it ends or expires, and carries its user', async () => {
    const user = await newUser();
    const idHash = unique('s');
    await stores.sessions.create({ idHash, userId: user.id, authTime: T0, expiresAt: T0 + MINUTE }, T0);
    assert.equal((await stores.sessions.findLive(idHash, T0 + 1))?.user.id, user.id);
    assert.equal(await stores.sessions.findLive(idHash, T0 + MINUTE), undefined);
    assert.deepEqual(await stores.sessions.end(idHash, T0 + 2), { userId: user.id });
    assert.equal(await stores.sessions.end(idHash, T0 + 3), undefined, 'only the call that ended it hears of it');
    assert.equal(await stores.sessions.findLive(idHash, T0 + 3), undefined);
  });

  test('a session\'s last-seen time only moves forward: a later touch then an earlier one (another instance\'s, or a slow request\'s) leaves the later time', async () => {
    const user = await newUser();
    const idHash = unique('s');
    await stores.sessions.create({ idHash, userId: user.id, authTime: T0, expiresAt: T0 + 60 * MINUTE }, T0);
    const lastSeen = async () => (await stores.sessions.findLive(idHash, T0))?.session.lastSeenAt;
    await stores.sessions.touch(idHash, T0 + 2 * MINUTE);
    assert.equal(await lastSeen(), T0 + 2 * MINUTE);
    await stores.sessions.touch(idHash, T0 + MINUTE);
    assert.equal(await lastSeen(), T0 + 2 * MINUTE, 'not set back');
  });

  // ---- Back-channel logout deliveries (INTERFACE section 5) ----------------------------------

  const LEASE = MINUTE;
  /** Deliveries for new clients (one by default, rows dealt round), so a test sees only its own rows among everything due. */
  async function queued(count: number, at: number, clientCount = 1) {
    const user = await newUser();
    const clients = await Promise.all(Array.from({ length: clientCount }, () => newClient()));
    const rows = Array.from({ length: count }, (_, i) => ({ clientId: clients[i % clientCount]!.clientId, userId: user.id, sid: i % 2 ? null : `sid-${i}`, jti: unique('jti'), cause: 'signed_out' }));
    await stores.logoutDeliveries.insert(rows, at);
    return { client: clients[0]!, user, jtis: new Set(rows.map((r) => r.jti)) };
  }
  /** Claims everything due at `at`, and keeps only this test's rows; the rest are given back untouched by lease expiry. */
  async function claimMine(on: Stores, jtis: Set<string>, claim: string, at: number, limit = 50) {
    return (await on.logoutDeliveries.claim(claim, at, at + LEASE, limit)).filter((d) => jtis.has(d.jti));
  }

  test('a queued logout delivery is due at once, claimed with one more attempt, and every field comes back', async () => {
    const at = T0 + 200 * 86_400_000;
    const { client, user, jtis } = await queued(1, at);
    assert.equal(await stores.logoutDeliveries.anyDue(at), true);
    const [claimed] = await claimMine(stores, jtis, 'c1', at);
    assert.deepEqual({ ...claimed, id: 0 }, {
      id: 0, clientId: client.clientId, userId: user.id, sid: 'sid-0', jti: [...jtis][0], cause: 'signed_out',
      createdAt: at, attempts: 1, nextAttemptAt: at, lastError: null,
    });
    // Leased: nobody else gets it while the lease runs.
    assert.deepEqual(await claimMine(stores, jtis, 'c2', at + LEASE - 1), []);
    assert.equal(await stores.logoutDeliveries.delivered(claimed!.id, 'c1', at + 1), true);
    assert.deepEqual(await claimMine(stores, jtis, 'c3', at + 10 * LEASE), [], 'a delivered row is never claimed again');
  });

  test('two instances claiming at once never get the same logout delivery', async () => {
    const at = T0 + 201 * 86_400_000;
    const { jtis } = await queued(40, at, 10);
    const otherHandle = openDatabase(database.target);
    try {
      const other = createStores(otherHandle.db, otherHandle.queries);
      const raw = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? other : stores).logoutDeliveries.claim(`c${i}`, at, at + LEASE, 4)));
      assert.ok(raw.every((claimed) => claimed.length <= 4), `no claim takes more than its limit: ${raw.map((c) => c.length)}`);
      const claims = raw.map((claimed) => claimed.filter((d) => jtis.has(d.jti)));
      const rest = await claimMine(stores, jtis, 'rest', at);
      const ids = [...claims.flat(), ...rest].map((d) => d.jti);
      assert.equal(new Set(ids).size, ids.length, 'no row was claimed twice');
      assert.equal(ids.length, 40, 'every row was claimed once');
      assert.ok(claims.filter((c) => c.length > 0).length > 1, 'the claims shared the rows');
    } finally {
      await otherHandle.close();
    }
  });

  test('a lease that runs out (its instance died) lets another claim the delivery, and the first can no longer record an outcome', async () => {
    const at = T0 + 202 * 86_400_000;
    const { jtis } = await queued(1, at);
    const [first] = await claimMine(stores, jtis, 'dead', at);
    const [second] = await claimMine(stores, jtis, 'alive', at + LEASE);
    assert.equal(second?.id, first?.id);
    assert.equal(second?.attempts, 2);
    assert.equal(await stores.logoutDeliveries.delivered(first!.id, 'dead', at + LEASE + 1), false);
    assert.equal(await stores.logoutDeliveries.retryAt(first!.id, 'dead', at + LEASE + 1, 'x'), false);
    assert.equal(await stores.logoutDeliveries.abandon(second!.id, 'alive', at + LEASE + 2, 'gone'), true);
    assert.deepEqual(await claimMine(stores, jtis, 'later', at + 100 * LEASE), [], 'an abandoned row is never claimed again');
  });

  test('a failed logout delivery is due again at its next attempt, not before, with its error kept', async () => {
    const at = T0 + 203 * 86_400_000;
    const { jtis } = await queued(1, at);
    const [claimed] = await claimMine(stores, jtis, 'c1', at);
    assert.equal(await stores.logoutDeliveries.retryAt(claimed!.id, 'c1', at + 30_000, 'answered HTTP 500'), true);
    assert.deepEqual(await claimMine(stores, jtis, 'c2', at + 29_999), []);
    const [again] = await claimMine(stores, jtis, 'c3', at + 30_000);
    assert.deepEqual([again?.attempts, again?.lastError, again?.nextAttemptAt], [2, 'answered HTTP 500', at + 30_000]);
    await stores.logoutDeliveries.delivered(again!.id, 'c3', at + 30_001);
  });

  test('housekeeping deletes logout deliveries delivered or given up past the audit window, and keeps pending ones', async () => {
    const at = T0 + 204 * 86_400_000;
    const { jtis } = await queued(3, at);
    const [a, b] = await claimMine(stores, jtis, 'c', at);
    await stores.logoutDeliveries.delivered(a!.id, 'c', at);
    await stores.logoutDeliveries.abandon(b!.id, 'c', at, 'gone');
    const jtiCount = async () => Number((await handle.db.selectFrom('logout_deliveries').select((eb) => eb.fn.countAll().as('n'))
      .where('jti', 'in', [...jtis]).executeTakeFirstOrThrow()).n);
    const options = purgeOptions({ batchSize: 1 });
    await stores.housekeeping.purge(at + 86_400_000, options);
    assert.equal(await jtiCount(), 3, 'kept for the audit window');
    const deleted = await stores.housekeeping.purge(at + 86_400_000 + 1, options);
    assert.ok(deleted.logout_deliveries! >= 2);
    assert.equal(await jtiCount(), 1, 'the pending one stays');
    await stores.housekeeping.purge(at + 2 * 86_400_000 + 1, options);
    assert.equal(await jtiCount(), 0, 'a pending one past its maximum age and the audit window goes too');
  });

  test('a transaction lands all of its writes or none', async () => {
    const name = unique('tx');
    await assert.rejects(stores.transaction(async (tx) => {
      await tx.users.create({ username: name, passwordHash: 'h', bio: '', member: false, level: 1, xp: 0 }, T0);
      throw new Error('crash mid-way');
    }));
    assert.equal(await stores.users.findByUsername(name), undefined);
  });

  test('housekeeping deletes expired codes and tokens past the audit window, and ended sessions', async () => {
    const { user, client, grant } = await newGrant();
    const far = T0 + 100 * 86_400_000;
    await stores.codes.insert({
      codeHash: unique('old'), grantId: grant.id, clientId: client.clientId, userId: user.id, redirectUri: 'x',
      scope: 's', codeChallenge: null, nonce: null, authTime: T0, createdAt: T0, expiresAt: T0 + MINUTE,
    });
    await stores.tokens.insertAccess({ tokenHash: unique('old'), grantId: grant.id, clientId: client.clientId, userId: user.id, scope: 's', createdAt: T0, expiresAt: T0 + MINUTE });
    const liveGrant = await stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 's', nonce: null, authTime: far }, far);
    const liveHash = unique('live');
    await stores.tokens.insertRefresh({ tokenHash: liveHash, grantId: liveGrant.id, clientId: client.clientId, userId: user.id, scope: 's', createdAt: far, expiresAt: far + MINUTE });
    await stores.sessions.create({ idHash: unique('s'), userId: user.id, authTime: T0, expiresAt: T0 + MINUTE }, T0);
    const deleted = await stores.housekeeping.purge(far, purgeOptions({ batchSize: 1 }));
    assert.ok(deleted.authorization_codes! >= 1);
    assert.ok(deleted.access_tokens! >= 1);
    assert.ok(deleted.sessions! >= 1);
    assert.ok(deleted.grants! >= 1);
    assert.ok(await stores.tokens.findRefresh(liveHash), 'a live token survives');
  });
});
