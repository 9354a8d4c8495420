/**
 * The staff console's pages and what they change (INTERFACE section 14), over real HTTP on each
 * database: finding members, resetting two-step, apps (owner, users, tokens of the last day;
 * deactivation ends tokens; the verified mark on the consent page), signing keys for admins, the
 * overview's figures, every page in Chinese without an English sentence, and error pages meant for staff.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { SITE_STAFF } from '../../src/core/accounts/user-agent.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { LOCALES } from '../../src/core/locales.js';
import { translator } from '../../src/i18n/catalogs.js';
import { englishSentences } from '../i18n/untranslated.js';
import { Browser, PASSWORD as MEMBER_PASSWORD, authorizeQuery, newClient, obtainCode, obtainTokens, pkcePair, signedInBrowser } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { svc } from '../support/cli.js';
import { forEachDatabase } from '../support/databases.js';
import { appReview, person, uniqueName } from './support.js';

const REASON = 'checked with the owner by mail';

forEachDatabase('staff console pages', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('an app\'s page shows, beside each address as written, where it takes a browser: an address saved before the redirect URIs\' rules reads as one host and goes to another, and its app still signs in', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const legacy = 'https://evil.example\\@trusted.example/cb';
    const client = await t.deps.stores.clients.create({
      clientId: uniqueName('legacy'), name: 'Legacy App', description: '', homepageUrl: '', ownerId: null, type: 'public',
      redirectUris: [legacy, 'com.example.legacy:/cb'], postLogoutRedirectUris: ['https:///bye'], backchannelLogoutUri: 'https://*.example/bc',
      allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256',
    }, t.clock.now());
    const page = (await moderator.visitor.get(`/admin/apps/${client.clientId}`)).text;
    for (const [written, reached] of [[legacy, 'a browser goes to evil.example'], ['com.example.legacy:/cb', 'opens the app com.example.legacy'],
      ['https:///bye', 'a browser goes to bye'], ['https://*.example/bc', 'a browser goes to \\*.example']]) {
      assert.match(page, new RegExp(`<code>${written!.replace(/[\\*.?/]/g, '\\$&')}</code> <span class="muted">\\(${reached}\\)</span>`), written);
    }
    // Stored data keeps working: the rule refuses such an address when it is saved, not when it is used.
    const { browser } = await signedInBrowser(t);
    const code = await obtainCode(browser, { client, redirectUri: legacy }, { scope: 'profile:read', pkce: pkcePair() });
    assert.ok(code);
  });

  test('in Chinese, where an address takes a browser stands in full-width brackets on an app\'s page, as Chinese sets an aside', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const { client } = await newClient(t, { type: 'public', redirectUris: ['https://brackets.example/cb', 'com.example.brackets:/cb'] });
    for (const [locale, goes, opens] of [['zh-CN', '（浏览器实际前往 brackets.example）', '（打开应用 com.example.brackets）'], ['zh-TW', '（瀏覽器實際前往 brackets.example）', '（開啟應用程式 com.example.brackets）']]) {
      moderator.visitor.cookies.set('lang', locale!);
      const page = (await moderator.visitor.get(`/admin/apps/${client.clientId}`)).text;
      for (const aside of [goes, opens]) assert.ok(page.includes(`<span class="muted">${aside}</span>`), `${locale} ${aside}`);
    }
  });

  test('members are found by username or its beginning, part of a nickname, e-mail address or id', async () => {
    const { visitor } = await person(t, 'moderator', { twoStep: true });
    const username = uniqueName('findme');
    const member = await createAccount(t.deps.stores, t.clock, { username, password: MEMBER_PASSWORD, nickname: '林小伟' });
    await t.deps.stores.memberEmails.set(member.id, `${username}@Example.test`, 'en', t.clock.now());
    for (const q of [username.toUpperCase(), username.slice(0, 8), '小伟', `${username}@example.TEST`, String(member.id)]) {
      const page = await visitor.get(`/admin/members?q=${encodeURIComponent(q)}`);
      assert.equal(page.status, 200, q);
      assert.ok(page.text.includes(`href="/admin/members/${member.id}"`), `found by ${q}`);
    }
    const none = await visitor.get(`/admin/members?q=${encodeURIComponent('%_\\ nobody at all')}`);
    assert.match(none.text, /No member found/);
    // Past what an id column holds: no query PostgreSQL would refuse, never a 500.
    assert.equal((await visitor.get('/admin/members?q=99999999999')).status, 200);
    assert.equal((await visitor.get('/admin/members/99999999999')).status, 404);
    assert.equal((await visitor.get('/admin/members/0x10')).status, 404);
    assert.equal((await visitor.get('/admin/members/2147483647')).status, 404);
    assert.equal((await visitor.get('/admin/staff-log?before=99999999999')).status, 400);
  });

  test('a member is found by an e-mail address waiting for its link too, and their page shows it beside the verified one', async () => {
    const { visitor } = await person(t, 'moderator', { twoStep: true });
    const username = uniqueName('pending');
    const member = await createAccount(t.deps.stores, t.clock, { username, password: MEMBER_PASSWORD });
    await t.deps.stores.memberEmails.set(member.id, `${username}@example.test`, 'en', t.clock.now());
    assert.ok(await t.deps.stores.memberEmails.markVerified(member.id, `${username}@example.test`, t.clock.now()));
    await t.deps.stores.memberEmails.set(member.id, `${username}@Pending.test`, 'en', t.clock.now());
    const found = await visitor.get(`/admin/members?q=${encodeURIComponent(`${username}@pending.TEST`)}`);
    assert.ok(found.text.includes(`href="/admin/members/${member.id}"`), 'found by the pending address');
    const page = await visitor.get(`/admin/members/${member.id}`);
    assert.ok(page.text.includes(`${username}@example.test`) && page.text.includes(`${username}@Pending.test`), 'both addresses shown');
    assert.match(page.text, /waiting for its link/);
  });

  test('resetting two-step removes the authenticator app and recovery codes: the password alone signs in again', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const member = await person(t, 'member', { twoStep: true });
    const done = await moderator.visitor.post(`/admin/members/${member.user.id}/two-step/reset`, { reason: REASON, confirm: 'yes' });
    assert.equal(done.status, 303);
    assert.equal(await t.deps.stores.secondFactors.findTotp(member.user.id), undefined);
    assert.equal(await t.deps.stores.secondFactors.countUnusedRecoveryCodes(member.user.id), 0);
    const [entry] = await t.deps.stores.staffLog.list({ limit: 1, target: { kind: 'member', id: String(member.user.id) } });
    assert.deepEqual(entry?.detail, { authenticator_app: 'removed', passkeys_removed: '0' });
  });

  test('a member reads in their security log that staff removed their two-step verification, changed their role and signed them out, in their language, never who or why', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: true });
    const act = (path: string, fields: Record<string, string> = {}) => admin.visitor.post(`/admin/members/${member.user.id}/${path}`, { ...fields, reason: REASON, confirm: 'yes' });
    assert.equal((await act('two-step/reset')).status, 303);
    assert.equal((await act('role', { role: 'moderator' })).status, 303);
    const english = await member.visitor.get('/settings/security');
    assert.match(english.text, /Two-step verification removed by the site(&#39;|')s staff/);
    assert.match(english.text, /Role changed by the site(&#39;|')s staff \(now a moderator\)/);
    const chinese = await member.visitor.request('/settings/security', { headers: { 'accept-language': 'zh-CN' } });
    assert.match(chinese.text, /网站管理人员移除了你的两步验证/);
    assert.match(chinese.text, /网站管理人员更改了你的角色（现为版主）/);
    assert.equal((await act('sessions/revoke')).status, 303);
    const events = await t.deps.stores.securityEvents.listForUser(member.user.id, 0, 10);
    assert.deepEqual(events.items.filter((e) => e.kind.startsWith('staff.')).map((e) => [e.kind, e.detail, e.address, e.device]), [
      ['staff.sessions_revoked', {}, '', SITE_STAFF], ['staff.role_changed', { role: 'moderator' }, '', SITE_STAFF], ['staff.two_step_reset', {}, '', SITE_STAFF],
    ]);
    // The "From" column names who acted, as for the command line's changes; never blank.
    assert.match(english.text, /Role changed by the site(&#39;|')s staff[^<]*<\/td>\s*<td role="cell" data-label="From">the site(&#39;|')s staff<\/td>/);
    assert.match(chinese.text, /网站管理人员更改了你的角色[^<]*<\/td>\s*<td role="cell" data-label="[^"]+">网站管理人员<\/td>/);
    for (const page of [english.text, chinese.text]) {
      assert.ok(!page.includes(REASON) && !page.includes(admin.user.username), 'neither the reason nor the staff member');
    }
  });

  test('an app shows its owner, "registered itself" or the site\'s operators, its users and tokens of the last 24 hours; deactivating it ends its tokens at once', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const owner = await person(t, 'member', { twoStep: false });
    const owned = await newClient(t, { ownerId: owner.user.id });
    const operators = await newClient(t);
    const ownerless = await t.deps.stores.clients.create({
      clientId: uniqueName('selfreg'), name: 'Agent App', description: '', homepageUrl: '', ownerId: null, type: 'public',
      redirectUris: ['https://agent.example/cb'], allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256', selfRegistered: true,
    }, t.clock.now());
    const user = await createAccount(t.deps.stores, t.clock, { username: uniqueName('usr'), password: MEMBER_PASSWORD });
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).status, 303);
    const { access_token: token } = await obtainTokens(t, browser, owned, { scope: 'profile:read' });
    const page = await moderator.visitor.get(`/admin/apps/${owned.client.clientId}`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(`href="/admin/members/${owner.user.id}"`), 'the owner');
    assert.match(page.text, /Members who authorized it<\/dt><dd>1</);
    assert.match(page.text, /Access tokens in the last 24 hours<\/dt><dd>1</);
    assert.match((await moderator.visitor.get(`/admin/apps/${ownerless.clientId}`)).text, /registered itself/);
    assert.match((await moderator.visitor.get(`/admin/apps?q=${ownerless.clientId}`)).text, /registered itself/);
    assert.match((await moderator.visitor.get(`/admin/apps/${operators.client.clientId}`)).text, /the site&#39;s operators/);

    const done = await moderator.visitor.post(`/admin/apps/${owned.client.clientId}/status`, { status: 'deactivated', reason: REASON, confirm: 'yes' });
    assert.equal(done.status, 303);
    const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.status, 401, 'its token ends at once');
    const again = await moderator.visitor.post(`/admin/apps/${owned.client.clientId}/status`, { status: 'active', reason: REASON, confirm: 'yes' });
    assert.equal(again.status, 303);
    assert.equal((await t.deps.stores.clients.findById(owned.client.clientId))?.status, 'active');
    const log = await t.deps.stores.staffLog.list({ limit: 5, target: { kind: 'app', id: owned.client.clientId } });
    assert.deepEqual(log.map((e) => e.detail.status), ['active', 'deactivated']);
  });

  test('an app staff mark verified has "Verified by" the site on its consent page; no app is verified by default', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const app = await newClient(t, { type: 'public' });
    const browser = new Browser(t);
    const user = await createAccount(t.deps.stores, t.clock, { username: uniqueName('cns'), password: MEMBER_PASSWORD });
    assert.equal((await browser.signIn(user.username)).status, 303);
    const consent = async () => (await browser.fetch(`/oauth/authorize?${authorizeQuery(app, { pkce: pkcePair() })}`)).text();
    assert.doesNotMatch(await consent(), /Verified by/);
    assert.equal((await (await appReview(moderator, app.client.clientId)).verify(REASON)).status, 303);
    assert.match(await consent(), /Verified by Community/);
    assert.equal((await moderator.visitor.post(`/admin/apps/${app.client.clientId}/verified`, { verified: 'no', reason: REASON, confirm: 'yes' })).status, 303);
    assert.doesNotMatch(await consent(), /Verified by/);
    // An app that registered itself is "not reviewed" until staff verify it, and then only verified (attack88).
    const selfRegistered = await t.deps.stores.clients.create({
      clientId: uniqueName('self'), name: 'Self Reg', description: '', homepageUrl: 'https://self.example/', ownerId: null, type: 'public', selfRegistered: true,
      redirectUris: ['https://self.example/cb'], allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256',
    }, t.clock.now());
    const selfConsent = async () => (await browser.fetch(`/oauth/authorize?${authorizeQuery({ client: selfRegistered, redirectUri: 'https://self.example/cb' }, { pkce: pkcePair(), scope: 'profile:read' })}`)).text();
    assert.match(await selfConsent(), /registered itself with this site, which has not reviewed it/);
    assert.equal((await (await appReview(moderator, selfRegistered.clientId)).verify(REASON)).status, 303);
    const verifiedSelf = await selfConsent();
    assert.match(verifiedSelf, /Verified by Community/);
    assert.doesNotMatch(verifiedSelf, /has not reviewed it/);
    assert.match(verifiedSelf, /href="https:\/\/self\.example\/"/, 'its homepage is still shown');
  });

  test('staff vouch for the addresses they saw: an app whose addresses changed after its page was loaded is not marked verified, and the page shows every address', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const app = await newClient(t, { postLogoutRedirectUris: ['https://app.example/bye'], backchannelLogoutUri: 'https://app.example/bc' });
    const review = await appReview(moderator, app.client.clientId);
    for (const address of ['https://app.example/callback', 'https://app.example/bye', 'https://app.example/bc']) assert.match(review.page, new RegExp(`<code>${address}</code>`), address);
    // Its owner adds an address while the page is open (attack85).
    await t.deps.stores.clients.setRedirectUris(app.client.clientId, ['https://app.example/callback', 'https://evil.example/cb'], t.clock.now(), 'owner');
    const refused = await review.verify(REASON);
    assert.equal(refused.status, 303);
    assert.equal(refused.location, `/admin/apps/${app.client.clientId}?notice=app-changed`);
    assert.match((await moderator.visitor.get(refused.location!)).text, /name, description, homepage or addresses changed after the page was loaded, so it was not marked verified/);
    assert.equal((await t.deps.stores.clients.findById(app.client.clientId))?.verifiedAt, null);
    // A form without the addresses, or with something else in their place (a hand-made one), is refused as such.
    // The addresses alone, as the form carried them before it carried the name and homepage, are not enough.
    const addressesAlone = JSON.stringify([['https://app.example/callback', 'https://evil.example/cb'], ['https://app.example/bye'], 'https://app.example/bc']);
    for (const reviewed of [undefined, '[1,2,3]', 'not json', addressesAlone]) {
      const bare = await moderator.visitor.post(`/admin/apps/${app.client.clientId}/verified`, { verified: 'yes', reason: REASON, confirm: 'yes', ...(reviewed === undefined ? {} : { reviewed }) });
      assert.equal(bare.status, 400, String(reviewed));
      assert.match(bare.text, /did not carry the name, description, homepage and addresses the app(&#39;|')s page showed/, String(reviewed));
      // Before the confirmation too: staff are not asked for a reason only to be refused (attack88).
      const unconfirmed = await moderator.visitor.post(`/admin/apps/${app.client.clientId}/verified`, { verified: 'yes', ...(reviewed === undefined ? {} : { reviewed }) });
      assert.equal(unconfirmed.status, 400, `${String(reviewed)}, unconfirmed`);
    }
    assert.equal((await t.deps.stores.clients.findById(app.client.clientId))?.verifiedAt, null);
    // Reviewed again as they now are, they are vouched for.
    assert.equal((await (await appReview(moderator, app.client.clientId)).verify(REASON)).location, `/admin/apps/${app.client.clientId}?notice=verified`);
    assert.notEqual((await t.deps.stores.clients.findById(app.client.clientId))?.verifiedAt, null);
  });

  test('staff vouch for the name and homepage they saw: an app renamed, or given another homepage, after its page was loaded is not marked verified, and the page says it changed', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const described = {
      clientId: `https://docs.example/${uniqueName('app')}.json`, name: 'Community Tools', description: '', homepageUrl: 'https://docs.example/', ownerId: null,
      type: 'public' as const, redirectUris: ['https://docs.example/cb'], allowedScopes: ['openid' as const], secretHash: null, idTokenAlg: 'RS256' as const,
    };
    const verifiedAt = async () => (await t.deps.stores.clients.findById(described.clientId))?.verifiedAt;
    const back = `/admin/apps/${encodeURIComponent(described.clientId)}`;
    await t.deps.stores.clients.saveDescribed(described, t.clock.now());
    // Its document names it anew while the page is open (attack87: "Verified by" beside a name staff never saw).
    const renamed = await appReview(moderator, described.clientId);
    await t.deps.stores.clients.saveDescribed({ ...described, name: 'Community Official Tools' }, t.clock.now());
    const refused = await renamed.verify(REASON);
    assert.equal(refused.location, `${back}?notice=app-changed`);
    assert.match((await moderator.visitor.get(refused.location!)).text, /name, description, homepage or addresses changed after the page was loaded, so it was not marked verified/);
    assert.equal(await verifiedAt(), null);
    // Another homepage while the page is open: the operator's, which ends no verification, is still not the one staff saw.
    const moved = await appReview(moderator, described.clientId);
    await t.deps.stores.clients.setDetails(described.clientId, { name: 'Community Official Tools', description: '', homepageUrl: 'https://official.example/' }, t.clock.now(), 'operator');
    assert.equal((await moved.verify(REASON)).location, `${back}?notice=app-changed`);
    assert.equal(await verifiedAt(), null);
    // Reviewed as it now is, it is vouched for.
    assert.equal((await (await appReview(moderator, described.clientId)).verify(REASON)).location, `${back}?notice=verified`);
    assert.notEqual(await verifiedAt(), null);
  });

  test('the app page and the confirmation of "Mark verified…" show the name, description, homepage and addresses staff vouch for, the homepage as text, never a link', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    // A homepage no check let through today, as a row from before homepages were checked might hold.
    const app = await t.deps.stores.clients.create({
      clientId: uniqueName('app'), name: 'Community Tools', description: 'Official: sign in on the next page.', homepageUrl: 'javascript:alert(1)', ownerId: null, type: 'public',
      redirectUris: ['https://tools.example/cb'], allowedScopes: ['openid'], secretHash: null, idTokenAlg: 'RS256', postLogoutRedirectUris: ['https://tools.example/bye'],
    }, t.clock.now());
    const review = await appReview(moderator, app.clientId);
    const confirmation = await moderator.visitor.post(`/admin/apps/${app.clientId}/verified`, { verified: 'yes', reviewed: review.reviewed, reason: REASON });
    assert.equal(confirmation.status, 200);
    for (const page of [review.page, confirmation.text]) {
      assert.match(page, /<dt>Homepage<\/dt><dd><code>javascript:alert\(1\)<\/code><\/dd>/);
      assert.doesNotMatch(page, /href="javascript:/);
      assert.match(page, /<dt>Name<\/dt><dd>Community Tools<\/dd>/);
      // The consent page shows it under "Verified by" (attack89).
      assert.match(page, /<dt>Description<\/dt><dd>Official: sign in on the next page\.<\/dd>/);
      for (const address of ['https://tools.example/cb', 'https://tools.example/bye']) assert.match(page, new RegExp(`<code>${address}</code>`), address);
    }
    assert.match(confirmation.text, /You vouch for what the app(&#39;|')s page showed you/);
    assert.equal(/name="reviewed" value="([^"]*)"/.exec(confirmation.text)?.[1], /name="reviewed" value="([^"]*)"/.exec(review.page)?.[1], 'the confirmation carries what the page showed');
  });

  test('an app\'s page warns staff of a name that may pass for another\'s (mixed scripts, letters in a special form, the site\'s name), on the page and again on the confirmation; an ordinary one gets no warning', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const named = async (name: string) => (await t.deps.stores.clients.create({
      clientId: uniqueName('app'), name, description: '', homepageUrl: 'https://app.example/', ownerId: null, type: 'public',
      redirectUris: ['https://app.example/cb'], allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256',
    }, t.clock.now())).clientId;
    const page = async (clientId: string) => (await moderator.visitor.get(`/admin/apps/${clientId}`)).text;
    const imitation = await page(await named('P\u0430ypal'));
    assert.match(imitation, /Before you vouch for this name, look at it closely/);
    assert.match(imitation, /mixes letters of different scripts/);
    assert.match(await page(await named('社区官方')), /holds this site(’|&#39;)s own name/);
    assert.match(await page(await named('Ｐｈｏｔｏ')), /letters or digits in a special form/);
    const imitator = await named('P\u0430ypal');
    const review = await appReview(moderator, imitator);
    const confirmation = await moderator.visitor.post(`/admin/apps/${imitator}/verified`, { verified: 'yes', reviewed: review.reviewed, reason: REASON });
    assert.equal(confirmation.status, 200);
    assert.match(confirmation.text, /Before you vouch for this name, look at it closely/, 'where staff confirm, too');
    assert.doesNotMatch(await page(await named('读书App')), /look at it closely/);
  });

  test('a secret rotation at the command line is in the app\'s staff log in the staff\'s words, and its owner reads that the site\'s staff made it, in each language', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const owner = await person(t, 'member', { twoStep: false });
    const app = await newClient(t, { ownerId: owner.user.id });
    const rotated = svc(database.url, ['client', 'rotate-secret', '--client-id', app.client.clientId, '--reason', REASON, '--json']);
    assert.equal(rotated.code, 0, rotated.stderr);
    const staffPage = (language: string) => moderator.visitor.request(`/admin/apps/${app.client.clientId}`, { headers: { 'accept-language': language } });
    assert.match((await staffPage('en')).text, /<td role="cell" data-label="[^"]+">Rotated the app(&#39;|')s client secret<\/td>/);
    assert.match((await staffPage('zh-CN')).text, /<td role="cell" data-label="[^"]+">轮换应用的客户端密钥<\/td>/);
    assert.match((await staffPage('zh-TW')).text, /<td role="cell" data-label="[^"]+">輪替應用程式的用戶端密鑰<\/td>/);
    const ownerPage = (language: string) => owner.visitor.request('/settings/security', { headers: { 'accept-language': language } });
    assert.match((await ownerPage('en')).text, /Client secret rotated “Test App”<\/td>\s*<td role="cell" data-label="From">the site(&#39;|')s staff<\/td>/);
    assert.match((await ownerPage('zh-CN')).text, /轮换了客户端密钥“Test App”<\/td>\s*<td role="cell" data-label="来源">网站管理人员<\/td>/);
    assert.match((await ownerPage('zh-TW')).text, /輪替了用戶端密鑰「Test App」<\/td>\s*<td role="cell" data-label="來源">網站管理人員<\/td>/);
  });

  test('signing keys are the admins\': a moderator is refused; an admin rotates them as the command line does, and it is logged', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    for (const path of ['/admin/keys', '/admin/keys/rotate']) assert.equal((await moderator.visitor.get(path)).status, 403, path);
    assert.equal((await moderator.visitor.post('/admin/keys/rotate', { reason: REASON, confirm: 'yes' })).status, 403);
    const admin = await person(t, 'admin', { twoStep: true });
    const before = await t.deps.stores.keys.listPublished(t.clock.now());
    assert.match((await admin.visitor.get('/admin/keys')).text, /Signing keys/);
    const done = await admin.visitor.post('/admin/keys/rotate', { now: 'yes', reason: REASON, confirm: 'yes' });
    assert.equal(done.status, 303);
    const afterwards = await t.deps.stores.keys.listPublished(t.clock.now());
    assert.equal(afterwards.length, before.length + 2, 'a new key for each algorithm');
    const [entry] = await t.deps.stores.staffLog.list({ limit: 1, target: { kind: 'keys', id: '' } });
    assert.equal(entry?.actorId, admin.user.id);
    assert.ok(entry?.detail.RS256 && entry.detail.ES256, 'the new kids');
  });

  test('the keys table names its first column in the page\'s language, not by the JWK member\'s name "kid"', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    for (const locale of LOCALES) {
      admin.visitor.cookies.set('lang', locale);
      const page = await admin.visitor.get('/admin/keys');
      assert.equal(page.status, 200, locale);
      const headings = [...page.text.matchAll(/<th role="columnheader" scope="col">([^<]*)<\/th>/g)].map((m) => m[1]);
      assert.equal(headings[0], translator(locale).text('admin.keyId'), locale);
    }
  });

  test('a member\'s tokens are active, expired or revoked in the same words on the console\'s member page as on their own tokens page', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    const stores = t.deps.stores;
    const now = t.clock.now();
    const token = (name: string, expiresAt: number | null) => stores.personalTokens.insert({ userId: member.user.id, name, tokenHash: uniqueName(name), scope: 'read:profile', expiresAt }, now);
    await token('still-good', null);
    await token('ran-out', now);
    assert.equal(await stores.personalTokens.revoke((await token('taken-back', null)).id, member.user.id, now), true);
    /** Each token's name and the cell under `heading`, row by row. */
    const states = (text: string, heading: string) => new Map([...text.matchAll(/<tr role="row"><td[^>]*>([^<]+)<\/td>[\s\S]*?<\/tr>/g)]
      .map((row) => [row[1], new RegExp(`<td role="cell" data-label="${heading}">([^<]*)</td>`).exec(row[0])?.[1]]));
    for (const locale of LOCALES) {
      const words = translator(locale);
      admin.visitor.cookies.set('lang', locale);
      member.visitor.cookies.set('lang', locale);
      const console = states((await admin.visitor.get(`/admin/members/${member.user.id}`)).text, words.text('admin.statusHeading'));
      const own = states((await member.visitor.get('/settings/tokens')).text, words.text('tokens.status'));
      for (const [name, status] of [['still-good', 'Active'], ['ran-out', 'Expired'], ['taken-back', 'Revoked']] as const) {
        assert.equal(own.get(name), words.text(`tokens.status${status}`), `${locale} ${name}: the member's page`);
        assert.equal(console.get(name), own.get(name), `${locale} ${name}: the console`);
      }
    }
  });

  test('a member\'s session kept without an address reads "unknown" on the console\'s member page, as on their own security page', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    const now = t.clock.now();
    await t.deps.stores.sessions.create({ idHash: uniqueName('no-address'), userId: member.user.id, authTime: now, expiresAt: now + 86_400_000 }, now);
    for (const locale of LOCALES) {
      const words = translator(locale);
      admin.visitor.cookies.set('lang', locale);
      member.visitor.cookies.set('lang', locale);
      const unknown = words.text('security.unknownAddress');
      assert.ok((await member.visitor.get('/settings/security')).text.includes(`<td role="cell" data-label="${words.text('security.address')}">${unknown}</td>`), `${locale}: the member's page`);
      const page = (await admin.visitor.get(`/admin/members/${member.user.id}`)).text;
      assert.ok(page.includes(`<td role="cell" data-label="${words.text('admin.address')}">${unknown}</td>`), `${locale}: the console`);
      assert.ok(!page.includes(`<td role="cell" data-label="${words.text('admin.address')}"></td>`), `${locale}: no blank address`);
    }
  });

  test('a member\'s security-log line with neither a browser nor an address reads "unknown" under "From", on their security page and on the console\'s member page', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    // A leak report's line: the reporter's address is none of the owner's business.
    const { token } = await createPersonalToken(t.deps.stores, t.deps.clock, t.deps.tokenMarks, { userId: member.user.id, name: 'leaked', scopes: ['profile:read'], expiresInDays: 7 });
    const reported = await fetch(`${t.baseUrl}/api/credentials/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ credentials: [token] }) });
    assert.equal(reported.status, 202);
    for (const locale of LOCALES) {
      const words = translator(locale);
      admin.visitor.cookies.set('lang', locale);
      member.visitor.cookies.set('lang', locale);
      const unknown = words.text('security.unknownOrigin');
      const own = (await member.visitor.get('/settings/security')).text;
      assert.ok(own.includes(`<td role="cell" data-label="${words.text('security.from')}">${unknown}</td>`), `${locale}: the member's page`);
      assert.ok(!own.includes(`<td role="cell" data-label="${words.text('security.from')}"></td>`), `${locale}: no blank "From" on the member's page`);
      const page = (await admin.visitor.get(`/admin/members/${member.user.id}`)).text;
      // The column is headed as on the member's own page: it holds the browser as well as the address.
      assert.ok(page.includes(`<td role="cell" data-label="${words.text('security.from')}">${unknown}</td>`), `${locale}: the console`);
      assert.ok(!page.includes(`<td role="cell" data-label="${words.text('security.from')}"></td>`), `${locale}: no blank "From" in the console`);
    }
  });

  test('the overview shows the last 14 days\' sign-ins, new members, tokens issued, refusals and 429s as charts and a table', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const wrong = new Browser(t);
    assert.equal((await wrong.signIn(admin.user.username, 'not the password')).status, 401);
    await t.deps.figures.flush(t.deps.stores);
    const page = await admin.visitor.get('/admin');
    assert.equal(page.status, 200);
    assert.equal([...page.text.matchAll(/<svg [^>]*role="img"/g)].length, 5);
    const today = /<tbody><tr><th scope="row">[^<]+<\/th>((?:<td>\d+<\/td>){5})<\/tr>/.exec(page.text);
    assert.ok(today, 'today\'s row comes first');
    const [signIns, newMembers, , refusals] = [...today[1]!.matchAll(/<td>(\d+)<\/td>/g)].map((m) => Number(m[1]));
    assert.ok(signIns! >= 1 && newMembers! >= 1 && refusals! >= 1, today[1]);
  });

  test('the console\'s pages in Chinese hold no English sentence', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    const app = await newClient(t);
    await admin.visitor.post('/language', { lang: 'zh-CN' });
    const pages = ['/admin', '/admin/members?q=a', `/admin/members/${member.user.id}`, '/admin/apps', `/admin/apps/${app.client.clientId}`,
      '/admin/keys', '/admin/keys/rotate', '/admin/staff-log'];
    for (const path of pages) {
      const page = await admin.visitor.get(path);
      assert.equal(page.status, 200, path);
      assert.match(page.text, /<html lang="zh-CN">/, path);
      // Names and reasons are what people typed: the staff log shows this suite's English reason.
      assert.deepEqual(englishSentences(page.text, ['Test App', 'An app under test', 'Community Official Tools', 'Community Tools', REASON]), [], path);
    }
    const asked = await admin.visitor.post(`/admin/members/${member.user.id}/status`, { status: 'banned', reason: REASON });
    assert.deepEqual(englishSentences(asked.text, [REASON]), [], 'the confirmation');
    const { reviewed } = await appReview(admin, app.client.clientId);
    const vouching = await admin.visitor.post(`/admin/apps/${app.client.clientId}/verified`, { verified: 'yes', reviewed, reason: REASON });
    assert.match(vouching.text, /主页/);
    assert.deepEqual(englishSentences(vouching.text, ['Test App', 'An app under test', REASON]), [], 'the confirmation of "Mark verified…"');
  });
  test('an error in the console speaks to staff in every language: no advice about an app that sent them, and the way back is into the console', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const app = await newClient(t);
    for (const locale of LOCALES) {
      const words = translator(locale);
      admin.visitor.cookies.set('lang', locale);
      // A verify form made by hand, without what the app's page showed (attack88's refusal), and a member who is not there.
      const refused = await admin.visitor.post(`/admin/apps/${app.client.clientId}/verified`, { verified: 'yes', reason: REASON, confirm: 'yes' });
      const missing = await admin.visitor.get('/admin/members/2147483647');
      const ways = [[refused, 400, `<a href="/admin/apps/${app.client.clientId}">${words.text('admin.back')}</a>`], [missing, 404, `<a href="/admin">${words.text('admin.backToConsole')}</a>`]] as const;
      for (const [page, status, back] of ways) {
        assert.equal(page.status, status, `${locale} ${status}`);
        assert.match(page.text, new RegExp(`<html lang="${locale}">`));
        assert.ok(!page.text.includes(words.text('errors.invalidRequest')), `${locale} ${status}: the member's advice about an app`);
        assert.ok(page.text.includes(back), `${locale} ${status}: back into the console`);
        assert.ok(!page.text.includes(`<a href="/">${words.text('common.backHome')}</a>`), `${locale} ${status}: not to the home page`);
      }
      if (locale !== 'en') assert.ok(refused.text.includes(words.text('admin.verifyFormIncomplete')), `${locale}: the refusal's own words`);
    }
  });
  test('an error in the console is a page of the console: its navigation above the words, the section the request was in marked current, the status unchanged', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    const app = await newClient(t);
    for (const locale of ['en', 'zh-CN'] as const) {
      const words = translator(locale);
      admin.visitor.cookies.set('lang', locale);
      const nav = `<nav class="settings-nav" aria-label="${words.text('admin.consoleNavigation')}">`;
      const current = (href: string, label: string) => `<li><a href="${href}" aria-current="page">${words.text(label)}</a></li>`;
      const pages = [
        // A status no form offers, sent by hand: the member's section.
        { page: await admin.visitor.post(`/admin/members/${member.user.id}/status`, { status: 'frozen', reason: REASON, confirm: 'yes' }), status: 400, section: ['/admin/members', 'admin.navMembers'] },
        // A verify form without what the app's page showed (attack88): the apps' section.
        { page: await admin.visitor.post(`/admin/apps/${app.client.clientId}/verified`, { verified: 'yes', reason: REASON, confirm: 'yes' }), status: 400, section: ['/admin/apps', 'admin.navApps'] },
        { page: await admin.visitor.get('/admin/members/2147483647'), status: 404, section: ['/admin/members', 'admin.navMembers'] },
        // An address of no section: none is marked current.
        { page: await admin.visitor.get('/admin/nonexistent'), status: 404, section: undefined },
      ] as const;
      for (const { page, status, section } of pages) {
        assert.equal(page.status, status, `${locale} ${status}`);
        assert.match(page.text, new RegExp(`<html lang="${locale}">`));
        const at = page.text.indexOf(nav);
        assert.ok(at !== -1, `${locale} ${status}: the console's navigation`);
        assert.ok(at < page.text.indexOf(`<h1>${words.text(status === 404 ? 'errors.notFound' : 'errors.didNotWork')}</h1>`), `${locale} ${status}: above the error`);
        if (section) assert.ok(page.text.includes(current(section[0], section[1])), `${locale} ${status}: ${section[0]} is current`);
        else assert.ok(!page.text.includes('aria-current="page"'), `${locale} ${status}: no section is current`);
        assert.match(page.text, /<p class="links"><a href="\/admin[/"]/, `${locale} ${status}: back into the console`);
      }
    }
  });

  test('a console form\'s error page leads back to the page the form was on, a page of the console whatever the address held; any other error, and a form about what is gone, to the console', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    const app = await newClient(t);
    const hostile = ['//evil.example/x', '\\evil.example', 'https://evil.example'];
    for (const locale of LOCALES) {
      const words = translator(locale);
      admin.visitor.cookies.set('lang', locale);
      const back = (href: string) => `<p class="links"><a href="${href}">${words.text('admin.back')}</a></p>`;
      const pages = [
        // A status no form offers, sent by hand; a form kept open too long (no CSRF field): the member's page.
        [await admin.visitor.post(`/admin/members/${member.user.id}/status`, { status: 'frozen', reason: REASON, confirm: 'yes' }), `/admin/members/${member.user.id}`],
        [await admin.visitor.post(`/admin/members/${member.user.id}/role`, { role: 'moderator', reason: REASON, confirm: 'yes' }, { csrf: null }), `/admin/members/${member.user.id}`],
        // A verify form without what the app's page showed (attack88): the app's page.
        [await admin.visitor.post(`/admin/apps/${app.client.clientId}/verified`, { verified: 'yes', reason: REASON, confirm: 'yes' }), `/admin/apps/${app.client.clientId}`],
        [await admin.visitor.post('/admin/keys/rotate', { reason: REASON, confirm: 'yes' }, { csrf: null }), '/admin/keys/rotate'],
        // An address that names another site: each part of it stays one segment of a page under /admin.
        ...await Promise.all(hostile.map(async (id) => [
          await admin.visitor.post(`/admin/apps/${encodeURIComponent(id)}/status`, { status: 'frozen', reason: REASON, confirm: 'yes' }), `/admin/apps/${encodeURIComponent(id)}`,
        ] as const)),
      ] as const;
      for (const [page, href] of pages) {
        assert.equal(page.status >= 400, true, `${locale} ${href}: ${page.status}`);
        assert.ok(page.text.includes(back(href)), `${locale} ${href}: back to the form's page`);
        assert.ok(new URL(href, 'https://site.example').pathname.startsWith('/admin/'), `${locale} ${href}: a page of the console`);
      }
      // A page that is not there was asked for by no form of the console's, and a form about a
      // member who is not there has no page to go back to: back to the console.
      const missing = await admin.visitor.get('/admin/members/2147483647');
      assert.ok(missing.text.includes(`<a href="/admin">${words.text('admin.backToConsole')}</a>`), `${locale}: a missing page`);
      const gone = await admin.visitor.post('/admin/members/2147483647/sessions/revoke', { reason: REASON, confirm: 'yes' });
      assert.equal(gone.status, 404, locale);
      assert.ok(gone.text.includes(`<a href="/admin">${words.text('admin.backToConsole')}</a>`), `${locale}: a form about a member who is not there`);
    }
  });

  test('a console error in Chinese is told in the page\'s language where the error has words, and where it has none its English message is named as the untranslated original, never as for developers', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    const app = await newClient(t);
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      const words = translator(locale);
      admin.visitor.cookies.set('lang', locale);
      // attack88's refusal (a verify form made by hand) has words of its own: nothing in English.
      const refused = await admin.visitor.post(`/admin/apps/${app.client.clientId}/verified`, { verified: 'yes', reason: REASON, confirm: 'yes' });
      assert.equal(refused.status, 400, locale);
      assert.ok(refused.text.includes(words.text('admin.verifyFormIncomplete')), `${locale}: the refusal's own words`);
      assert.ok(!refused.text.includes('<details>') && !refused.text.includes('The form did not carry'), `${locale}: no English left`);
      // A status no form offers has none: the console's words, and its message below, named as what it is.
      const odd = await admin.visitor.post(`/admin/members/${member.user.id}/status`, { status: 'frozen', reason: REASON, confirm: 'yes' });
      assert.equal(odd.status, 400, locale);
      assert.ok(odd.text.includes(words.text('errors.consoleInvalidRequest')), `${locale}: the console's words`);
      assert.ok(odd.text.includes(`<details><summary>${words.text('errors.untranslatedMessage')}</summary><p><code lang="en">status must be active, suspended, banned or deleted.</code>`), `${locale}: the untranslated message, named so`);
      assert.ok(!odd.text.includes(words.text('errors.details')), `${locale}: staff are not told it is for developers`);
      // A member who is not there: the not-found words, nothing in English.
      const missing = await admin.visitor.get('/admin/members/2147483647');
      assert.equal(missing.status, 404, locale);
      assert.ok(missing.text.includes(words.text('errors.nothingHere')) && !missing.text.includes('<details>'), `${locale}: a missing member`);
      for (const page of [refused, odd, missing]) assert.deepEqual(englishSentences(page.text), [], `${locale}: ${page.status}`);
    }
  });

  test('an error whose message the catalogs translate is told in their words alone, never again in English: a malformed member id, a refused form, in the console and on the site', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      const words = translator(locale);
      // The page's language as the browser asks for it, then as the site's language cookie sets it.
      admin.visitor.cookies.delete('lang');
      const byBrowser = await admin.visitor.request('/admin/members/abc', { headers: { 'accept-language': locale } });
      admin.visitor.cookies.set('lang', locale);
      member.visitor.cookies.set('lang', locale);
      const pages = [
        { what: 'a malformed member id, by Accept-Language', page: byBrowser, status: 404, key: 'errors.nothingHere' },
        { what: 'a malformed member id, by the language cookie', page: await admin.visitor.get('/admin/members/abc'), status: 404, key: 'errors.nothingHere' },
        { what: 'a console form without its CSRF field', page: await admin.visitor.post(`/admin/members/${member.user.id}/status`, { status: 'suspended', reason: REASON, confirm: 'yes' }, { csrf: null }), status: 403, key: 'errors.formExpired' },
        { what: 'a malformed post id', page: await member.visitor.get('/posts/abc'), status: 404, key: 'errors.nothingHere' },
        { what: 'a post that does not exist', page: await member.visitor.get('/posts/2147483647'), status: 404, key: 'errors.nothingHere' },
        { what: 'a site form without its CSRF field', page: await member.visitor.post('/posts/new', { title: 'x', body: 'x', category: 'x' }, { csrf: null }), status: 403, key: 'errors.formExpired' },
      ];
      for (const { what, page, status, key } of pages) {
        assert.equal(page.status, status, `${locale}: ${what}`);
        assert.match(page.text, new RegExp(`<html lang="${locale}">`), `${locale}: ${what}`);
        assert.ok(page.text.includes(`<p>${words.text(key)}</p>`), `${locale}: ${what}: its words`);
        assert.ok(!page.text.includes('<details>'), `${locale}: ${what}: no English below them`);
        assert.deepEqual(englishSentences(page.text), [], `${locale}: ${what}`);
      }
    }
  });

  test('staff whose role changed while they acted read it in their language, and nothing was done', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    admin.visitor.cookies.set('lang', 'zh-CN');
    // Another admin makes them a moderator after the gate read their role, before the change's transaction.
    const stores = t.deps.stores;
    const transaction = stores.transaction;
    // Only the change's own transaction: the app's background work may open one first (as it did
    // on a loaded machine, taking the role change with it and leaving the change to go through).
    stores.transaction = (async (work: Parameters<typeof transaction>[0]) => {
      if (new Error().stack?.includes('makeStaffChange')) {
        stores.transaction = transaction;
        await stores.roles.setRole(admin.user.id, 'moderator', t.clock.now());
      }
      return transaction.call(stores, work);
    }) as typeof transaction;
    try {
      const refused = await admin.visitor.post(`/admin/members/${member.user.id}/status`, { status: 'suspended', reason: REASON, confirm: 'yes' });
      assert.equal(refused.status, 403);
      assert.ok(refused.text.includes(translator('zh-CN').text('admin.roleChangedWhileActing')), 'its own words');
      assert.deepEqual(englishSentences(refused.text), []);
    } finally {
      stores.transaction = transaction;
    }
    assert.equal((await stores.users.findById(member.user.id))?.status, 'active', 'nothing was done');
  });

  test('an address under /admin that does not exist leads staff back to the console, in their language; anyone else gets the site\'s own not-found page', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    for (const locale of LOCALES) {
      const words = translator(locale);
      admin.visitor.cookies.set('lang', locale);
      for (const path of ['/admin/nonexistent', '/admin/members/1/nonexistent']) {
        const page = await admin.visitor.get(path);
        assert.equal(page.status, 404, `${locale} ${path}`);
        assert.ok(page.text.includes(`<a href="/admin">${words.text('admin.backToConsole')}</a>`), `${locale} ${path}: back to the console`);
        assert.ok(!page.text.includes('<a href="/">'), `${locale} ${path}: not to the home page`);
        if (locale !== 'en') assert.deepEqual(englishSentences(page.text), [], `${locale} ${path}`);
      }
    }
    const elsewhere = (await member.visitor.get('/nonexistent')).text;
    const console = (await member.visitor.get('/admin/nonexistent')).text;
    const withoutReturn = (text: string) => text.replace(/action="\/language\?[^"]*"/, '');
    assert.equal(withoutReturn(console), withoutReturn(elsewhere), 'a member learns nothing of the console');
  });
});
