/**
 * attack111: the post form allows BODY_MAX_LENGTH characters, and a browser sends a Han character
 * as 9 bytes (`%E4%B8%AD`): a Chinese post of 7,300 characters went past the site's 64 KiB body
 * limit, and its author got a generic 413 page with the text gone.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { BODY_MAX_LENGTH } from '../../src/core/community/posts.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Visitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery staple';

forEachDatabase('attack111: a long post in Chinese', (database) => {
  let t: TestApp;

  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  test('a post of as many Han characters as the form allows is written and edited, not refused for its size', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'changwen', password: PASSWORD });
    const visitor = new Visitor(t.baseUrl);
    await visitor.signIn(user.username, PASSWORD);
    const body = '长'.repeat(BODY_MAX_LENGTH);
    const written = await visitor.post('/posts/new', { title: '长文', category: '随笔', body, status: 'published' });
    assert.equal(written.status, 303, 'written');
    const id = Number(/^\/posts\/(\d+)$/.exec(written.location ?? '')?.[1]);
    assert.equal((await t.deps.stores.posts.findById(id))?.body, body);
    const edited = await visitor.post(`/posts/${id}/edit`, { title: '长文', category: '随笔', body: '改'.repeat(BODY_MAX_LENGTH), status: 'published' });
    assert.equal(edited.status, 303, 'edited');
    assert.equal((await t.deps.stores.posts.findById(id))?.body, '改'.repeat(BODY_MAX_LENGTH));
  });
});
