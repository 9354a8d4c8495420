/**
 * What members who are not active wrote (INTERFACE section 4: suspended, banned, deleted), over
 * real HTTP on every database. Staff suspend a member to stop what they wrote reaching people: their
 * posts are the 404 of a post that does not exist, on no list and viewed by no one, and their
 * comments are not shown. Nothing is deleted: made active again, all of it is back.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import type { User, UserStatus } from '../../src/core/accounts/ports.js';
import type { Post } from '../../src/core/community/ports.js';
import { commentOnPost, writePost } from '../../src/core/community/posts.js';
import { get, newPersonalToken, newUser } from '../api/fixtures.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { person } from '../staff/support.js';
import { type PageResponse, Visitor } from './visitor.js';

const NOT_ACTIVE: readonly UserStatus[] = ['suspended', 'banned', 'deleted'];

/** A page without what differs by address alone (where the language picker comes back to). */
const pageOf = (response: PageResponse) => response.text.replace(/action="\/language\?[^"]*"/, '');

forEachDatabase('what members who are not active wrote', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  /** A published post, its title unique to it, by a new member (`author`). */
  async function postByNewMember(): Promise<{ author: User; post: Post }> {
    const author = await newUser(t.deps);
    const title = `Post ${randomBytes(6).toString('hex')}`;
    const post = await writePost(t.deps.stores, t.clock, { authorId: author.id, title, body: 'Words.', category: 'General', status: 'published' });
    return { author, post };
  }

  const setStatus = (user: User, status: UserStatus) => setAccountStatus(t.deps.stores, t.clock, user.id, status);

  test('a post whose author is not active is the 404 of a post that does not exist, and is back when they are active again', async () => {
    const { author, post } = await postByNewMember();
    const reader = new Visitor(t.baseUrl);
    const unknown = await reader.get('/posts/2000000000');
    assert.equal(unknown.status, 404);
    for (const status of NOT_ACTIVE) {
      await setStatus(author, status);
      const page = await reader.get(`/posts/${post.id}`);
      assert.equal(page.status, 404, status);
      assert.equal(pageOf(page), pageOf(unknown), `${status}: the page of an unknown post, nothing saying why`);
      await setStatus(author, 'active');
      assert.equal((await reader.get(`/posts/${post.id}`)).status, 200, `active again after ${status}`);
    }
  });

  test('the avatar of a member who is not active is the 404 of a member who does not exist, and is back when they are active again', async () => {
    const { author } = await postByNewMember();
    const avatar = () => fetch(`${t.baseUrl}/avatars/${author.id}`);
    assert.equal((await avatar()).status, 200);
    const unknown = await fetch(`${t.baseUrl}/avatars/2000000000`);
    for (const status of NOT_ACTIVE) {
      await setStatus(author, status);
      const hidden = await avatar();
      assert.equal(hidden.status, 404, status);
      assert.equal(await hidden.text(), await (await fetch(`${t.baseUrl}/avatars/2000000000`)).text(), `${status}: nothing telling it apart from an unknown id`);
      await setStatus(author, 'active');
      assert.equal((await avatar()).status, 200, `active again after ${status}`);
    }
    assert.equal(unknown.status, 404);
  });

  test('a post whose author is not active is on no list: not on the home page, nor on the author\'s page', async () => {
    const { author, post } = await postByNewMember();
    const reader = new Visitor(t.baseUrl);
    const listed = async () => ({
      home: (await reader.get('/')).text.includes(post.title),
      profile: (await reader.get(`/u/${author.username}`)).text.includes(post.title),
    });
    assert.deepEqual(await listed(), { home: true, profile: true });
    await setStatus(author, 'suspended');
    assert.deepEqual(await listed(), { home: false, profile: false });
    assert.deepEqual(await t.deps.stores.posts.listPublishedByAuthor(author.id, 0, 50), { items: [], total: 0 }, 'the author\'s list is empty in the store too');
    await setStatus(author, 'active');
    assert.deepEqual(await listed(), { home: true, profile: true });
  });

  test('a post whose author is not active counts no view', async () => {
    const { author, post } = await postByNewMember();
    await setStatus(author, 'suspended');
    for (let i = 0; i < 3; i++) assert.equal((await new Visitor(t.baseUrl).get(`/posts/${post.id}`)).status, 404);
    await t.deps.views.flush(t.deps.stores);
    await setStatus(author, 'active');
    assert.equal((await t.deps.stores.posts.findById(post.id))?.viewCount, 0);
  });

  test('comments by a member who is not active are not shown, and are again when they are active', async () => {
    const { post } = await postByNewMember();
    const [silenced, speaker] = [await newUser(t.deps), await newUser(t.deps)];
    await commentOnPost(t.deps.stores, t.clock, post.id, silenced.id, 'Buy cheap watches');
    await commentOnPost(t.deps.stores, t.clock, post.id, speaker.id, 'A fair point');
    const shown = async () => {
      const page = (await new Visitor(t.baseUrl).get(`/posts/${post.id}`)).text;
      return ['Buy cheap watches', 'A fair point'].filter((comment) => page.includes(comment));
    };
    assert.deepEqual(await shown(), ['Buy cheap watches', 'A fair point']);
    for (const status of NOT_ACTIVE) {
      await setStatus(silenced, status);
      assert.deepEqual(await shown(), ['A fair point'], status);
      await setStatus(silenced, 'active');
      assert.deepEqual(await shown(), ['Buy cheap watches', 'A fair point'], `active again after ${status}`);
    }
  });

  // On SQLite a page of an author's posts is remembered until posts, users or categories are
  // written (docs/performance.md, decision 54): the status change, a write to `users`, ends it.
  test('a suspension in the staff console takes the member\'s posts off at once, a page of posts remembered included, and their token answers 401', async () => {
    const { author, post } = await postByNewMember();
    const { token } = await newPersonalToken(t.deps, author, ['posts:read']);
    for (let i = 0; i < 2; i++) assert.equal((await get(t.baseUrl, '/api/open/v1/me/posts', { token })).status, 200);
    const pageOfPosts = () => t.deps.stores.posts.listPublishedByAuthor(author.id, 0, 20);
    for (let i = 0; i < 2; i++) assert.deepEqual((await pageOfPosts()).items.map((p) => p.id), [post.id]);
    const moderator = await person(t, 'moderator', { twoStep: true });
    const suspended = await moderator.visitor.post(`/admin/members/${author.id}/status`, { status: 'suspended', reason: 'spam in three threads', confirm: 'yes' });
    assert.equal(suspended.status, 303);
    assert.deepEqual(await pageOfPosts(), { items: [], total: 0 });
    assert.equal((await new Visitor(t.baseUrl).get(`/posts/${post.id}`)).status, 404);
    assert.equal((await get(t.baseUrl, '/api/open/v1/me/posts', { token })).status, 401);
  });
});
