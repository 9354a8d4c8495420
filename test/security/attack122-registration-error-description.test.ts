/**
 * attack122: the refusals of dynamic registration (RFC 7591 3.2.2) quote the metadata they refuse,
 * and must still keep RFC 6749 5.2's characters (INTERFACE section 12: protocol error bodies stay
 * English ASCII).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addressesIn } from '../support/addresses.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

/** RFC 6749 5.2 (and RFC 7591 3.2.2 by reference): printable ASCII without a quote or a backslash. */
const RFC_6749_DESCRIPTION = /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/;
const newAddress = addressesIn('203.122');

forEachDatabase('attack122 registration refusals', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: { TRUST_PROXY: '1' } }); });
  after(() => t.close());

  // F3: an address in Chinese, a quote or a backslash in what an app sent came back in
  // error_description as sent, each address in double quotes: no RFC 6749 5.2 character set,
  // which a strict client library refuses to read.
  test('a registration refusal\'s error_description stays in RFC 6749 5.2\'s characters whatever the metadata held', async () => {
    const before = (await t.deps.stores.clients.listAll()).length;
    const bodies: Array<Record<string, unknown>> = [
      { redirect_uris: ['https://例子.example/回调'] },
      { redirect_uris: ['http://agent.example/cb'] },
      { redirect_uris: ['https://agent.example/cb#"\\'] },
      { redirect_uris: ['https://agent.example/cb'], post_logout_redirect_uris: ['https://agent.example/再见'] },
      { redirect_uris: ['https://agent.example/cb'], grant_types: ['authorization_code', '客户端"\\\u202e'] },
      { redirect_uris: ['https://agent.example/cb'], client_uri: 'javascript:alert("文")' },
      { redirect_uris: ['https://agent.example/cb'], client_name: '应用\u202e' },
    ];
    for (const body of bodies) {
      const response = await fetch(`${t.baseUrl}/api/oauth/register`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': newAddress() }, body: JSON.stringify(body),
      });
      assert.equal(response.status, 400);
      const refusal = (await response.json()) as { error: string; error_description: string };
      assert.ok(['invalid_redirect_uri', 'invalid_client_metadata'].includes(refusal.error), refusal.error);
      assert.match(refusal.error_description, RFC_6749_DESCRIPTION, JSON.stringify(body));
    }
    assert.equal((await t.deps.stores.clients.listAll()).length, before);
  });
});
