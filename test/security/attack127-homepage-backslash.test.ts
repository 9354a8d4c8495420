/**
 * attack127: an app's homepage is shown as written beside its link; for http and https a browser
 * reads a backslash as a slash (WHATWG URL, "special" schemes), so the host ends there.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { signedInMember } from '../site/visitor.js';
import { PASSWORD } from '../oauth/helpers.js';

forEachDatabase('attack127 homepage backslash', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: { TRUST_PROXY: '1' } }); });
  after(() => t.close());

  // "https://evil.example\@community.example/" passed attack122's rule (the host before the
  // backslash is the one the browser reads) and read, as attack92's "…%2Flogin@evil.example/" did,
  // as an address of community.example with a user name before it; its link went to evil.example.
  test('a homepage whose host ends at a backslash is refused, and one saved before is shown as the browser reads it', async () => {
    const { user, visitor } = await signedInMember(t, `member${Date.now()}`, PASSWORD);
    const good = { name: 'App', description: '', redirect_uris: 'https://app.example/cb', type: 'public' };
    const refused = await visitor.post('/settings/developers', { ...good, homepage: 'https://evil.example\\@community.example/' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /writes its host so that a browser reads another name: write it as “evil\.example”/);
    assert.deepEqual(await t.deps.stores.clients.listByOwner(user.id), []);
    // A backslash further on, in the path, changes no host: kept as written.
    const kept = await visitor.post('/settings/developers', { ...good, homepage: 'https://app.example/a\\b' });
    assert.equal(kept.status, 303, kept.text.slice(0, 300));
    // One saved before the rule: its page shows the address the link goes to.
    const [app] = await t.deps.stores.clients.listByOwner(user.id);
    await t.deps.stores.clients.setDetails(app!.clientId, { name: 'App', description: '', homepageUrl: 'https://evil.example\\@community.example/' }, t.deps.clock.now(), 'operator');
    const page = await visitor.get(`/settings/developers/${encodeURIComponent(app!.clientId)}`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes('>https://evil.example/@community.example/</a>'), 'the address as the browser reads it');
    // Self-registration (RFC 7591) refuses it too.
    const registered = await fetch(`${t.baseUrl}/api/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.127' },
      body: JSON.stringify({ redirect_uris: ['https://app.example/cb'], client_uri: 'https://evil.example\\@community.example/' }),
    });
    assert.equal(registered.status, 400);
    assert.match(((await registered.json()) as { error_description: string }).error_description, /^client_uri must write its host as a browser reads it: 'evil\.example'/);
  });
});
