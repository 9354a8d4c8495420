/**
 * The developer page's addresses by the rule registration applies everywhere (`registeredUri` in
 * src/core/oauth/clients.ts), over real HTTP on each database: an address a browser reads as
 * another host, or that holds a parameter of the service's answer, is refused in the page's
 * language, for redirect, post-logout and back-channel logout URIs, and nothing is saved.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Visitor, signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';

/** A form post refused: the page's language, the path, the fields, and what the page says why. */
type Refusal = [string, string, Record<string, string>, RegExp];

/** Posts each of `refusals` in its language and sees it refused (400) saying why. */
async function allRefused(visitor: Visitor, refusals: readonly Refusal[]): Promise<void> {
  for (const [locale, path, fields, why] of refusals) {
    visitor.cookies.set('lang', locale);
    const refused = await visitor.post(path, fields);
    assert.equal(refused.status, 400, `${path} ${JSON.stringify(fields)}`);
    assert.match(refused.text, why, `${path} ${JSON.stringify(fields)}`);
  }
}

forEachDatabase('addresses on the developer page', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  /** A member signed in with a public app registered on the developer page with `redirectUris`, and the app's page. */
  async function memberWithApp(name: string, redirectUris: string, why?: string) {
    const { user, visitor } = await signedInMember(t, `addresser${++counter}`, PASSWORD);
    const registered = await visitor.post('/settings/developers', { name, redirect_uris: redirectUris, type: 'public' });
    assert.equal(registered.status, 303, why);
    const [client] = await t.deps.stores.clients.listByOwner(user.id);
    return { user, visitor, client: client!, page: `/settings/developers/${client!.clientId}` };
  }

  test('the developer page refuses an address a browser reads as another host, or holding a parameter of the answer, saying why in the page\'s language, and saves nothing', async () => {
    const { user, visitor, client, page } = await memberWithApp('Address App', 'https://address.example/cb');
    const refusals: Refusal[] = [
      ['zh-CN', '/settings/developers', { name: 'Other App', redirect_uris: 'https://evil.example\\@trusted.example/cb', type: 'public' }, /含有网址中不允许的字符/],
      ['zh-CN', `${page}/redirect-uris`, { redirect_uris: 'https:///cb' }, /没有主机名/],
      ['zh-TW', `${page}/redirect-uris`, { redirect_uris: 'https://*.address.example/cb' }, /的主機不是網域名稱或 IP 位址/],
      ['zh-TW', `${page}/redirect-uris`, { redirect_uris: 'https://Address.example/cb' }, /請寫作 address\.example/],
      ['en', `${page}/redirect-uris`, { redirect_uris: 'https://address.example/cb?state=evil&code=x' }, /has the query parameter state, which this site adds to the answer itself/],
      ['en', `${page}/logout-uris`, { post_logout_redirect_uris: 'https://address.example/bye?state=x', backchannel_logout_uri: '' }, /has the query parameter state/],
      ['zh-CN', `${page}/logout-uris`, { post_logout_redirect_uris: '', backchannel_logout_uri: 'https://address.example\\bc' }, /含有网址中不允许的字符/],
    ];
    await allRefused(visitor, refusals);
    assert.equal((await t.deps.stores.clients.listByOwner(user.id)).length, 1);
    assert.deepEqual(await t.deps.stores.clients.findById(client.clientId), client, 'nothing saved');
  });

  test('the developer page refuses an address whose path holds a . or .. segment (%2e too), which a browser removes before it goes there, saying in the page\'s language which path it goes to', async () => {
    const { visitor, client, page } = await memberWithApp('Dots App', 'https://dots.example/a..b/.well-known/cb\ncom.example.dots:a/../cb', 'a dot inside a segment is no dot segment, nor is one in an opaque path, which a browser keeps');
    const refusals: Refusal[] = [
      ['en', `${page}/redirect-uris`, { redirect_uris: 'https://dots.example/alice/%2e%2e/mallory/cb' }, /has a \. or \.\. segment in its path, which a browser removes before it goes there: write the path it goes to, \/mallory\/cb\./],
      ['zh-CN', `${page}/redirect-uris`, { redirect_uris: 'https://dots.example/a/./cb' }, /的路径中含有 \. 或 \.\. 段，浏览器前往前会将其去掉：请写出实际前往的路径 \/a\/cb。/],
      ['zh-TW', `${page}/redirect-uris`, { redirect_uris: 'com.example.dots:/app/.%2E/cb' }, /的路徑中含有 \. 或 \.\. 區段，瀏覽器前往前會將其移除：請寫出實際前往的路徑 \/cb。/],
      ['en', `${page}/logout-uris`, { post_logout_redirect_uris: 'https://dots.example/x/../bye', backchannel_logout_uri: '' }, /write the path it goes to, \/bye\./],
      ['en', `${page}/logout-uris`, { post_logout_redirect_uris: '', backchannel_logout_uri: 'https://dots.example/bc/%2E' }, /write the path it goes to, \/bc\/\./],
    ];
    await allRefused(visitor, refusals);
    assert.deepEqual(await t.deps.stores.clients.findById(client.clientId), client, 'nothing saved');
  });

  test('the developer page refuses an address with its scheme in capitals or its scheme\'s default port, which a browser leaves out, saying in the page\'s language how to write it', async () => {
    const { user, visitor, client, page } = await memberWithApp('Port App', 'https://port.example:8443/cb');
    const refusals: Refusal[] = [
      ['en', '/settings/developers', { name: 'Other App', redirect_uris: 'https://port.example:443/cb', type: 'public' }, /writes the default port 443 of https, which a browser leaves out of the address it sends, so the two never match exactly: write it as https:\/\/port\.example\/cb\./],
      ['zh-CN', `${page}/redirect-uris`, { redirect_uris: 'HTTPS://port.example/cb' }, /的协议名含有大写字母，而浏览器发送的地址中协议名是小写的，两者永远无法精确匹配：请写作 https:\/\/port\.example\/cb。/],
      ['zh-TW', `${page}/logout-uris`, { post_logout_redirect_uris: 'http://127.0.0.1:80/bye', backchannel_logout_uri: '' }, /寫出了 http 的預設連接埠 80，瀏覽器送出的網址中會省略它，兩者永遠無法精確比對：請寫作 http:\/\/127\.0\.0\.1\/bye。/],
      ['zh-CN', `${page}/logout-uris`, { post_logout_redirect_uris: '', backchannel_logout_uri: 'https://port.example:443/bc' }, /写出了 https 的默认端口 443，浏览器发送的地址中会省略它，两者永远无法精确匹配：请写作 https:\/\/port\.example\/bc。/],
    ];
    await allRefused(visitor, refusals);
    assert.equal((await t.deps.stores.clients.listByOwner(user.id)).length, 1);
    assert.deepEqual(await t.deps.stores.clients.findById(client.clientId), client, 'nothing saved');
  });
});
