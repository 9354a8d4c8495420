/** The community site and account settings over real HTTP, on every database (issue 6). */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import type { User } from '../../src/core/accounts/ports.js';
import { writePost } from '../../src/core/community/posts.js';
import { RECENT_SIGN_IN_MS } from '../../src/core/accounts/sessions.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { fullWidth } from '../support/full-width.js';
import { PLAIN_PNG } from '../support/images.js';
import { Visitor, readOnlyField, signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';
const CSRF_MESSAGE = 'This form has expired or came from another site';
const PNG = Buffer.from(PLAIN_PNG);

forEachDatabase('site pages', (database) => {
  let t: TestApp;
  let counter = 0;

  before(async () => {
    t = await startTestApp(database);
  });
  after(async () => t.close());

  /** A new account and a browser signed in as it. */
  const member = () => signedInMember(t, `member${++counter}`, PASSWORD);

  async function postCount(userId: number): Promise<number> {
    const published = await t.deps.stores.posts.listPublishedByAuthor(userId, 0, 50);
    return published.total + (await t.deps.stores.posts.listDraftsByAuthor(userId)).length;
  }

  // ---- Sign-up ------------------------------------------------------------------------------

  test('sign-up creates an account and signs the new user in', async () => {
    const visitor = new Visitor(t.baseUrl);
    const form = await visitor.get('/signup');
    assert.equal(form.status, 200);
    assert.match(form.text, /<label for="username">/);
    const response = await visitor.post('/signup', { username: 'newcomer', password: 'a long and unusual passphrase' });
    assert.equal(response.status, 303);
    assert.equal(response.location, '/u/newcomer');
    assert.ok(await t.deps.stores.users.findByUsername('newcomer'));
    const settings = await visitor.get('/settings/tokens');
    assert.equal(settings.status, 200, 'signed in after sign-up');
  });

  test('sign-up refuses bad usernames and passwords with a message, storing nothing', async () => {
    await createAccount(t.deps.stores, t.clock, { username: 'TakenName', password: PASSWORD });
    const cases: Array<[string, string, RegExp, number]> = [
      ['', PASSWORD, /Use 3 to 30 letters/, 400],
      ['ab', PASSWORD, /Use 3 to 30 letters/, 400],
      ['x'.repeat(31), PASSWORD, /Use 3 to 30 letters/, 400],
      ['bad name!', PASSWORD, /Use 3 to 30 letters/, 400],
      ['<script>', PASSWORD, /Use 3 to 30 letters/, 400],
      ['takenname', PASSWORD, /That username is taken/, 409],
      ['fresh-user', '', /Use 8 to 256 characters/, 400],
      ['fresh-user', 'short', /Use 8 to 256 characters/, 400],
      ['fresh-user', 'p'.repeat(257), /Use 8 to 256 characters/, 400],
      ['fresh-user', 'password1', /most common passwords/, 400],
      ['fresh-user', 'Football', /most common passwords/, 400],
      ['fresh-user-1', 'Fresh-User-1', /Your password cannot be your username/, 400],
      ['fresh-user', ' '.repeat(12), /A password cannot be only spaces or invisible characters/, 400],
      ['admin', PASSWORD, /That username is reserved/, 400],
      ['Sup-port', PASSWORD, /That username is reserved/, 400],
      ['community', PASSWORD, /That username is reserved/, 400],
    ];
    for (const [username, password, message, status] of cases) {
      const visitor = new Visitor(t.baseUrl);
      const response = await visitor.post('/signup', { username, password });
      assert.equal(response.status, status, `${username}/${password.slice(0, 10)}`);
      assert.match(response.text, message);
      assert.match(response.text, /role="alert"/);
      assert.ok(!response.text.includes('<script>'), 'the username is escaped when shown back');
    }
    assert.equal(await t.deps.stores.users.findByUsername('fresh-user'), undefined);
    assert.equal(await t.deps.stores.users.findByUsername('bad name!'), undefined);
  });

  test('a username typed in full-width letters, as a Chinese input method in full-width mode types it, signs up as the ASCII username it reads as, the one sign-in reads', async () => {
    const typed = fullWidth('Wide-Name1');
    const visitor = new Visitor(t.baseUrl);
    const response = await visitor.post('/signup', { username: typed, password: 'a long and unusual passphrase' });
    assert.equal(response.status, 303, 'not "Use 3 to 30 letters"');
    assert.equal(response.location, '/u/Wide-Name1');
    assert.equal((await t.deps.stores.users.findByUsername('wide-name1'))?.username, 'Wide-Name1', 'stored as it reads after NFKC');
    const reserved = await new Visitor(t.baseUrl).post('/signup', { username: fullWidth('admin'), password: PASSWORD });
    assert.match(reserved.text, /That username is reserved/, 'read before the reserved names are');
    const signIn = new Visitor(t.baseUrl);
    assert.equal((await signIn.post('/login', { username: typed, password: 'a long and unusual passphrase' })).status, 303, 'signs in as typed at sign-up');
  });

  // ---- CSRF on every form -------------------------------------------------------------------

  test('every form refuses a missing or forged CSRF token and changes nothing', async () => {
    const { user, visitor } = await member();
    const post = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'Hello', body: 'Body', category: 'General', status: 'published' });
    const { record } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'kept', scopes: ['profile:read'], expiresInDays: 30 });
    const { client } = await registerClient(t.deps.stores, t.clock, { name: 'Mine', type: 'confidential', redirectUris: ['https://app.example/cb'], ownerId: user.id });
    const forms: Array<[string, Record<string, string>]> = [
      ['/signup', { username: 'csrf-victim', password: PASSWORD }],
      ['/posts/new', { title: 'Forged', body: 'Forged', category: 'General', status: 'published' }],
      [`/posts/${post.id}/like`, {}],
      [`/posts/${post.id}/comments`, { comment: 'Forged' }],
      [`/posts/${post.id}/edit`, { title: 'Forged', body: 'Forged', category: 'General', status: 'published' }],
      [`/posts/${post.id}/publish`, {}],
      [`/posts/${post.id}/delete`, { confirm: 'delete' }],
      ['/settings/tokens', { name: 'forged', scopes: 'profile:read', expires_in_days: '30', password: PASSWORD }],
      ['/settings/tokens/revoke', { token_id: String(record.id), confirm: 'yes' }],
      ['/settings/applications/revoke', { client_id: client.clientId }],
      ['/settings/applications/revoke-all', { confirm: 'yes' }],
      ['/settings/profile', { bio: 'forged' }],
      ['/settings/account/data', { password: PASSWORD }],
      ['/settings/account/delete', { confirm: 'yes', password: PASSWORD }],
      ['/settings/developers', { name: 'Forged', redirect_uris: 'https://x.example/cb', type: 'public' }],
      [`/settings/developers/${client.clientId}/details`, { name: 'Forged', description: '', homepage: 'https://evil.example/' }],
      [`/settings/developers/${client.clientId}/redirect-uris`, { redirect_uris: 'https://evil.example/cb' }],
      [`/settings/developers/${client.clientId}/logout-uris`, { post_logout_redirect_uris: 'https://evil.example/bye', backchannel_logout_uri: 'https://evil.example/bc' }],
      [`/settings/developers/${client.clientId}/rotate-secret`, { confirm: 'yes' }],
      [`/settings/developers/${client.clientId}/deactivate`, { confirm: 'yes' }],
    ];
    for (const [path, fields] of forms) {
      for (const csrf of [null, 'forged-token-forged-token-forged-token-abcd']) {
        const response = await visitor.post(path, fields, { csrf });
        assert.equal(response.status, 403, `${path} with ${csrf === null ? 'no' : 'a forged'} token`);
        assert.match(response.text, new RegExp(CSRF_MESSAGE));
      }
    }
    const fromOtherSite = await visitor.request('/posts/new', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ _csrf: await visitor.csrf(), title: 'x', body: 'x', category: 'x' }),
    });
    assert.equal(fromOtherSite.status, 403, 'a post from another origin');

    assert.equal(await t.deps.stores.users.findByUsername('csrf-victim'), undefined);
    assert.equal(await postCount(user.id), 1);
    const after = await t.deps.stores.posts.findById(post.id);
    assert.equal(after?.likeCount, 0);
    assert.equal(after?.commentCount, 0);
    assert.deepEqual([after?.title, after?.body], ['Hello', 'Body'], 'neither edited nor deleted');
    const tokens = await t.deps.stores.personalTokens.listForUser(user.id);
    assert.deepEqual(tokens.map((x) => [x.name, x.revokedAt]), [['kept', null]]);
    const clients = await t.deps.stores.clients.listByOwner(user.id);
    assert.equal(clients.length, 1);
    assert.deepEqual(clients[0]?.redirectUris, ['https://app.example/cb']);
    assert.deepEqual([clients[0]?.postLogoutRedirectUris, clients[0]?.backchannelLogoutUri], [[], null]);
    assert.equal(clients[0]?.secretHash, client.secretHash);
    assert.equal(clients[0]?.status, 'active');
    const account = await t.deps.stores.users.findById(user.id);
    assert.deepEqual([account?.status, account?.bio], ['active', ''], 'neither deleted nor edited');

    const avatarForm = new FormData();
    avatarForm.append('_csrf', 'forged');
    avatarForm.append('avatar', new Blob([PNG], { type: 'image/png' }), 'a.png');
    const avatar = await visitor.request('/settings/profile/avatar', { method: 'POST', body: avatarForm });
    assert.equal(avatar.status, 403);
    assert.equal(await t.deps.stores.users.findAvatar(user.id), undefined);
  });

  test('settings pages and writing need a sign-in and come back after it', async () => {
    const visitor = new Visitor(t.baseUrl);
    for (const path of ['/settings/tokens', '/settings/applications', '/settings/developers', '/settings/profile', '/posts/new']) {
      const response = await visitor.get(path);
      assert.equal(response.status, 303, path);
      assert.equal(response.location, `/login?return_to=${encodeURIComponent(path)}`);
    }
    const post = await visitor.post('/posts/new', { title: 'x', body: 'y', category: 'z' });
    assert.equal(post.status, 303);
    assert.match(post.location ?? '', /^\/login\?return_to=/);
  });

  // ---- Posts ----------------------------------------------------------------------------------

  test('writing a post publishes it, or keeps a draft that only its author can see', async () => {
    const { user, visitor } = await member();
    const published = await visitor.post('/posts/new', { title: 'My first post', category: 'Photography', body: 'One.\n\nTwo.', status: 'published' });
    assert.equal(published.status, 303);
    const page = await new Visitor(t.baseUrl).get(published.location!);
    assert.equal(page.status, 200);
    assert.match(page.text, /My first post/);
    assert.match(page.text, /<p>One.<\/p>\s*<p>Two.<\/p>/);
    assert.match(page.text, /Photography/);

    const draft = await visitor.post('/posts/new', { title: 'Secret draft', category: 'Photography', body: 'Not yet', status: 'draft' });
    assert.equal(draft.status, 303);
    const own = await visitor.get(draft.location!);
    assert.equal(own.status, 200);
    assert.match(own.text, /only you can see/);
    assert.equal((await new Visitor(t.baseUrl).get(draft.location!)).status, 404, 'anonymous');
    const { visitor: other } = await member();
    assert.equal((await other.get(draft.location!)).status, 404, 'another member');
    const profile = await other.get(`/u/${user.username}`);
    assert.match(profile.text, /My first post/);
    assert.ok(!profile.text.includes('Secret draft'));
    assert.match((await visitor.get(`/u/${user.username}`)).text, /Secret draft/, 'the author sees drafts on the profile');
    const id = Number(draft.location!.split('/').pop());
    assert.equal((await other.post(`/posts/${id}/like`, {})).status, 404, 'a draft cannot be liked by others');
  });

  test('writing a post refuses bad input with a message, storing nothing', async () => {
    const { user, visitor } = await member();
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ title: '', category: 'General', body: 'Body' }, /Title: Use 1 to 120 characters\./],
      [{ title: '   ', category: 'General', body: 'Body' }, /Title: Use 1 to 120 characters\./],
      [{ title: 't'.repeat(121), category: 'General', body: 'Body' }, /Title: Use 1 to 120 characters\./],
      [{ title: 'Title', category: 'General', body: '' }, /Text: Use 1 to 20000 characters\./],
      [{ title: 'Title', category: 'General', body: 'b'.repeat(20_001) }, /Text: Use 1 to 20000 characters\./],
      [{ title: 'Title', category: '', body: 'Body' }, /Category: Use 1 to 40 characters\./],
      [{ title: 'Title', category: 'c'.repeat(41), body: 'Body' }, /Category: Use 1 to 40 characters\./],
      // PostgreSQL text cannot hold NUL: refused as input, never a failed insert.
      [{ title: 'Ti\u0000tle', category: 'General', body: 'Body' }, /Title: Remove the control characters\./],
      [{ title: 'Title', category: '\u0000', body: 'Body' }, /Category: Remove the control or invisible characters\./],
      [{ title: 'Title', category: 'General', body: 'Bo\u0000dy' }, /Text: Remove the control characters\./],
      [{ title: 'Two\nlines', category: 'General', body: 'Body' }, /Title: Remove the control characters\./],
      // Bodies made to multiply into a page of megabytes (issue 16: one post must not weigh on every view).
      [{ title: 'Title', category: 'General', body: `|${'a|'.repeat(20)}\n|${'-|'.repeat(20)}\n${'a\n'.repeat(1500)}` }, /Text: This makes a page of more than 256 KB\./],
      // Bodies made to cost seconds of the server's time to lay out (src/core/community/markdown-work.ts);
      // a table's filled-in cells are work before they are a page's size, and a link's target is
      // written at every use of its reference.
      [{ title: 'Title', category: 'General', body: `[a]: /${'x'.repeat(2000)}\n\n${'[a] '.repeat(4000)}` }, /Text: This takes too much work to lay out\./],
      [{ title: 'Title', category: 'General', body: `${'|a'.repeat(2500)}|\n${'|-'.repeat(2500)}|\n${'x\n'.repeat(3000)}` }, /Text: This takes too much work to lay out\./],
      [{ title: 'Title', category: 'General', body: `${'!['.repeat(50)}${'['.repeat(49)}${'*'.repeat(19_602)}${']'.repeat(49)}${'](u)'.repeat(50)}` }, /Text: This takes too much work to lay out\./],
      [{ title: 'Title', category: 'General', body: `|${'a|'.repeat(181)}\n|${'-|'.repeat(181)}\n${'a\n'.repeat(362)}\n`.repeat(13) }, /Text: This takes too much work to lay out\./],
    ];
    for (const [fields, message] of cases) {
      const response = await visitor.post('/posts/new', { ...fields, status: 'published' });
      assert.equal(response.status, 400);
      assert.match(response.text, message);
    }
    assert.equal(await postCount(user.id), 0);
  });

  test('a post page counts a view, shows the body as text, and lets members like once and comment', async () => {
    const { user } = await member();
    const post = await writePost(t.deps.stores, t.clock, {
      authorId: user.id, title: '<b>Bold?</b>', body: '<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>', category: 'Tests', status: 'published',
    });
    const anonymous = new Visitor(t.baseUrl);
    const page = await anonymous.get(`/posts/${post.id}`);
    assert.equal(page.status, 200);
    assert.ok(!page.text.includes('<script>alert'), 'no raw markup from the body');
    assert.ok(!page.text.includes('<img src=x'), 'no raw markup from the body');
    assert.match(page.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(page.text, /&lt;b&gt;Bold\?&lt;\/b&gt;/);
    assert.match(page.text, /<span>1 view<\/span>/, 'the page shows the view it counted');
    await t.deps.views.flush(t.deps.stores);
    assert.equal((await t.deps.stores.posts.findById(post.id))?.viewCount, 1);
    assert.equal((await anonymous.post(`/posts/${post.id}/like`, {})).status, 303, 'anonymous is sent to sign in');
    assert.equal((await t.deps.stores.posts.findById(post.id))?.likeCount, 0);

    const { visitor } = await member();
    assert.equal((await visitor.post(`/posts/${post.id}/like`, {})).status, 303);
    assert.equal((await visitor.post(`/posts/${post.id}/like`, {})).status, 303);
    assert.equal((await t.deps.stores.posts.findById(post.id))?.likeCount, 1, 'one like per member');
    assert.equal((await visitor.post(`/posts/${post.id}/comments`, { comment: 'Nice <b>shot</b>' })).status, 303);
    const tooShortOrLong = /Use 1 to 2000 characters\./;
    for (const [comment, message] of [['', tooShortOrLong], ['   ', tooShortOrLong], ['c'.repeat(2001), tooShortOrLong], ['nul \u0000 inside', /Remove the control characters\./]] as const) {
      const bad = await visitor.post(`/posts/${post.id}/comments`, { comment });
      assert.equal(bad.status, 400);
      assert.match(bad.text, message);
    }
    const after = await t.deps.stores.posts.findById(post.id);
    assert.equal(after?.commentCount, 1);
    const shown = await visitor.get(`/posts/${post.id}`);
    assert.match(shown.text, /Nice &lt;b&gt;shot&lt;\/b&gt;/);
    assert.equal((await anonymous.get('/posts/999999')).status, 404);
    assert.equal((await anonymous.get('/posts/abc')).status, 404);
  });

  test('a post body is Markdown: **first** is shown bold on the post page', async () => {
    const { visitor } = await member();
    const written = await visitor.post('/posts/new', {
      title: 'Markdown', category: 'Tests', status: 'published',
      body: '## Notes\n\n**first** and *second*, `code` and [a link](https://example.com/x).\n\n- one\n- two',
    });
    assert.equal(written.status, 303);
    const page = await new Visitor(t.baseUrl).get(written.location!);
    assert.equal(page.status, 200);
    const body = /<div class="post-body">([\s\S]*?)<\/div>/.exec(page.text)?.[1] ?? '';
    assert.match(body, /<h2>Notes<\/h2>/);
    assert.match(body, /<strong>first<\/strong> and <em>second<\/em>, <code>code<\/code>/);
    assert.match(body, /<a href="https:\/\/example\.com\/x" rel="nofollow ugc noopener">a link<\/a>/);
    assert.match(body, /<ul>\n<li>one<\/li>\n<li>two<\/li>\n<\/ul>/);
    assert.ok(!body.includes('**'), 'no Markdown left as text');
  });

  test('HTML in a post body is shown as text on the post page: <em>x</em> stays escaped', async () => {
    const { visitor } = await member();
    const written = await visitor.post('/posts/new', {
      title: 'HTML', category: 'Tests', status: 'published',
      body: '<em>x</em> and <a href="javascript:alert(1)" onclick="alert(2)">y</a>\n\n[z](javascript:alert(3))',
    });
    assert.equal(written.status, 303);
    const page = await new Visitor(t.baseUrl).get(written.location!);
    const body = /<div class="post-body">([\s\S]*?)<\/div>/.exec(page.text)?.[1] ?? '';
    assert.match(body, /&lt;em&gt;x&lt;\/em&gt; and &lt;a href=&quot;javascript:alert\(1\)&quot; onclick=&quot;alert\(2\)&quot;&gt;y&lt;\/a&gt;/);
    assert.match(body, /\[z\]\(javascript:alert\(3\)\)/, 'a javascript: link stays text');
    assert.doesNotMatch(body, /<em>|<a /);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  });

  test('a post card on the home page and the profile shows the excerpt stored with the post, not its Markdown', async () => {
    const { user, visitor } = await member();
    const written = await visitor.post('/posts/new', { title: 'Card', category: 'Tests', status: 'published', body: '# Heading\n\nA **card** body.' });
    assert.equal(written.status, 303);
    const id = Number(written.location!.split('/').pop());
    for (const path of ['/', `/u/${user.username}`]) {
      const page = await new Visitor(t.baseUrl).get(path);
      const card = new RegExp(`<a href="/posts/${id}">Card</a></h2>[\\s\\S]*?<p>([^<]*)</p>`).exec(page.text)?.[1];
      assert.equal(card, 'Heading A card body.', path);
    }
  });

  test('profiles resolve for active users only, case-insensitively', async () => {
    const { user } = await member();
    const visitor = new Visitor(t.baseUrl);
    const page = await visitor.get(`/u/${user.username.toUpperCase()}`);
    assert.equal(page.status, 200);
    assert.match(page.text, new RegExp(`<h1><bdi>${user.username}</bdi></h1>`));
    assert.match(page.text, /Level 1/);
    assert.equal((await visitor.get('/u/nobody-here')).status, 404);
    assert.equal((await visitor.get('/u/%00')).status, 404, 'a NUL names nobody');
    await t.deps.stores.users.setStatus(user.id, 'banned', t.clock.now());
    assert.equal((await visitor.get(`/u/${user.username}`)).status, 404);
  });

  // ---- Avatars --------------------------------------------------------------------------------

  test('every user has an avatar: a generated SVG until an image is uploaded', async () => {
    const { user, visitor } = await member();
    const generated = await visitor.get(`/avatars/${user.id}`);
    assert.equal(generated.status, 200);
    assert.equal(generated.headers.get('content-type'), 'image/svg+xml');
    assert.equal(generated.headers.get('x-content-type-options'), 'nosniff');
    assert.match(generated.text, /<svg[^>]*>.*>M<\/text><\/svg>$/);
    assert.equal((await visitor.get('/avatars/999999')).status, 404);

    const form = new FormData();
    form.append('_csrf', await visitor.csrf());
    // Near the limit, and far above the 64 KB limit of ordinary form bodies; what follows IEND is
    // not part of the image, and is not stored: the image is encoded anew (avatar-upload.test.ts).
    const large = Buffer.concat([PNG, Buffer.alloc(500 * 1024 - PNG.length)]);
    form.append('avatar', new Blob([large], { type: 'text/plain' }), 'me.png');
    const upload = await visitor.request('/settings/profile/avatar', { method: 'POST', body: form });
    assert.equal(upload.status, 303);
    const served = await fetch(`${t.baseUrl}/avatars/${user.id}`);
    assert.equal(served.headers.get('content-type'), 'image/png', 'the type comes from the bytes, not the upload');
    assert.equal(served.headers.get('x-content-type-options'), 'nosniff');
    assert.ok((await served.arrayBuffer()).byteLength < 1024, 'the image alone');
  });

  test('an avatar upload that is not an image, empty or too large is refused with a message', async () => {
    const { user, visitor } = await member();
    const cases: Array<[Blob | null, RegExp]> = [
      [new Blob(['<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'], { type: 'image/png' }), /must be a PNG, JPEG, WebP or GIF/],
      [new Blob(['GIF8 not really']), /must be a PNG, JPEG, WebP or GIF/],
      [new Blob([]), /choose an image file|Choose an image file/],
      [new Blob([PNG, Buffer.alloc(600 * 1024)], { type: 'image/png' }), /at most 512 KB/],
      [null, /Choose an image file/],
    ];
    for (const [blob, message] of cases) {
      const form = new FormData();
      form.append('_csrf', await visitor.csrf());
      if (blob) form.append('avatar', blob, 'file.png');
      const response = await visitor.request('/settings/profile/avatar', { method: 'POST', body: form });
      assert.equal(response.status, 400, String(message));
      assert.match(response.text, message);
    }
    assert.equal(await t.deps.stores.users.findAvatar(user.id), undefined);
  });

  // ---- API tokens -----------------------------------------------------------------------------

  test('a personal token is created after the password, shown once, listed and revoked', async () => {
    const { user, visitor } = await member();
    const posted = await visitor.post('/settings/tokens', { name: 'backup script', scopes: ['profile:read', 'posts:read'], expires_in_days: '30', password: PASSWORD });
    assert.equal(posted.status, 303);
    const created = await visitor.get(posted.location!);
    const token = readOnlyField(created.text, 'new-token');
    assert.match(token ?? '', /^svcp_/);
    const bearer = await t.deps.stores.personalTokens.findBearer(hashSecret(token!));
    assert.equal(bearer?.user.id, user.id);
    assert.equal(bearer?.scope, 'profile:read posts:read');
    assert.equal(bearer?.expiresAt, t.clock.now() + 30 * 86_400_000);

    const list = await visitor.get('/settings/tokens');
    assert.ok(!list.text.includes(token!), 'shown once only');
    assert.match(list.text, /backup script/);
    const [record] = await t.deps.stores.personalTokens.listForUser(user.id);
    const revoked = await visitor.post('/settings/tokens/revoke', { token_id: String(record!.id), confirm: 'yes' });
    assert.equal(revoked.status, 303);
    assert.notEqual((await t.deps.stores.personalTokens.findBearer(hashSecret(token!)))?.revokedAt, null);

    const none = await visitor.post('/settings/tokens', { name: 'forever', scopes: 'posts:read', expires_in_days: 'none', password: PASSWORD });
    assert.equal(none.status, 303);
    const shown = readOnlyField((await visitor.get(none.location!)).text, 'new-token');
    assert.equal((await t.deps.stores.personalTokens.findBearer(hashSecret(shown!)))?.expiresAt, null);
  });

  test('a personal token form with bad input shows a message and stores nothing', async () => {
    const { user, visitor } = await member();
    const good = { name: 'ok', scopes: ['profile:read'], expires_in_days: '90', password: PASSWORD };
    const cases: Array<[Record<string, string | string[]>, RegExp]> = [
      [{ ...good, password: '' }, /Enter your password/],
      [{ ...good, password: 'wrong password' }, /That password is not right/],
      [{ ...good, name: '' }, /Name: Use 1 to 60 characters/],
      [{ ...good, name: 'n'.repeat(61) }, /Name: Use 1 to 60 characters/],
      [{ ...good, name: 'n\u0000' }, /Name: Remove the control characters/],
      [{ ...good, scopes: [] }, /Choose at least one scope/],
      [{ ...good, scopes: ['openid'] }, /Unknown scope openid/],
      [{ ...good, scopes: ['admin:write'] }, /Unknown scope admin:write/],
      [{ ...good, expires_in_days: '14' }, /Expiry must be 7, 30, 90 or 365 days, or none/],
      [{ ...good, expires_in_days: 'soon' }, /Expiry must be 7, 30, 90 or 365 days, or none/],
    ];
    for (const [fields, message] of cases) {
      const response = await visitor.post('/settings/tokens', fields);
      assert.equal(response.status, 400, String(message));
      assert.match(response.text, message);
      assert.equal(readOnlyField(response.text, 'new-token'), undefined);
    }
    assert.deepEqual(await t.deps.stores.personalTokens.listForUser(user.id), []);
    const { visitor: other } = await member();
    const [kept] = [await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'mine', scopes: ['posts:read'], expiresInDays: 7 })];
    const foreign = await other.post('/settings/tokens/revoke', { token_id: String(kept.record.id) });
    assert.equal(foreign.status, 404, "another user's token cannot be revoked");
    assert.equal((await other.post('/settings/tokens/revoke', { token_id: 'abc' })).status, 404);
    assert.equal((await t.deps.stores.personalTokens.listForUser(user.id))[0]?.revokedAt, null);
  });

  // ---- Authorized applications ---------------------------------------------------------------

  test('revoking an authorized app withdraws the consent and ends every token of its grants', async () => {
    const { user, visitor } = await member();
    const { client } = await registerClient(t.deps.stores, t.clock, { name: 'Photo Printer', type: 'confidential', redirectUris: ['https://printer.example/cb'], homepageUrl: 'https://printer.example' });
    const now = t.clock.now();
    await t.deps.stores.consents.save(user.id, client.clientId, 'profile:read posts:read', now);
    const grant = await t.deps.stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 'profile:read posts:read', nonce: null, authTime: now }, now);
    const tokenHash = hashSecret('svco_test_access_token_for_revocation');
    await t.deps.stores.tokens.insertAccess({ tokenHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: grant.scope, createdAt: now, expiresAt: now + 3_600_000 });

    const page = await visitor.get('/settings/applications');
    assert.match(page.text, /Photo Printer/);
    assert.match(page.text, /Nickname, avatar, bio, membership status, level and experience points\./);
    assert.match(page.text, new RegExp(`name="client_id" value="${client.clientId}"`));

    const revoked = await visitor.post('/settings/applications/revoke', { client_id: client.clientId });
    assert.equal(revoked.status, 303);
    assert.equal(await t.deps.stores.consents.find(user.id, client.clientId), undefined);
    assert.notEqual((await t.deps.stores.grants.findById(grant.id))?.revokedAt, null);
    assert.notEqual((await t.deps.stores.tokens.findAccessBearer(tokenHash))?.revokedAt, null);
    assert.ok(!(await visitor.get('/settings/applications')).text.includes('Photo Printer'));
  });

  test('revoking access to an app the user never authorized shows a message and touches nothing', async () => {
    const { user, visitor } = await member();
    const { user: owner } = await member();
    const { client } = await registerClient(t.deps.stores, t.clock, { name: 'Other', type: 'public', redirectUris: ['https://o.example/cb'] });
    await t.deps.stores.consents.save(owner.id, client.clientId, 'posts:read', t.clock.now());
    // NUL: PostgreSQL text cannot hold it, so such a value must never reach a query.
    for (const clientId of ['', 'no-such-client', client.clientId, 'x'.repeat(500), '\u0000', `${client.clientId}\u0000`]) {
      const response = await visitor.post('/settings/applications/revoke', { client_id: clientId });
      assert.equal(response.status, 404);
      assert.match(response.text, /nothing to revoke/);
    }
    assert.ok(await t.deps.stores.consents.find(owner.id, client.clientId), "another user's consent is kept");
    assert.deepEqual(await t.deps.stores.consents.listForUser(user.id), []);
  });

  // ---- Developer applications ----------------------------------------------------------------

  test('a developer registers an app, sees its secret once, rotates it, edits redirect URIs and deactivates it', async () => {
    const { user, visitor } = await member();
    const created = await visitor.post('/settings/developers', {
      name: 'My App', description: 'Does things', homepage: 'https://myapp.example', redirect_uris: 'https://myapp.example/cb\r\nhttp://127.0.0.1/cb', type: 'confidential',
    });
    assert.equal(created.status, 303);
    const [client] = await t.deps.stores.clients.listByOwner(user.id);
    assert.ok(client);
    assert.equal(created.location, `/settings/developers/${client.clientId}?notice=registered`);
    assert.deepEqual(client.redirectUris, ['https://myapp.example/cb', 'http://127.0.0.1/cb']);
    const secret = readOnlyField((await visitor.get(created.location!)).text, 'client-secret');
    assert.match(secret ?? '', /^svcs_/);
    assert.equal(client.secretHash, hashSecret(secret!));
    assert.ok(!(await visitor.get(`/settings/developers/${client.clientId}`)).text.includes(secret!), 'shown once');

    const rotated = await visitor.post(`/settings/developers/${client.clientId}/rotate-secret`, { confirm: 'yes' });
    assert.equal(rotated.status, 303);
    const newSecret = readOnlyField((await visitor.get(rotated.location!)).text, 'client-secret');
    assert.ok(newSecret && newSecret !== secret);
    assert.equal((await t.deps.stores.clients.findById(client.clientId))?.secretHash, hashSecret(newSecret));

    const edited = await visitor.post(`/settings/developers/${client.clientId}/redirect-uris`, { redirect_uris: 'https://myapp.example/callback' });
    assert.equal(edited.status, 303);
    assert.deepEqual((await t.deps.stores.clients.findById(client.clientId))?.redirectUris, ['https://myapp.example/callback']);

    const { visitor: stranger } = await member();
    assert.equal((await stranger.get(`/settings/developers/${client.clientId}`)).status, 404);
    assert.equal((await stranger.post(`/settings/developers/${client.clientId}/rotate-secret`, { confirm: 'yes' })).status, 404);
    assert.equal((await stranger.post(`/settings/developers/${client.clientId}/deactivate`, { confirm: 'yes' })).status, 404);
    assert.equal((await stranger.post(`/settings/developers/${client.clientId}/redirect-uris`, { redirect_uris: 'https://evil.example/cb' })).status, 404);
    assert.equal((await t.deps.stores.clients.findById(client.clientId))?.status, 'active');
    assert.equal((await visitor.get(`/settings/developers/${client.clientId}%00`)).status, 404, 'a NUL in the address names no app');

    const deactivated = await visitor.post(`/settings/developers/${client.clientId}/deactivate`, { confirm: 'yes' });
    assert.equal(deactivated.status, 303);
    assert.equal((await t.deps.stores.clients.findById(client.clientId))?.status, 'deactivated');
    assert.equal((await visitor.post(`/settings/developers/${client.clientId}/rotate-secret`, { confirm: 'yes' })).status, 400);
  });

  test('changing an app needs a sign-in of the last 15 minutes: an older one is sent to sign in again and changes nothing', async () => {
    const { user, visitor } = await member();
    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: 'Sudo App', redirectUris: ['https://sudo.example/cb'], type: 'confidential', ownerId: user.id,
    });
    const page = `/settings/developers/${client.clientId}`;
    const again = `/login?reauth=1&return_to=${encodeURIComponent(page)}`;
    assert.doesNotMatch((await visitor.get(page)).text, /Sign in again/, 'a fresh sign-in is asked nothing');
    t.clock.advance(RECENT_SIGN_IN_MS + 1000);
    assert.match((await visitor.get(page)).text, /needs a sign-in from the last 15 minutes/, 'the page says so before a form is sent');
    const changes: Array<[string, Record<string, string>]> = [
      ['details', { name: 'Sudo App Official', description: '', homepage: 'https://evil.example/' }],
      ['redirect-uris', { redirect_uris: 'https://evil.example/cb' }],
      ['logout-uris', { post_logout_redirect_uris: 'https://evil.example/bye', backchannel_logout_uri: '' }],
      ['pushed-requests', { require_pushed_authorization_requests: '1' }],
      ['rotate-secret', { confirm: 'yes' }],
      ['deactivate', { confirm: 'yes' }],
    ];
    for (const [action, fields] of changes) {
      const refused = await visitor.post(`${page}/${action}`, fields);
      assert.equal(refused.status, 303, action);
      assert.equal(refused.location, again, action);
    }
    assert.deepEqual(await t.deps.stores.clients.findById(client.clientId), client, 'nothing changed');
    assert.match((await visitor.get(again)).text, /This change needs a sign-in from the last 15 minutes/);
    const wrong = await visitor.post('/login', { username: user.username, password: 'not the password', return_to: page, reauth: '1' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /This change needs a sign-in from the last 15 minutes/, 'a wrong password keeps saying why');
    await visitor.signIn(user.username, PASSWORD);
    const edited = await visitor.post(`${page}/redirect-uris`, { redirect_uris: 'https://sudo.example/callback' });
    assert.equal(edited.status, 303, 'signed in again: allowed');
    assert.deepEqual((await t.deps.stores.clients.findById(client.clientId))?.redirectUris, ['https://sudo.example/callback']);
  });

  test('a developer registers post-logout redirect URIs and a back-channel logout URI, edits and clears them; another owner cannot', async () => {
    const { user, visitor } = await member();
    const form = await visitor.get('/settings/developers');
    assert.match(form.text, /name="post_logout_redirect_uris"/);
    assert.match(form.text, /name="backchannel_logout_uri"/);
    const created = await visitor.post('/settings/developers', {
      name: 'Logout App', redirect_uris: 'https://logout.example/cb', type: 'public',
      post_logout_redirect_uris: 'https://logout.example/bye\r\nhttp://127.0.0.1/bye', backchannel_logout_uri: 'https://logout.example/bc',
    });
    assert.equal(created.status, 303);
    const [client] = await t.deps.stores.clients.listByOwner(user.id);
    assert.deepEqual([client?.postLogoutRedirectUris, client?.backchannelLogoutUri], [['https://logout.example/bye', 'http://127.0.0.1/bye'], 'https://logout.example/bc']);
    const page = await visitor.get(`/settings/developers/${client!.clientId}`);
    assert.match(page.text, /<h2 id="logout-heading">Sign-out<\/h2>/);
    assert.match(page.text, /value="https:\/\/logout.example\/bc"/);

    const edited = await visitor.post(`/settings/developers/${client!.clientId}/logout-uris`, {
      post_logout_redirect_uris: 'https://logout.example/signed-out', backchannel_logout_uri: 'http://localhost:4000/bc',
    });
    assert.equal(edited.status, 303);
    assert.equal(edited.location, `/settings/developers/${client!.clientId}?notice=logout-uris`);
    let stored = await t.deps.stores.clients.findById(client!.clientId);
    assert.deepEqual([stored?.postLogoutRedirectUris, stored?.backchannelLogoutUri], [['https://logout.example/signed-out'], 'http://localhost:4000/bc']);
    assert.match((await visitor.get(edited.location!)).text, /Sign-out settings saved/);

    const { visitor: stranger } = await member();
    assert.equal((await stranger.post(`/settings/developers/${client!.clientId}/logout-uris`, { post_logout_redirect_uris: 'https://evil.example/', backchannel_logout_uri: '' })).status, 404);

    const cleared = await visitor.post(`/settings/developers/${client!.clientId}/logout-uris`, { post_logout_redirect_uris: '', backchannel_logout_uri: '' });
    assert.equal(cleared.status, 303);
    stored = await t.deps.stores.clients.findById(client!.clientId);
    assert.deepEqual([stored?.postLogoutRedirectUris, stored?.backchannelLogoutUri], [[], null]);
  });

  test('each change to an app\'s redirect URIs, sign-out addresses or pushed-request setting is in its owner\'s security log and the audit log, with what was saved; the same values saved again are no event', async () => {
    const { user, visitor } = await member();
    assert.equal((await visitor.post('/settings/developers', { name: 'Logged App', redirect_uris: 'https://logged.example/cb', type: 'public' })).status, 303);
    const [client] = await t.deps.stores.clients.listByOwner(user.id);
    const page = `/settings/developers/${client!.clientId}`;
    const changes: Array<[string, Record<string, string>]> = [
      ['redirect-uris', { redirect_uris: 'https://logged.example/cb\nhttps://logged.example/other' }],
      ['logout-uris', { post_logout_redirect_uris: 'https://logged.example/bye', backchannel_logout_uri: 'https://logged.example/bc' }],
      ['pushed-requests', { require_pushed_authorization_requests: '1' }],
    ];
    // Each saved twice: the same values again change nothing, and are no event.
    for (const [form, fields] of [...changes, ...changes]) assert.equal((await visitor.post(`${page}/${form}`, fields)).status, 303, form);
    const events = (await t.deps.stores.securityEvents.listForUser(user.id, 0, 4)).items.filter((event) => event.kind.startsWith('client.')).map((event) => [event.kind, event.detail]);
    const detail = { app: 'Logged App', client_id: client!.clientId };
    assert.deepEqual(events, [['client.pushed_requests_changed', detail], ['client.logout_uris_changed', detail], ['client.redirect_uris_changed', detail]]);
    const audited = t.audit.filter((e) => 'clientId' in e && e.clientId === client!.clientId && e.audit !== 'client.registered');
    assert.deepEqual(audited.map((event) => ({ ...event, address: undefined })), [
      { audit: 'client.redirect_uris_changed', clientId: client!.clientId, ownerId: user.id, redirectUris: ['https://logged.example/cb', 'https://logged.example/other'], via: 'site', address: undefined },
      { audit: 'client.logout_uris_changed', clientId: client!.clientId, ownerId: user.id, postLogoutRedirectUris: ['https://logged.example/bye'], backchannelLogoutUri: 'https://logged.example/bc', via: 'site', address: undefined },
      { audit: 'client.pushed_requests_changed', clientId: client!.clientId, ownerId: user.id, required: true, via: 'site', address: undefined },
    ]);
    const shown = (await visitor.get('/settings/security')).text;
    for (const words of ['Application redirect URIs changed', 'Application sign-out addresses changed', 'Application pushed authorization request setting changed']) assert.ok(shown.includes(words), words);
  });

  test('bad post-logout redirect URIs or back-channel logout URIs are refused with a message, storing nothing', async () => {
    const { user, visitor } = await member();
    const good = { name: 'App', redirect_uris: 'https://app.example/cb', type: 'public' };
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ post_logout_redirect_uris: 'http://app.example/bye' }, /post-logout redirect URIs: .* must use https/i],
      [{ post_logout_redirect_uris: 'https://app.example/bye#x' }, /post-logout redirect URIs: .* has a fragment/i],
      [{ post_logout_redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/${i}`).join('\n') }, /Post-logout redirect URIs: At most 10 addresses/],
      [{ backchannel_logout_uri: 'http://app.example/bc' }, /back-channel logout URI: .* must use https, or http on a loopback host/i],
      [{ backchannel_logout_uri: 'https://app.example/bc#frag' }, /back-channel logout URI: .* has a fragment/i],
      [{ backchannel_logout_uri: 'https://user:pw@app.example/bc' }, /back-channel logout URI: .* contains credentials/i],
      [{ backchannel_logout_uri: 'com.example.app:/bc' }, /back-channel logout URI: .* must use https/i],
      [{ backchannel_logout_uri: 'not a url' }, /contains spaces|is not an absolute URL/],
    ];
    for (const [fields, message] of cases) {
      const response = await visitor.post('/settings/developers', { ...good, ...fields });
      assert.equal(response.status, 400, String(message));
      assert.match(response.text, message);
      assert.match(response.text, /aria-invalid="true"/);
    }
    assert.deepEqual(await t.deps.stores.clients.listByOwner(user.id), []);

    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: 'Kept', type: 'public', redirectUris: ['https://kept.example/cb'], ownerId: user.id, postLogoutRedirectUris: ['https://kept.example/bye'],
    });
    for (const [fields] of cases) {
      const response = await visitor.post(`/settings/developers/${client.clientId}/logout-uris`, { post_logout_redirect_uris: '', backchannel_logout_uri: '', ...fields });
      assert.equal(response.status, 400);
      assert.match(response.text, /role="alert"/);
    }
    const kept = await t.deps.stores.clients.findById(client.clientId);
    assert.deepEqual([kept?.postLogoutRedirectUris, kept?.backchannelLogoutUri], [['https://kept.example/bye'], null]);
  });

  test('registering an app with bad input shows a message and stores nothing', async () => {
    const { user, visitor } = await member();
    const good = { name: 'App', description: '', homepage: '', redirect_uris: 'https://app.example/cb', type: 'public' };
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ ...good, name: '' }, /Name: Use 1 to 80 characters/],
      [{ ...good, name: 'n'.repeat(81) }, /Name: Use 1 to 80 characters/],
      [{ ...good, description: 'd'.repeat(501) }, /Description: At most 500 characters/],
      [{ ...good, name: 'A\u0000pp' }, /Name: Remove the control or invisible characters/],
      [{ ...good, description: 'two\nlines are fine, \u0000 is not' }, /Description: Remove the control characters/],
      [{ ...good, homepage: 'javascript:alert(1)' }, /Homepage: Enter an http or https address/],
      [{ ...good, redirect_uris: '' }, /Redirect URIs: Enter at least one address/],
      [{ ...good, name: 'Good\u202eppA' }, /Name: Remove the control or invisible characters/],
      [{ ...good, name: 'Pay\u200bPal' }, /Name: Remove the control or invisible characters/],
      [{ ...good, description: 'Reads your posts \u202eetirw ton seod' }, /Description: Remove the control characters/],
      // The homepage is shown as text on the consent page too: an override would reorder the address read there.
      [{ ...good, homepage: 'https://evil.example/\u202eelpmaxe.knab//:sptth' }, /Homepage: Remove the control or invisible characters/],
      [{ ...good, homepage: 'https://evil.example/\u2067x' }, /Homepage: Remove the control or invisible characters/],
      [{ ...good, homepage: 'https://evil.example/\u200ex' }, /Homepage: Remove the control or invisible characters/],
      [{ ...good, redirect_uris: 'http://app.example/cb' }, /must use https, http on a loopback host, or an app.{1,5}s own scheme/],
      [{ ...good, redirect_uris: 'https://app.example/callback/ü' }, /outside ASCII/],
      [{ ...good, redirect_uris: 'myapp:/cb' }, /own scheme named by a reverse domain/],
      [{ ...good, redirect_uris: 'https://app.example/cb#frag' }, /has a fragment/],
      [{ ...good, redirect_uris: 'not a url' }, /contains spaces|is not an absolute URL/],
      [{ ...good, redirect_uris: 'app.example/cb' }, /is not an absolute URL/],
      [{ ...good, type: 'secret' }, /Type: Choose Confidential or Public/],
      [{ ...good, type: '' }, /Type: Choose Confidential or Public/],
    ];
    for (const [fields, message] of cases) {
      const response = await visitor.post('/settings/developers', fields);
      assert.equal(response.status, 400, String(message));
      assert.match(response.text, message);
    }
    assert.deepEqual(await t.deps.stores.clients.listByOwner(user.id), []);

    const { client } = await registerClient(t.deps.stores, t.clock, { name: 'Kept', type: 'public', redirectUris: ['https://kept.example/cb'], ownerId: user.id });
    for (const uris of ['', 'http://kept.example/cb', 'https://kept.example/cb#x']) {
      const response = await visitor.post(`/settings/developers/${client.clientId}/redirect-uris`, { redirect_uris: uris });
      assert.equal(response.status, 400);
      assert.match(response.text, /role="alert"/);
    }
    assert.deepEqual((await t.deps.stores.clients.findById(client.clientId))?.redirectUris, ['https://kept.example/cb']);
  });

  test('pages send the security headers', async () => {
    const response = await new Visitor(t.baseUrl).get('/signup');
    assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.match(response.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    const cookie = (await fetch(`${t.baseUrl}/signup`)).headers.getSetCookie().join('\n');
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
  });
});
