/**
 * attack84: a used code presented by a request it is not bound to is an audit line,
 * `code.used_presented_unbound` (e2b863c), so that the operator learns the code was seen by
 * someone who should not have it (a log, a referrer). The line said who by `presentedBy` alone:
 * for a public app that is only the client_id the request named, which anyone may name (no
 * secret, no rate limit at the token endpoint: attack58), so whoever held the code could lay it
 * at any public app's door, and the line had nothing else of the presenter. It names the address
 * the request came from, as the other lines of what an outsider did do (`sign_in.failed`,
 * `client.registered` by an app itself, `leak_report.received`).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { clientFields, newClient, obtainCode, pkcePair, signedInBrowser, startOAuthApp, tokenRequest } from '../oauth/helpers.js';

forEachDatabase('attack84: the line of a used code presented by a request it is not bound to says where it came from', (database) => {
  let t: TestApp;
  // TRUST_PROXY=1: the request's address is the one X-Forwarded-For names, as behind the site's proxy.
  before(async () => { t = await startOAuthApp(database, { env: { TRUST_PROXY: '1' } }); });
  after(() => t.close());

  test('a used code presented with a wrong verifier, or by another public app, is an audit line with the presenting address', async () => {
    for (const type of ['public', 'confidential'] as const) {
      const c = await newClient(t, { type });
      const other = await newClient(t, { type: 'public' });
      const { browser } = await signedInBrowser(t);
      const pkce = pkcePair();
      const code = await obtainCode(browser, c, { pkce });
      const fields = { grant_type: 'authorization_code', code, redirect_uri: c.redirectUri, code_verifier: pkce.verifier, ...clientFields(c) };
      assert.equal((await tokenRequest(t, fields)).status, 200, 'the app redeems its code');

      const wrongVerifier = await tokenRequest(t, { ...fields, code_verifier: pkcePair().verifier }, { 'x-forwarded-for': '203.0.113.7' });
      assert.equal(wrongVerifier.status, 400);
      const { client_id: _, client_secret: __, ...bare } = fields as Record<string, string>;
      const namingAnother = await tokenRequest(t, { ...bare, ...clientFields(other) }, { 'x-forwarded-for': '203.0.113.8' });
      assert.equal(namingAnother.status, 400);

      const lines = t.audit.filter((e) => e.audit === 'code.used_presented_unbound' && e.clientId === c.client.clientId) as Array<Record<string, unknown>>;
      assert.deepEqual(lines.map((e) => [e.presentedBy, e.address]), [
        [c.client.clientId, '203.0.113.7'],
        [other.client.clientId, '203.0.113.8'],
      ], `${type}: each line names the address the code came from, beside the client_id the request named`);
    }
  });
});
