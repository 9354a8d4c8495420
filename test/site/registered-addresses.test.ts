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
      ['zh-TW', `${page}/redirect-uris`, { redirect_uris: 'https://Address.example/cb' }, /請寫作「address\.example」/],
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
      ['en', `${page}/redirect-uris`, { redirect_uris: 'https://dots.example/alice/%2e%2e/mallory/cb' }, /has a \. or \.\. segment in its path, which a browser removes before it goes there: write the path it goes to, “\/mallory\/cb”\./],
      ['zh-CN', `${page}/redirect-uris`, { redirect_uris: 'https://dots.example/a/./cb' }, /的路径中含有 \. 或 \.\. 段，浏览器前往前会将其去掉：请写出实际前往的路径“\/a\/cb”。/],
      ['zh-TW', `${page}/redirect-uris`, { redirect_uris: 'com.example.dots:/app/.%2E/cb' }, /的路徑中含有 \. 或 \.\. 區段，瀏覽器前往前會將其移除：請寫出實際前往的路徑「\/cb」。/],
      ['en', `${page}/logout-uris`, { post_logout_redirect_uris: 'https://dots.example/x/../bye', backchannel_logout_uri: '' }, /write the path it goes to, “\/bye”\./],
      ['en', `${page}/logout-uris`, { post_logout_redirect_uris: '', backchannel_logout_uri: 'https://dots.example/bc/%2E' }, /write the path it goes to, “\/bc\/”\./],
    ];
    await allRefused(visitor, refusals);
    assert.deepEqual(await t.deps.stores.clients.findById(client.clientId), client, 'nothing saved');
  });

  test('the developer page refuses an address with its scheme in capitals or its scheme\'s default port, which a browser leaves out, saying in the page\'s language that the address an app sends as a browser writes it is another string, and what to register', async () => {
    const { user, visitor, client, page } = await memberWithApp('Port App', 'https://port.example:8443/cb');
    const refusals: Refusal[] = [
      ['en', '/settings/developers', { name: 'Other App', redirect_uris: 'https://port.example:443/cb', type: 'public' }, /“https:\/\/port\.example:443\/cb” writes the default port 443 of https\. Browsers and URL parsers write this address without it, so an app that sends the address as they write it sends another string, and addresses are compared as exact strings: register “https:\/\/port\.example\/cb”\./],
      ['zh-CN', `${page}/redirect-uris`, { redirect_uris: 'HTTPS://port.example/cb' }, /的协议名含有大写字母，而浏览器发送的地址中协议名是小写的，两者永远无法精确匹配：请写作“https:\/\/port\.example\/cb”。/],
      ['zh-TW', `${page}/logout-uris`, { post_logout_redirect_uris: 'http://localhost:80/bye', backchannel_logout_uri: '' }, /寫出了 http 的預設連接埠 80。瀏覽器和網址解析程式庫寫這個網址時都會省略預設連接埠，應用程式照此送出的網址便是另一個字串，而網址須逐字相同才能比對成功：請填寫「http:\/\/localhost\/bye」。/],
      ['zh-CN', `${page}/logout-uris`, { post_logout_redirect_uris: 'https://port.example:443/bye', backchannel_logout_uri: '' }, /写出了 https 的默认端口 443。浏览器和网址解析库写这个地址时都会省略默认端口，应用照此发送的地址便是另一个字符串，而地址须逐字相同才能匹配：请填写“https:\/\/port\.example\/bye”。/],
    ];
    await allRefused(visitor, refusals);
    assert.equal((await t.deps.stores.clients.listByOwner(user.id)).length, 1);
    assert.deepEqual(await t.deps.stores.clients.findById(client.clientId), client, 'nothing saved');
  });

  test('an address the app has, saved before a stricter rule, is saved again as it is when its owner saves its list; a new or edited line is checked by today\'s rules', async () => {
    const { visitor, client, page } = await memberWithApp('Old Rules App', 'https://old.example/cb');
    // Stored before the scheme's case and the default port were refused.
    const storedRedirects = ['https://old.example:443/cb', 'HTTPS://old.example/cb'];
    const storedLogout = { postLogoutRedirectUris: ['https://old.example:443/bye'], backchannelLogoutUri: 'HTTPS://old.example/bc' };
    assert.ok(await t.deps.stores.clients.setRedirectUris(client.clientId, storedRedirects, t.clock.now(), 'operator'));
    assert.ok(await t.deps.stores.clients.setLogoutUris(client.clientId, storedLogout, t.clock.now(), 'operator'));
    visitor.cookies.set('lang', 'en');

    const added = await visitor.post(`${page}/redirect-uris`, { redirect_uris: [...storedRedirects, 'https://old.example/new'].join('\n') });
    assert.equal(added.status, 303, added.text);
    assert.deepEqual((await t.deps.stores.clients.findById(client.clientId))!.redirectUris, [...storedRedirects, 'https://old.example/new']);
    const logout = await visitor.post(`${page}/logout-uris`, { post_logout_redirect_uris: 'https://old.example:443/bye\nhttps://old.example/bye2', backchannel_logout_uri: 'HTTPS://old.example/bc' });
    assert.equal(logout.status, 303, logout.text);
    const saved = (await t.deps.stores.clients.findById(client.clientId))!;
    assert.deepEqual([saved.postLogoutRedirectUris, saved.backchannelLogoutUri], [['https://old.example:443/bye', 'https://old.example/bye2'], 'HTTPS://old.example/bc']);

    const unchanged = await t.deps.stores.clients.findById(client.clientId);
    await allRefused(visitor, [
      ['en', `${page}/redirect-uris`, { redirect_uris: 'https://old.example:443/cb\nhttps://old.example:443/cb2' }, /“https:\/\/old\.example:443\/cb2” writes the default port 443 of https/],
      ['en', `${page}/logout-uris`, { post_logout_redirect_uris: 'https://old.example:443/bye\nHTTPS://old.example/bye3', backchannel_logout_uri: 'HTTPS://old.example/bc' }, /“HTTPS:\/\/old\.example\/bye3” writes its scheme in capital letters/],
    ]);
    assert.deepEqual(await t.deps.stores.clients.findById(client.clientId), unchanged, 'nothing saved');
  });

  test('the default port is refused only where it makes a second spelling that compares otherwise: a loopback IP redirect URI matches on any port (RFC 8252 7.3) and a back-channel logout URI is compared with nothing, so both may write it', async () => {
    const loopback = ['http://127.0.0.1:80/cb', 'http://[::1]:80/cb'];
    const { visitor, client, page } = await memberWithApp('Loopback Port App', loopback.join('\n'));
    assert.deepEqual(client.redirectUris, loopback);
    const logout = await visitor.post(`${page}/logout-uris`, { post_logout_redirect_uris: 'http://127.0.0.1:80/bye', backchannel_logout_uri: 'https://port.example:443/bc' });
    assert.equal(logout.status, 303, logout.text);
    const saved = (await t.deps.stores.clients.findById(client.clientId))!;
    assert.deepEqual([saved.postLogoutRedirectUris, saved.backchannelLogoutUri], [['http://127.0.0.1:80/bye'], 'https://port.example:443/bc']);
    const capitals = await visitor.post(`${page}/logout-uris`, { post_logout_redirect_uris: '', backchannel_logout_uri: 'HTTPS://port.example/bc' });
    assert.equal(capitals.status, 303, capitals.text);
    // Where the two spellings compare as two, the rule stays: localhost is matched exactly (RFC 8252 8.3), and so is the scheme.
    await allRefused(visitor, [
      ['en', `${page}/redirect-uris`, { redirect_uris: 'http://localhost:80/cb' }, /“http:\/\/localhost:80\/cb” writes the default port 80 of http/],
      ['en', `${page}/redirect-uris`, { redirect_uris: 'HTTP://127.0.0.1:80/cb' }, /“HTTP:\/\/127\.0\.0\.1:80\/cb” writes its scheme in capital letters, .*http:\/\/127\.0\.0\.1:80\/cb/],
    ]);
  });
});
