/**
 * A page's language over real HTTP on each database (INTERFACE section 12): the order it is chosen
 * in, the headers that say it, the picker, and discovery.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Visitor, signedInMember } from '../site/visitor.js';

const PASSWORD = 'correct horse battery staple';

forEachDatabase('the page language', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  const langOf = (text: string) => /<html lang="([^"]+)">/.exec(text)?.[1];

  test('Accept-Language chooses the language: <html lang>, Content-Language and Vary say it', async () => {
    const visitor = new Visitor(t.baseUrl);
    for (const [header, expected] of [['zh-HK,en;q=0.5', 'zh-TW'], ['zh-CN', 'zh-CN'], ['fr', 'en'], ['en;q=0.2, zh;q=0.8', 'zh-CN']] as const) {
      const page = await visitor.request('/login', { headers: { 'accept-language': header } });
      assert.equal(page.status, 200);
      assert.equal(langOf(page.text), expected, header);
      assert.equal(page.headers.get('content-language'), expected, header);
      assert.match(page.headers.get('vary') ?? '', /Accept-Language/);
    }
    assert.equal(langOf((await visitor.get('/login')).text), 'en', 'English without any signal');
  });

  test('the picker sets the lang cookie, which wins over Accept-Language, and comes back to a local path only', async () => {
    const visitor = new Visitor(t.baseUrl);
    const picked = await visitor.request('/language?return_to=%2Flogin%3Fx%3D1', { method: 'POST', body: new URLSearchParams({ lang: 'zh-TW' }), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(picked.status, 303);
    assert.equal(picked.location, '/login?x=1');
    assert.equal(visitor.cookies.get('lang'), 'zh-TW');
    assert.equal(langOf((await visitor.request('/login', { headers: { 'accept-language': 'en' } })).text), 'zh-TW');

    for (const away of ['https://evil.example/', '//evil.example/', '/\\evil.example']) {
      const sent = await visitor.request('/language', { method: 'POST', body: new URLSearchParams({ lang: 'en', return_to: away }), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(sent.location, '/', away);
    }
    const unknown = await visitor.request('/language', { method: 'POST', body: new URLSearchParams({ lang: 'xx' }), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(unknown.status, 303);
    assert.equal(visitor.cookies.get('lang'), 'en', 'an unknown language changes nothing');
  });

  test('a member\'s saved language wins over the cookie; the picker from our origin saves it', async () => {
    const { user, visitor } = await signedInMember(t, `linguist${++counter}`, PASSWORD);
    visitor.cookies.set('lang', 'en');
    const origin = new URL(t.baseUrl).origin;
    const foreign = await visitor.request('/language', { method: 'POST', body: new URLSearchParams({ lang: 'zh-TW', return_to: '/' }), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' } });
    assert.equal(foreign.status, 303);
    assert.equal((await t.deps.stores.users.findById(user.id))?.language, null, 'another site\'s form saves nothing to the account');
    await visitor.request('/language', { method: 'POST', body: new URLSearchParams({ lang: 'zh-CN', return_to: '/' }), headers: { 'content-type': 'application/x-www-form-urlencoded', origin } });
    assert.equal((await t.deps.stores.users.findById(user.id))?.language, 'zh-CN');
    visitor.cookies.set('lang', 'zh-TW');
    assert.equal(langOf((await visitor.get('/')).text), 'zh-CN');
  });

  test('ui_locales of the authorization request wins, and is kept on the sign-in and sign-up pages it leads to', async () => {
    const visitor = new Visitor(t.baseUrl);
    visitor.cookies.set('lang', 'en');
    const back = '/oauth/authorize?client_id=demo&ui_locales=ja%20zh-TW&response_type=code';
    const login = await visitor.request(`/login?return_to=${encodeURIComponent(back)}`, { headers: { 'accept-language': 'en' } });
    assert.equal(langOf(login.text), 'zh-TW');
    assert.equal(langOf((await visitor.get(`/signup?return_to=${encodeURIComponent(back)}`)).text), 'zh-TW');
    assert.equal(langOf((await visitor.get(`/login?return_to=${encodeURIComponent('https://evil.example/oauth/authorize?ui_locales=zh-TW')}`)).text), 'en');
  });

  test('discovery lists the languages of the pages', async () => {
    const metadata = await (await fetch(`${t.baseUrl}/.well-known/openid-configuration`)).json() as { ui_locales_supported: string[] };
    assert.deepEqual(metadata.ui_locales_supported, ['en', 'zh-CN', 'zh-TW']);
  });
});
