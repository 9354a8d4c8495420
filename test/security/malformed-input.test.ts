/**
 * Input that once gave a 500 (issue 16 item 7), each fixed where it entered: a loopback redirect
 * port no socket can have, characters a `Location` header cannot carry, and a multipart body the
 * parser cannot read. Each gets a 4xx or its proper redirect, and nothing reaches the error log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { checkRedirectUris } from '../../src/core/oauth/clients.js';
import { Browser, PASSWORD, type TestClient, authorizeQuery, hiddenFields, newClient, newUser, obtainCode, redirectParams, signedInBrowser, startOAuthApp } from '../oauth/helpers.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const NON_LATIN1 = ['/ü/日本', '/\u2028', '/€?x=ß', '/posts/\ud83d\ude00'];

forEachDatabase('malformed input never gives a 500', (database) => {
  let t: TestApp;
  const logLines: string[] = [];
  before(async () => { t = await startOAuthApp(database, { logLines }); });
  after(() => t.close());

  const errorsLogged = () => logLines.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);

  test('sign-in returns to a return_to outside Latin-1 with its characters percent-encoded', async () => {
    const user = await newUser(t);
    for (const returnTo of NON_LATIN1) {
      const response = await new Browser(t).signIn(user.username, undefined, returnTo);
      assert.equal(response.status, 303, returnTo);
      const location = response.headers.get('location')!;
      assert.match(location, /^\/[\x21-\x7e]*$/, `an ASCII path on this site: ${location}`);
      assert.equal(decodeURIComponent(location), returnTo);
    }
    // Bytes that are not UTF-8 at all, sent as the form's own encoding.
    const browser = new Browser(t);
    const csrf = hiddenFields(await (await browser.fetch('/login')).text()).find(([n]) => n === '_csrf')![1];
    const raw = await browser.fetch('/login', {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `username=${user.username}&password=${encodeURIComponent(PASSWORD)}&_csrf=${csrf}&return_to=%2F%ED%A0%80%FF`,
    });
    assert.equal(raw.status, 303);
    assert.match(raw.headers.get('location')!, /^\/[\x21-\x7e]*$/);
    assert.deepEqual(errorsLogged(), []);
  });

  test('a redirect URI outside ASCII cannot be registered (RFC 3986)', () => {
    assert.throws(() => checkRedirectUris(['https://app.example/callback/ü']), /outside ASCII/);
    assert.throws(() => checkRedirectUris(['https://äpp.example/cb']), /outside ASCII/);
  });

  test('a redirect URI stored before that rule is redirected to percent-encoded, never a 500', async () => {
    const uri = 'https://app.example/callback/ü€';
    const registered = await newClient(t);
    const client = await t.deps.stores.clients.create({ ...registered.client, clientId: `legacy${Date.now()}`, redirectUris: [uri] }, t.clock.now());
    const c: TestClient = { client, secret: registered.secret!, redirectUri: uri };
    const { browser } = await signedInBrowser(t);
    const code = await obtainCode(browser, c);
    assert.ok(code);
    const denied = await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { extra: { prompt: 'none', max_age: 'x' } })}`);
    assert.equal(denied.status, 302);
    assert.ok(denied.headers.get('location')!.startsWith('https://app.example/callback/%C3%BC%E2%82%AC?'));
    assert.equal(redirectParams(denied).get('error'), 'invalid_request');
    assert.deepEqual(errorsLogged(), []);
  });

  test('a malformed multipart avatar upload is 400, with or without a sign-in, and logs no error', async () => {
    const { browser } = await signedInBrowser(t);
    const bodies: Array<[string, string]> = [
      ['multipart/form-data; boundary=XYZ', '--XYZ\r\nContent-Disposition: form-data; name="avatar"; filename="a.png"\r\n\r\nabc'],
      ['multipart/form-data; boundary=XYZ', 'garbage'],
      ['multipart/form-data', '--XYZ\r\n'],
    ];
    for (const [type, body] of bodies) {
      for (const send of [(init: RequestInit) => browser.fetch('/settings/profile/avatar', init), (init: RequestInit) => fetch(`${t.baseUrl}/settings/profile/avatar`, init)]) {
        const response = await send({ method: 'POST', headers: { 'content-type': type }, body });
        assert.equal(response.status, 400, `${type} ${JSON.stringify(body)}`);
        await response.text();
      }
    }
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 300 }), fc.string({ maxLength: 20 }), async (body, boundary) => {
      const response = await browser.fetch('/settings/profile/avatar', {
        method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary.replace(/[\r\n]/g, '')}` }, body,
      });
      await response.text();
      assert.ok(response.status >= 400 && response.status < 500, `status ${response.status}`);
    }), { numRuns: 100 });
    assert.deepEqual(errorsLogged(), []);
  });
});
