/**
 * The profile (issue 18 item 8) over real HTTP on each database: the bio, the avatar shown anew
 * at once (what an upload stores: avatar-upload.test.ts), and deleting the account, which needs the password or a second-factor code, ends
 * every credential, erases the records of the account's use and keeps the username reserved.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount, setAccountStatus } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { generateToken, hashSecret } from '../../src/core/credentials/formats.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { beginTotpEnrolment, confirmTotpEnrolment } from '../../src/core/accounts/two-step.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { PLAIN_PNG } from '../support/images.js';
import { Visitor, signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';
const PNG = Buffer.from(PLAIN_PNG);

forEachDatabase('the profile', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  const member = () => signedInMember(t, `profiled${++counter}`, PASSWORD);

  const avatarOn = (text: string) => /<img class="avatar" src="([^"]+)" alt="Your current avatar"/.exec(text)?.[1];
  const api = (token: string) => fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token}` } });

  test('the bio is edited on the profile page and shown on the public page and at the API', async () => {
    const { user, visitor } = await member();
    const saved = await visitor.post('/settings/profile', { bio: '  Photographer by the harbour  ' });
    assert.equal(saved.status, 303);
    assert.equal(saved.location, '/settings/profile?notice=profile');
    assert.match((await visitor.get(saved.location!)).text, /Your profile was saved[\s\S]*value="Photographer by the harbour"/);
    assert.match((await visitor.get(`/u/${user.username}`)).text, /<p>Photographer by the harbour<\/p>/);
    const { token } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'read', scopes: ['profile:read'], expiresInDays: 7 });
    assert.equal(((await (await api(token)).json()) as { bio: string }).bio, 'Photographer by the harbour');

    for (const [bio, message] of [['b'.repeat(161), /Bio: At most 160 characters/], ['two\nlines', /Bio: Remove the control characters/]] as const) {
      const refused = await visitor.post('/settings/profile', { bio });
      assert.equal(refused.status, 400);
      assert.match(refused.text, message);
      assert.match(refused.text, /id="bio"[^>]*aria-invalid="true"/);
    }
    assert.equal((await t.deps.stores.users.findById(user.id))?.bio, 'Photographer by the harbour', 'refused bios stored nothing');
    assert.equal((await visitor.post('/settings/profile', { bio: '' })).status, 303);
    assert.equal((await t.deps.stores.users.findById(user.id))?.bio, '', 'an empty bio clears it');
  });

  test('the public page says the day a member joined, as their language writes a date alone, in the reader\'s zone, its time element carrying the UTC instant', async () => {
    const { user } = await member();
    const page = async (language: string) => (await fetch(`${t.baseUrl}/u/${user.username}`, { headers: { 'accept-language': language } })).text();
    const day = new Date(user.createdAt + 8 * 3_600_000);
    const [y, m, d] = [day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate()];
    const datetime = new Date(Math.floor(user.createdAt / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    assert.ok((await page('zh-CN')).includes(`<time datetime="${datetime}">${y}年${m}月${d}日</time>加入`));
    assert.ok((await page('zh-TW')).includes(`<time datetime="${datetime}">${y}年${m}月${d}日</time>加入`));
    assert.match(await page('en'), new RegExp(`joined <time datetime="${datetime}">\\w+ ${d}, ${y}</time>`));
  });

  test('the header\'s "Settings" and /settings open the settings\' first page, the profile, in every language', async () => {
    const { visitor } = await member();
    for (const [language, word] of [['en', 'Settings'], ['zh-CN', '设置'], ['zh-TW', '設定']] as const) {
      const page = await visitor.request('/', { headers: { 'accept-language': language } });
      const href = new RegExp(`<a href="([^"]+)">${word}</a>`).exec(page.text)?.[1];
      const first = /<nav class="settings-nav"[^>]*>\s*<ul><li><a href="([^"]+)"/.exec((await visitor.get('/settings/profile')).text)?.[1];
      assert.deepEqual([href, first], ['/settings/profile', '/settings/profile'], language);
    }
    assert.equal((await visitor.get('/settings')).location, '/settings/profile');
  });

  test('a new avatar is shown at once: the page addresses it by a new version, never the cached old one', async () => {
    const { user, visitor } = await member();
    const before = avatarOn((await visitor.get('/settings/profile')).text);
    assert.match(before ?? '', new RegExp(`^/avatars/${user.id}\\?v=\\d+$`));
    const cached = await visitor.get(before!);
    assert.match(cached.headers.get('cache-control') ?? '', /immutable/, 'a versioned address is cached for good');
    assert.equal(cached.headers.get('content-type'), 'image/svg+xml');

    t.clock.advance(1000);
    const form = new FormData();
    form.append('_csrf', await visitor.csrf());
    form.append('avatar', new Blob([PNG], { type: 'image/png' }), 'me.png');
    const upload = await visitor.request('/settings/profile/avatar', { method: 'POST', body: form });
    assert.equal(upload.status, 303);
    const page = await visitor.get(upload.location!);
    assert.match(page.text, /Your avatar was updated/);
    const now = avatarOn(page.text);
    assert.notEqual(now, before, 'a new address, so no cache holds the old image for it');
    const served = await fetch(`${t.baseUrl}${now}`);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.ok((await visitor.get(`/u/${user.username}`)).text.includes(`src="${now}"`), 'the public page too');
    const stale = await fetch(`${t.baseUrl}${before}`);
    assert.doesNotMatch(stale.headers.get('cache-control') ?? '', /immutable/, 'an old version is not cached for good');
    assert.equal((await fetch(`${t.baseUrl}/avatars/${user.id}`)).headers.get('cache-control'), 'public, max-age=300', 'the API’s avatarUrl: 5 minutes');
  });

  test('deleting the account asks first, and requires the password: without it or with a wrong one nothing changes', async () => {
    const { user, visitor } = await member();
    const asked = await visitor.post('/settings/account/delete', {});
    assert.equal(asked.status, 200);
    assert.match(asked.text, /Delete your account\?[\s\S]*username stays reserved/);
    assert.match(asked.text, /<input type="hidden" name="confirm" value="yes">/);
    assert.match(asked.text, /<input type="password" id="password" name="password"/);
    for (const [fields, message] of [[{}, /Enter your password to delete your account/], [{ password: 'not my password' }, /That password is not right/]] as const) {
      const refused = await visitor.post('/settings/account/delete', { confirm: 'yes', ...fields });
      assert.equal(refused.status, 400);
      assert.match(refused.text, message);
    }
    assert.equal((await t.deps.stores.users.findById(user.id))?.status, 'active');
    assert.equal((await visitor.get('/settings/profile')).status, 200, 'still signed in');
  });

  test('deleting the account says first that its published posts and comments will be hidden, and then they are', async () => {
    const { user, visitor } = await member();
    assert.equal((await visitor.post('/posts/new', { title: 'Goes', category: 'Notes', body: 'Hidden soon.', status: 'published' })).status, 303);
    const post = (await t.deps.stores.posts.listPublishedByAuthor(user.id, 0, 1)).items[0]!;
    const asked = await visitor.post('/settings/account/delete', {});
    assert.equal(asked.status, 200);
    assert.match(asked.text, /hides your 1 published post and your comments too/);

    const deleted = await visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD });
    assert.equal(deleted.status, 303);
    assert.equal((await new Visitor(t.baseUrl).get(`/posts/${post.id}`)).status, 404, 'what the page said: the post is hidden');
  });

  test('a code of the authenticator app (or a recovery code) deletes the account in place of the password', async () => {
    const { user, visitor } = await member();
    const enrolment = await beginTotpEnrolment(t.deps, user);
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment!.secret, t.clock.now()));
    t.clock.advance(30_000);
    const asked = await visitor.post('/settings/account/delete', {});
    assert.match(asked.text, /name="code"/, 'the code field is offered when two-step verification is on');
    const wrong = await visitor.post('/settings/account/delete', { confirm: 'yes', code: '000000' === totpCode(enrolment!.secret, t.clock.now()) ? '111111' : '000000' });
    assert.equal(wrong.status, 400);
    assert.equal((await t.deps.stores.users.findById(user.id))?.status, 'active');
    const deleted = await visitor.post('/settings/account/delete', { confirm: 'yes', code: totpCode(enrolment!.secret, t.clock.now()) });
    assert.equal(deleted.status, 303);
    assert.equal((await t.deps.stores.users.findById(user.id))?.status, 'deleted');
    assert.equal(await t.deps.stores.secondFactors.findTotp(user.id), undefined, 'the authenticator app is forgotten');
  });

  test('a deleted account cannot sign in, its session ends, and its tokens and apps fail at the API', async () => {
    const { user, visitor } = await member();
    const { stores } = t.deps;
    const now = t.clock.now();
    const { token: personal } = await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'script', scopes: ['profile:read'], expiresInDays: 30 });
    const { client: third } = await registerClient(stores, t.clock, { name: 'Reader', type: 'public', redirectUris: ['https://reader.example/cb'] });
    await stores.consents.save(user.id, third.clientId, 'profile:read', now);
    const grant = await stores.grants.create({ userId: user.id, clientId: third.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    const access = generateToken('access');
    await stores.tokens.insertAccess({ tokenHash: hashSecret(access), grantId: grant.id, clientId: third.clientId, userId: user.id, scope: 'profile:read', createdAt: now, expiresAt: now + 3_600_000 });
    const { client: own } = await registerClient(stores, t.clock, { name: 'Own', type: 'confidential', redirectUris: ['https://own.example/cb'], ownerId: user.id });
    await createAccount(stores, t.clock, { username: `${user.username}x`, password: PASSWORD }).then((other) => stores.consents.save(other.id, own.clientId, 'profile:read', now));
    assert.equal((await api(personal)).status, 200);
    assert.equal((await api(access)).status, 200);
    await visitor.get('/settings/profile');

    const deleted = await visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD });
    assert.equal(deleted.status, 303);
    assert.equal(deleted.location, '/settings/account/deleted');
    assert.match((await visitor.get(deleted.location!)).text, /Your account was deleted/);
    assert.equal((await visitor.get('/settings/profile')).status, 303, 'signed out');
    assert.equal((await stores.users.findById(user.id))?.status, 'deleted');
    assert.equal((await api(personal)).status, 401, 'personal token');
    assert.equal((await api(access)).status, 401, 'an app’s access token');
    assert.notEqual((await stores.grants.findById(grant.id))?.revokedAt, null);
    assert.equal((await stores.clients.findById(own.clientId))?.status, 'deactivated', 'the apps it owned');
    assert.equal((await stores.users.findById(user.id))?.bio, '');

    const again = await new Visitor(t.baseUrl).post('/login', { username: user.username, password: PASSWORD, return_to: '/' });
    assert.notEqual(again.status, 303, 'no sign-in');
    assert.equal((await visitor.get(`/u/${user.username}`)).status, 404, 'no public page');
    assert.ok(t.audit.some((e) => e.audit === 'account.deleted' && e.userId === user.id && e.clientsDeactivated === 1), 'the audit log');
  });

  test('deleting one\'s own account erases at once, in its transaction, the records of its use; what other members or the site need stays', async () => {
    const { user, visitor } = await member();
    const { stores, database: { db } } = t.deps;
    const now = t.clock.now();
    // Something in every table that holds a member's rows.
    const enrolment = await beginTotpEnrolment(t.deps, user);
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment!.secret, now));
    const { token: live } = await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'backup script', scopes: ['profile:read'], expiresInDays: 30 });
    const { token: revoked } = await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'old laptop', scopes: ['profile:read'], expiresInDays: 30 });
    await stores.personalTokens.revoke((await stores.personalTokens.findBearer(hashSecret(revoked)))!.tokenId, user.id, now);
    const { client: reader } = await registerClient(stores, t.clock, { name: 'Reader', type: 'public', redirectUris: ['https://reader.example/cb'] });
    await stores.consents.save(user.id, reader.clientId, 'profile:read', now);
    const grant = await stores.grants.create({ userId: user.id, clientId: reader.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    const issued = { grantId: grant.id, clientId: reader.clientId, userId: user.id, scope: 'profile:read', createdAt: now, expiresAt: now + 3_600_000 };
    await stores.tokens.insertPair({ ...issued, tokenHash: hashSecret(generateToken('access')) }, { ...issued, tokenHash: hashSecret(generateToken('refresh')) });
    await stores.codes.insert({
      codeHash: hashSecret('a code'), grantId: grant.id, clientId: reader.clientId, userId: user.id, redirectUri: 'https://reader.example/cb', scope: 'profile:read',
      codeChallenge: null, nonce: null, authTime: now, createdAt: now, expiresAt: now + 300_000,
    });
    await stores.passkeys.insert({ credentialId: 'credential-1', userId: user.id, name: 'Phone', publicKey: 'cHVibGlj', counter: 0, transports: [], backedUp: false }, now);
    await stores.passkeys.saveChallenge({ challenge: 'challenge-1', purpose: 'register', userId: user.id, expiresAt: now + 300_000 }, now);
    await stores.pendingSignIns.create({ idHash: hashSecret('pending'), userId: user.id, amr: ['pwd'], returnTo: '/', expiresAt: now + 300_000 }, now);
    await stores.oneTimeSecrets.put({ idHash: hashSecret('reveal'), userId: user.id, purpose: 'personal_token', subject: '', sealed: 'sealed', expiresAt: now + 60_000 }, now);
    await stores.memberEmails.set(user.id, 'erased@example.com', 'en', now);
    assert.equal((await visitor.post('/posts/new', { title: 'Stays', category: 'Notes', body: 'Hidden, not deleted.', status: 'published' })).status, 303);
    const post = (await stores.posts.listPublishedByAuthor(user.id, 0, 1)).items[0]!;
    assert.equal((await visitor.post(`/posts/${post.id}/comments`, { comment: 'My own comment' })).status, 303);
    assert.equal((await visitor.post(`/posts/${post.id}/like`, {})).status, 303);
    await registerClient(stores, t.clock, { name: 'Own', type: 'public', redirectUris: ['https://own.example/cb'], ownerId: user.id });

    const erased = {
      sessions: 'user_id', security_events: 'user_id', personal_tokens: 'user_id', grants: 'user_id', authorization_codes: 'user_id', access_tokens: 'user_id',
      refresh_tokens: 'user_id', consents: 'user_id', totp_credentials: 'user_id', recovery_codes: 'user_id', passkeys: 'user_id', webauthn_challenges: 'user_id',
      pending_sign_ins: 'user_id', one_time_secrets: 'user_id', member_emails: 'user_id',
    } as const;
    const kept = { users: 'id', posts: 'author_id', comments: 'author_id', post_likes: 'user_id', clients: 'owner_id' } as const;
    const rows = async (table: string, column: string) =>
      Number((await db.selectFrom(table as 'users').select((eb) => eb.fn.countAll<number>().as('n')).where(column as 'id', '=', user.id).executeTakeFirstOrThrow()).n);
    for (const [table, column] of Object.entries({ ...erased, ...kept })) assert.ok(await rows(table, column) > 0, `${table} has the member's rows before`);

    assert.equal((await visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD })).status, 303);
    for (const [table, column] of Object.entries(erased)) assert.equal(await rows(table, column), 0, `${table} is erased`);
    for (const [table, column] of Object.entries(kept)) assert.ok(await rows(table, column) > 0, `${table} stays`);
    assert.equal((await api(live)).status, 401, 'a token erased is unknown');
  });

  test('a deletion by staff keeps the records of the account\'s use: it can be undone', async () => {
    const { user } = await member();
    const { stores } = t.deps;
    await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'kept', scopes: ['profile:read'], expiresInDays: 30 });
    const before = (await stores.securityEvents.listForUser(user.id, 0, 50)).total;
    assert.ok(before > 0, 'the sign-in is in the log');
    await setAccountStatus(stores, t.clock, user.id, 'deleted');
    assert.equal((await stores.securityEvents.listForUser(user.id, 0, 50)).total, before, 'the security log');
    assert.equal((await stores.personalTokens.listForUser(user.id)).length, 1, 'the personal token, revoked');
    assert.equal(Number((await t.deps.database.db.selectFrom('sessions').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', user.id).executeTakeFirstOrThrow()).n), 1, 'the session, ended');
  });

  test('the username of a deleted account stays reserved: no one can sign up with it, in any letter case', async () => {
    const { user, visitor } = await member();
    assert.equal((await visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD })).status, 303);
    for (const username of [user.username, user.username.toUpperCase()]) {
      const signup = await new Visitor(t.baseUrl).post('/signup', { username, password: 'another long passphrase' });
      assert.equal(signup.status, 409, username);
      assert.match(signup.text, /That username is taken/);
    }
  });
});
