/**
 * Names people chose, set in a table cell or beside other words, isolated (`<bdi>`, or FSI … PDI
 * in plain text, UAX #9) over real HTTP on every database: an app's, a token's and a passkey's
 * name from a row kept before direction controls were refused still holds one, and a right-to-left
 * post title reorders the words of the heading it stands in unless isolated.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { writePost } from '../../src/core/community/posts.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { person, uniqueName } from '../staff/support.js';
import { signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';
/** A name from before the rule: a right-to-left override that, bare, would run on over the words after it. */
const OLDER = 'Agent \u202eevil';
const ISOLATED = `<bdi>${OLDER}</bdi>`;

/** Whether `page` holds the name anywhere but isolated (`<bdi>`, FSI … PDI) or as a form field's value. */
function isBareIn(page: string): boolean {
  return page.replaceAll(ISOLATED, '').replaceAll(`\u2068${OLDER}\u2069`, '').replace(/value="[^"]*"/g, '').includes(OLDER);
}

forEachDatabase('names people chose, isolated', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  /** A member holding an app, a personal token and a passkey named as an older row may be, and a grant of the app. */
  async function memberWithOlderNames() {
    const { user, visitor } = await signedInMember(t, uniqueName('older'), PASSWORD);
    const now = t.clock.now();
    const client = await t.deps.stores.clients.create({
      clientId: uniqueName('olderapp'), name: OLDER, description: '', homepageUrl: '', ownerId: user.id, type: 'public',
      redirectUris: ['https://member.example/cb'], allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256',
    }, now);
    await t.deps.stores.personalTokens.insert({ userId: user.id, name: OLDER, tokenHash: uniqueName('hash'), scope: 'read:profile', expiresAt: null }, now);
    await t.deps.stores.passkeys.insert({ credentialId: uniqueName('cred'), userId: user.id, name: OLDER, publicKey: 'AQID', counter: 0, transports: [], backedUp: false }, now);
    await t.deps.stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    return { user, visitor, client };
  }

  test('an older app, token or passkey name holding a direction control is isolated in the member\'s developer list, app page, tokens and passkeys tables and authorized apps', async () => {
    const { visitor, client } = await memberWithOlderNames();
    const bare: string[] = [];
    for (const path of ['/settings/developers', `/settings/developers/${client.clientId}`, '/settings/tokens', '/settings/security', '/settings/applications']) {
      const page = await visitor.get(path);
      assert.equal(page.status, 200, path);
      if (!page.text.includes(ISOLATED) || isBareIn(page.text)) bare.push(path);
    }
    assert.deepEqual(bare, [], 'pages setting the name bare');
  });

  test('an older app or token name holding a direction control is isolated in the staff console\'s app list, app page, member page and staff log', async () => {
    const { user, client } = await memberWithOlderNames();
    const admin = await person(t, 'admin', { twoStep: true });
    await t.deps.stores.staffLog.append({
      createdAt: t.clock.now(), actorId: admin.user.id, actorName: admin.user.username, action: 'app.status', targetKind: 'app',
      targetId: client.clientId, targetName: OLDER, detail: { status: 'active' }, reason: 'checked',
    });
    const bare: string[] = [];
    for (const path of [`/admin/apps?q=${encodeURIComponent(client.clientId)}`, `/admin/apps/${encodeURIComponent(client.clientId)}`, `/admin/members/${user.id}`, '/admin/staff-log']) {
      const page = await admin.visitor.get(path);
      assert.equal(page.status, 200, path);
      if (!page.text.includes(ISOLATED) || isBareIn(page.text)) bare.push(path);
    }
    assert.deepEqual(bare, [], 'pages setting the name bare');
  });

  test('a right-to-left post title is isolated in the heading that asks whether to delete the post, and in the list of drafts; a left-to-right one is left bare', async () => {
    const { user, visitor } = await signedInMember(t, uniqueName('poster'), PASSWORD);
    const rtl = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'مقال قصير', body: 'Words.', category: 'General', status: 'draft' });
    const plain = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'Plain post', body: 'Words.', category: 'General', status: 'draft' });
    for (const locale of ['en', 'zh-CN', 'zh-TW']) {
      visitor.cookies.set('lang', locale);
      const page = await visitor.get(`/posts/${rtl.id}/delete`);
      assert.equal(page.status, 200, locale);
      assert.match(page.text, /<h1>[^<]*\u2068مقال قصير\u2069[^<]*<\/h1>/, `${locale}: the title isolated in the heading`);
      const bare = await visitor.get(`/posts/${plain.id}/delete`);
      assert.match(bare.text, /<h1>[^<\u2068]*Plain post[^<\u2069]*<\/h1>/, `${locale}: a left-to-right title left bare`);
    }
    const profile = await visitor.get(`/u/${user.username}`);
    assert.match(profile.text, /<a href="\/posts\/\d+"><bdi>مقال قصير<\/bdi><\/a>/, 'the drafts list isolates it');
  });
  test('a right-to-left category is isolated in the line under a post\'s title, in lists and on the post, and escaped once; a right-to-left post title is isolated in the page\'s title', async () => {
    const { user, visitor } = await signedInMember(t, uniqueName('poster'), PASSWORD);
    const category = `عام <b>&"${uniqueName('c')}`;
    const escaped = `عام &lt;b&gt;&amp;&quot;${category.slice('عام <b>&"'.length)}`;
    const post = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'مقال منشور', body: 'Words.', category, status: 'published' });
    for (const path of ['/', `/u/${user.username}`, `/posts/${post.id}`]) {
      const page = await visitor.get(path);
      assert.equal(page.status, 200, path);
      assert.ok(page.text.includes(`<span class="tag"><bdi>${escaped}</bdi></span>`), `${path}: the category isolated and escaped once`);
      assert.ok(!page.text.includes('<b>&'), `${path}: no markup from the name`);
    }
    assert.match((await visitor.get(`/posts/${post.id}`)).text, /<title>\u2068مقال منشور\u2069 · /, 'the page title isolates it');
  });
});
