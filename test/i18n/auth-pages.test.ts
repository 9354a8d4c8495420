/**
 * The pages on the way in and out (sign-in, sign-up, consent, sign-out, error pages) in the
 * reader's language, over real HTTP on each database (INTERFACE section 12): no English sentence
 * left in Chinese, `ui_locales` kept from the app's request to its consent page, nicknames at
 * sign-up, and the consent page's scopes in plain words.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type PageResponse, Visitor, signedInMember } from '../site/visitor.js';
import { englishSentences } from './untranslated.js';

const PASSWORD = 'correct horse battery staple';
const REDIRECT_URI = 'https://reader.example/cb';
/** Names that are the same in every language. */
const PROPER_NOUNS = ['Reader App', 'English'];

const langOf = (text: string) => /<html lang="([^"]+)">/.exec(text)?.[1];
const headingOf = (text: string) => /<h1>([\s\S]*?)<\/h1>/.exec(text)?.[1]?.replace(/<[^>]+>/g, '');
const hidden = (text: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(text)?.[1]?.replace(/&amp;/g, '&');

forEachDatabase('the pages on the way in and out, in Chinese', (database) => {
  let t: TestApp;
  let counter = 0;
  let clientId: string;
  before(async () => {
    t = await startTestApp(database);
    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: 'Reader App', type: 'public', redirectUris: [REDIRECT_URI], homepageUrl: 'https://reader.example',
    });
    clientId = client.clientId;
  });
  after(async () => t.close());

  const name = (prefix: string) => `${prefix}${++counter}${randomBytes(2).toString('hex')}`;

  function authorizeQuery(extra: Record<string, string> = {}): string {
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    return new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, scope: 'profile:read posts:read', state: 's',
      code_challenge: challenge, code_challenge_method: 'S256', ...extra,
    }).toString();
  }

  /** A page asked in `locale` (Accept-Language) that must be wholly in it, with `heading` as its h1. */
  function assertInChinese(page: PageResponse, locale: 'zh-CN' | 'zh-TW', heading: string, what: string): void {
    assert.equal(langOf(page.text), locale, what);
    assert.equal(headingOf(page.text)?.trim(), heading, what);
    assert.deepEqual(englishSentences(page.text, PROPER_NOUNS), [], what);
  }

  test('sign-in, sign-up, sign-out and error pages have no English sentence in zh-CN or zh-TW, and their headings are translated', async () => {
    const headings = {
      'zh-CN': { signIn: '登录', signUp: '注册账号', signedOut: '你已退出登录', signOut: '要退出社区的登录吗？', notFound: '找不到页面', failed: '操作没有成功' },
      'zh-TW': { signIn: '登入', signUp: '註冊帳號', signedOut: '你已登出', signOut: '要登出社群嗎？', notFound: '找不到頁面', failed: '操作未成功' },
    } as const;
    for (const locale of ['zh-CN', 'zh-TW'] as const) {
      const words = headings[locale];
      const visitor = new Visitor(t.baseUrl);
      visitor.cookies.set('lang', locale);
      assertInChinese(await visitor.get('/login'), locale, words.signIn, `${locale} sign-in`);
      assertInChinese(await visitor.get('/signup'), locale, words.signUp, `${locale} sign-up`);
      const refused = await visitor.post('/login', { username: 'nobody', password: 'not a password', return_to: '/' });
      assert.equal(refused.status, 401);
      assertInChinese(refused, locale, words.signIn, `${locale} wrong sign-in`);
      const badSignUp = await visitor.post('/signup', { username: name('bidi'), nickname: 'a\u202eb', password: PASSWORD, return_to: '/' });
      assert.equal(badSignUp.status, 400);
      assertInChinese(badSignUp, locale, words.signUp, `${locale} sign-up with a wrong nickname`);
      assertInChinese(await visitor.get('/logout'), locale, words.signedOut, `${locale} signed out`);
      assertInChinese(await visitor.get('/no/such/page'), locale, words.notFound, `${locale} 404`);
      assertInChinese(await visitor.request('/login', { method: 'DELETE' }), locale, words.failed, `${locale} 405`);
      const forged = await visitor.post('/login', { username: 'a', password: 'b' }, { csrf: 'x'.repeat(43) });
      assert.equal(forged.status, 403);
      assertInChinese(forged, locale, words.failed, `${locale} an expired form`);

      const { visitor: member } = await signedInMember(t, name('reader'), PASSWORD);
      member.cookies.set('lang', locale);
      assertInChinese(await member.get('/logout'), locale, words.signOut, `${locale} sign out?`);
    }
  });

  test('a refused request of an app nobody answers for, shown on this site\'s page, says what went wrong in the reader\'s language', async () => {
    const owner = await createAccount(t.deps.stores, t.clock, { username: name('owner'), password: PASSWORD });
    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: 'Reader App', type: 'public', redirectUris: [REDIRECT_URI], ownerId: owner.id, memberRegistered: true,
    });
    const refused = (extra: Record<string, string>) => new Visitor(t.baseUrl)
      .request(`/oauth/authorize?${authorizeQuery({ client_id: client.clientId, ...extra })}`, { headers: { 'accept-language': 'zh-CN' } });
    const badScope = await refused({ scope: 'bogus' });
    assert.equal(badScope.status, 400);
    assert.match(badScope.text, /这个应用请求了本站没有提供、或不允许它请求的权限。/);
    const silent = await refused({ prompt: 'none' });
    assert.equal(silent.status, 400);
    assert.match(silent.text, /这个应用想在不打扰你的情况下完成登录，但你需要先登录本站或同意授权。/);
    assert.match(silent.text, /<details><summary>开发者参考信息<\/summary>/, 'the English description stays for the developer');
  });

  test('a consent page\'s title in Chinese sets a Latin app name apart by spaces, as no stylesheet reaches a title; a Chinese name stands close', async () => {
    const { visitor } = await signedInMember(t, name('titled'), PASSWORD);
    const titleOf = async (query: string) => /<title>([^<]*)<\/title>/.exec((await visitor.request(`/oauth/authorize?${query}`, { headers: { 'accept-language': 'zh-CN' } })).text)?.[1];
    assert.equal(await titleOf(authorizeQuery()), '允许 Reader App 访问？ · 社区');
    const { client } = await registerClient(t.deps.stores, t.clock, { name: '读书笔记', type: 'public', redirectUris: [REDIRECT_URI] });
    assert.equal(await titleOf(authorizeQuery({ client_id: client.clientId })), '允许读书笔记访问？ · 社区');
  });

  test('a 405 page lists the methods an address takes as the reader\'s language writes a list, not with an English comma', async () => {
    const visitor = new Visitor(t.baseUrl);
    visitor.cookies.set('lang', 'zh-CN');
    const page = await visitor.request('/login', { method: 'DELETE' });
    assert.equal(page.status, 405);
    assert.equal(page.headers.get('allow'), 'GET, HEAD, POST', 'the header stays as HTTP writes it');
    assert.match(page.text, /这个地址只接受 <code>GET<\/code>、<code>HEAD<\/code>和<code>POST<\/code> 请求/);
    assert.doesNotMatch(page.text, /<\/code>, <code>/);
  });

  test('a member or a post that does not exist is "page not found" in the reader\'s language, as an address no route takes is', async () => {
    const words = {
      en: { heading: 'Page not found', message: 'There is nothing at this address.' },
      'zh-CN': { heading: '找不到页面', message: '这个地址没有内容。' },
      'zh-TW': { heading: '找不到頁面', message: '這個網址沒有內容。' },
    } as const;
    for (const locale of ['en', 'zh-CN', 'zh-TW'] as const) {
      const visitor = new Visitor(t.baseUrl);
      visitor.cookies.set('lang', locale);
      for (const path of ['/u/nosuchmember', '/posts/2147483647', '/no/such/page']) {
        const page = await visitor.get(path);
        assert.equal(page.status, 404, `${locale} ${path}`);
        assert.equal(langOf(page.text), locale, `${locale} ${path}`);
        assert.equal(headingOf(page.text)?.trim(), words[locale].heading, `${locale} ${path}`);
        assert.ok(page.text.includes(`<p>${words[locale].message}</p>`), `${locale} ${path}: ${page.text}`);
      }
    }
  });

  test('an action on something already gone says it did not work, not "page not found": the page is there', async () => {
    const { visitor } = await signedInMember(t, name('twotabs'), PASSWORD);
    visitor.cookies.set('lang', 'zh-CN');
    const csrf = await visitor.csrf();
    const revoked = await visitor.post('/settings/tokens/revoke', { token_id: '2147483647', confirm: 'yes' }, { csrf });
    assert.equal(revoked.status, 404);
    assert.equal(langOf(revoked.text), 'zh-CN');
    assert.equal(headingOf(revoked.text)?.trim(), '操作没有成功');
    assert.ok(!revoked.text.includes('这个地址没有内容。'), revoked.text);
  });

  test('after POST /logout the page says the person is signed out', async () => {
    const { visitor } = await signedInMember(t, name('leaver'), PASSWORD);
    const csrf = await visitor.csrf();
    const out = await visitor.post('/logout', {}, { csrf });
    assert.equal(out.status, 303);
    assert.equal(out.location, '/logout');
    const page = await visitor.get('/logout');
    assert.equal(page.status, 200);
    assert.match(page.text, /<h1>You are signed out<\/h1>/);
    assert.doesNotMatch(page.text, /action="\/logout"/, 'no sign-out button: nobody is signed in');
  });

  test('林小伟 signs up as linxw with the nickname 林小伟, and the header names them 林小伟 @linxw', async () => {
    const username = `linxw${++counter}`;
    const visitor = new Visitor(t.baseUrl);
    const created = await visitor.post('/signup', { username, nickname: '  林小伟 ', password: PASSWORD, return_to: '/' });
    assert.equal(created.status, 303, created.text);
    assert.equal((await t.deps.stores.users.findByUsername(username))?.nickname, '林小伟');
    const home = await visitor.get('/');
    assert.ok(home.text.includes(`<a class="person" href="/u/${username}"><bdi class="nickname">林小伟</bdi> <span class="handle">@${username}</span></a>`), home.text);
  });

  test('an empty nickname at sign-up is the username', async () => {
    const username = name('plain');
    const visitor = new Visitor(t.baseUrl);
    assert.equal((await visitor.post('/signup', { username, nickname: '', password: PASSWORD, return_to: '/' })).status, 303);
    assert.equal((await t.deps.stores.users.findByUsername(username))?.nickname, username);
  });

  test('a nickname with a bidi override or a zero-width joiner is refused: the form again, 400, nothing created', async () => {
    for (const nickname of ['abc\u202Egnp', 'Li\u200DWei']) {
      const username = name('sneaky');
      const visitor = new Visitor(t.baseUrl);
      const refused = await visitor.post('/signup', { username, nickname, password: PASSWORD, return_to: '/' });
      assert.equal(refused.status, 400, JSON.stringify(nickname));
      assert.match(refused.text, /<input type="text" id="nickname" name="nickname"[^>]*aria-invalid="true"/);
      assert.match(refused.text, /<p class="field-error" id="nickname-error">Use letters, digits, punctuation and single spaces of any script/);
      assert.equal(hidden(refused.text, 'return_to'), '/');
      assert.equal(await t.deps.stores.users.findByUsername(username), undefined);
    }
  });

  test('a nickname far over 30 characters at sign-up gets the nickname\'s own message in the reader\'s language, the form kept, never the bare error page', async () => {
    // Length is the core's rule with the core's words (docs/site.md, "Pages and errors"): a pasted
    // paragraph must read "nickname is 1 to 30 characters", not "go back to the app".
    for (const length of [31, 1001, 5000]) {
      const username = name('long');
      const visitor = new Visitor(t.baseUrl);
      visitor.cookies.set('lang', 'zh-CN');
      const refused = await visitor.post('/signup', { username, nickname: '林'.repeat(length), password: PASSWORD, return_to: '/' });
      assert.equal(refused.status, 400, `${length} characters`);
      assert.match(refused.text, /<p class="field-error" id="nickname-error">昵称为 1 到 30 个字符。<\/p>/, `${length} characters`);
      assert.ok(refused.text.includes(`name="username" value="${username}"`), `${length} characters: the username is kept`);
      assert.equal(await t.deps.stores.users.findByUsername(username), undefined);
    }
  });

  test('the sign-up page welcomes, and offers to show the password by a script file, hidden without it', async () => {
    const page = (await new Visitor(t.baseUrl).get('/signup')).text;
    assert.match(page, /<p>Welcome! /);
    assert.match(page, /<div class="check" hidden><input type="checkbox" id="show-password" data-show-password="password">/);
    assert.match(page, /<script src="\/static\/show-password.js" defer><\/script>/);
    const script = await fetch(`${t.baseUrl}/static/show-password.js`);
    assert.equal(script.status, 200);
    assert.match(await script.text(), /data-show-password/);
  });

  test('ui_locales=zh-CN of an app\'s request carries the sign-in, sign-up and consent pages in zh-CN over Accept-Language: en', async () => {
    const english = { 'accept-language': 'en' };
    const visitor = new Visitor(t.baseUrl);
    const authorize = `/oauth/authorize?${authorizeQuery({ ui_locales: 'zh-CN' })}`;
    const toSignIn = await visitor.request(authorize, { headers: english });
    assert.equal(toSignIn.status, 302);
    const signIn = await visitor.request(toSignIn.location!, { headers: english });
    assertInChinese(signIn, 'zh-CN', '登录后继续使用Reader App', 'sign-in');
    const signUpPath = /<a href="(\/signup\?[^"]+)">/.exec(signIn.text)![1]!.replace(/&amp;/g, '&');
    const signUp = await visitor.request(signUpPath, { headers: english });
    assertInChinese(signUp, 'zh-CN', '注册后继续使用Reader App', 'sign-up');
    const created = await visitor.post('/signup', { username: name('newcomer'), password: PASSWORD, return_to: hidden(signUp.text, 'return_to')! });
    assert.equal(created.status, 303);
    const consent = await visitor.request(created.location!, { headers: english });
    assert.equal(consent.status, 200);
    assertInChinese(consent, 'zh-CN', '允许Reader App使用你的账号？', 'consent');
    assert.match(consent.text, /<strong class="scope-title">读取你的个人资料<\/strong> <small class="muted"><code>profile:read<\/code><\/small>/);
  });

  test('ui_locales=zh-CN is kept through the second step of a two-step sign-in, a wrong code included, to the consent page', async () => {
    const username = name('twostep');
    const { visitor: owner } = await signedInMember(t, username, PASSWORD);
    const started = await owner.post('/settings/security', { action: 'totp-start' });
    const secret = /id="totp-secret">([A-Z2-7 ]+)</.exec(started.text)![1]!.replace(/ /g, '');
    assert.equal((await owner.post('/settings/security', { action: 'totp-confirm', code: totpCode(secret, t.clock.now()) })).status, 200);
    t.clock.advance(30_000);

    const english = { 'accept-language': 'en' };
    const visitor = new Visitor(t.baseUrl);
    const toSignIn = await visitor.request(`/oauth/authorize?${authorizeQuery({ ui_locales: 'zh-CN' })}`, { headers: english });
    const signIn = await visitor.request(toSignIn.location!, { headers: english });
    const first = await visitor.post('/login', { username, password: PASSWORD, return_to: hidden(signIn.text, 'return_to')! });
    assert.equal(first.location, '/login/second-step');
    assert.equal(langOf((await visitor.request('/login/second-step', { headers: english })).text), 'zh-CN');
    const wrong = await visitor.post('/login/second-step', { code: '000000' === totpCode(secret, t.clock.now()) ? '111111' : '000000' });
    assert.equal(wrong.status, 401);
    assert.equal(langOf(wrong.text), 'zh-CN');
    assert.match(wrong.text, /验证码不正确或已被使用/);
    const second = await visitor.post('/login/second-step', { code: totpCode(secret, t.clock.now()) });
    assert.equal(second.status, 303);
    const consent = await visitor.request(second.location!, { headers: english });
    assert.equal(langOf(consent.text), 'zh-CN');
  });

  test('a pushed request\'s ui_locales=zh-TW is kept through sign-in to the consent page', async () => {
    const pushed = await fetch(`${t.baseUrl}/api/oauth/par`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: authorizeQuery({ ui_locales: 'zh-TW' }),
    });
    assert.equal(pushed.status, 201, await pushed.clone().text());
    const { request_uri: requestUri } = await pushed.json() as { request_uri: string };
    const username = name('pusher');
    await createAccount(t.deps.stores, t.clock, { username, password: PASSWORD });
    const visitor = new Visitor(t.baseUrl);
    const english = { 'accept-language': 'en' };
    const toSignIn = await visitor.request(`/oauth/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`, { headers: english });
    assert.equal(toSignIn.status, 302);
    const signIn = await visitor.request(toSignIn.location!, { headers: english });
    assertInChinese(signIn, 'zh-TW', '登入後繼續使用Reader App', 'sign-in');
    const signedIn = await visitor.post('/login', { username, password: PASSWORD, return_to: hidden(signIn.text, 'return_to')! });
    assert.equal(signedIn.status, 303);
    const consent = await visitor.request(signedIn.location!, { headers: english });
    assertInChinese(consent, 'zh-TW', '允許Reader App使用你的帳號？', 'consent');
  });

  test('on a repeat request the scopes not granted before are marked new, and the Not list names only what the site holds', async () => {
    const { user, visitor } = await signedInMember(t, name('returning'), PASSWORD);
    await t.deps.stores.consents.save(user.id, clientId, 'profile:read', t.clock.now());
    const consent = await visitor.get(`/oauth/authorize?${authorizeQuery()}`);
    assert.equal(consent.status, 200);
    const items = [...consent.text.matchAll(/<li><strong class="scope-title">([^<]+)<\/strong>([\s\S]*?)<\/li>/g)].map((m) => [m[1], m[2]!]);
    assert.deepEqual(items.map(([title, rest]) => [title, /<span class="tag">new<\/span>/.test(rest!)]), [['Read your profile', false], ['Read the posts you published', true]]);
    assert.doesNotMatch(consent.text, /wallet|devices|private messages/i);
    assert.match(consent.text, /Not: Your e-mail address and account status\./);

    const first = await (await signedInMember(t, name('firsttime'), PASSWORD)).visitor.get(`/oauth/authorize?${authorizeQuery()}`);
    assert.doesNotMatch(first.text, /class="tag"/, 'a first request marks nothing: everything is new');
  });
});
