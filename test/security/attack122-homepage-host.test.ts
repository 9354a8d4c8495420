/**
 * attack122: an app's homepage is shown as written on the consent and signed-out pages, and its
 * link goes where a browser reads it to go.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { signedInMember } from '../site/visitor.js';
import { PASSWORD } from '../oauth/helpers.js';

forEachDatabase('attack122 homepage host', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: { TRUST_PROXY: '1' } }); });
  after(() => t.close());

  // F2: "https://cоmmunity.example/" with a Cyrillic о was saved as written: the consent page's
  // "made by … · https://cоmmunity.example/" read as the site's own address, and its link went to
  // https://xn--cmmunity-…/. Attack92 refused a user name before the host for the same reason.
  test('an app\'s homepage writes its host as a browser reads it, so the address shown is the one the link goes to', async () => {
    const { user, visitor } = await signedInMember(t, `member${Date.now()}`, PASSWORD);
    const good = { name: 'App', description: '', redirect_uris: 'https://app.example/cb', type: 'public' };
    for (const homepage of ['https://cоmmunity.example/', 'https://社区.example/', 'https://0x7f.1/', 'https://community%2Eexample/', 'https://community。example/']) {
      const response = await visitor.post('/settings/developers', { ...good, homepage });
      assert.equal(response.status, 400, homepage);
      assert.match(response.text, /Homepage: .* writes its host so that a browser reads another name: write it as /, homepage);
    }
    assert.deepEqual(await t.deps.stores.clients.listByOwner(user.id), []);
    // The same words in Chinese.
    await visitor.post('/language', { lang: 'zh-CN', return_to: '/' }, { csrf: null });
    const chinese = await visitor.post('/settings/developers', { ...good, homepage: 'https://cоmmunity.example/' });
    assert.equal(chinese.status, 400);
    assert.match(chinese.text, /中的主机名会被浏览器读成另一个名字：请写作“xn--/);
    // A host written as the browser reads it is kept as written, whatever its case or port.
    for (const homepage of ['https://App.Example:8443/about', 'https://xn--fiq228c.example/', 'http://[::1]:8080/', 'https://app.example./']) {
      const response = await visitor.post('/settings/developers', { ...good, homepage });
      assert.equal(response.status, 303, `${homepage}: ${response.text.slice(0, 200)}`);
    }
    // An app that registers itself (RFC 7591) is refused the same way.
    const registered = await fetch(`${t.baseUrl}/api/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.122' },
      body: JSON.stringify({ redirect_uris: ['https://app.example/cb'], client_uri: 'https://cоmmunity.example/' }),
    });
    assert.equal(registered.status, 400);
    assert.match(((await registered.json()) as { error_description: string }).error_description, /^client_uri must write its host as a browser reads it: 'xn--/);
  });
});
