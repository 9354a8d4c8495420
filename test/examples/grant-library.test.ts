/**
 * grant 5.4 (the OAuth middleware for Express, Koa, Hapi and others), in this process against the
 * real service, configured as a custom provider the way its README says (`authorize_url`,
 * `access_url`, `oauth: 2`, `key`, `secret`, `scope`). At its defaults it joins scopes with commas
 * and sends neither `state` nor PKCE: the service refuses the comma list with `invalid_scope` (RFC
 * 6749 3.3: space-delimited), and would then refuse the missing `state`. With `scope_delimiter: ' '`
 * and `pkce: true`, both options of its README, the flow completes: the token exchange with
 * `client_secret_post`, an id_token for `openid` (which grant decodes and checks for `aud`),
 * and /me with the access token.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import express from 'express';
import session from 'express-session';
// grant is CommonJS with a `default` that is itself (grant.js): its types describe that default.
import grantModule, { type GrantProvider } from 'grant';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { newClient } from '../oauth/helpers.js';
import { TwoSiteBrowser, appAddress, listen, startLibraryService } from './in-process.js';

forEachDatabase('grant 5.4', (database) => {
  let t: TestApp;
  before(async () => { t = await startLibraryService(database); });
  after(() => t.close());

  /** An Express app with grant's provider `svc` under `extra`; /done shows grant's response. */
  async function startApp(extra: GrantProvider) {
    const { port, url } = await appAddress();
    const c = await newClient(t, { redirectUris: [`${url}/connect/svc/callback`] });
    const app = express();
    app.use(session({ secret: 'the app session secret', resave: false, saveUninitialized: true }));
    app.use(grantModule.default.express({
      defaults: { origin: url, transport: 'session' },
      svc: {
        authorize_url: `${t.baseUrl}/oauth/authorize`, access_url: `${t.baseUrl}/api/oauth/token`, oauth: 2,
        key: c.client.clientId, secret: c.secret!, scope: ['openid', 'profile:read'], callback: '/done', ...extra,
      },
    }));
    app.get('/done', (req, res) => { res.json((req.session as { grant?: { response?: unknown } }).grant?.response ?? null); });
    return { url, close: await listen(app, port) };
  }

  test('its defaults join scopes with commas and send no state: refused with invalid_scope', async () => {
    const app = await startApp({});
    try {
      const browser = await TwoSiteBrowser.signedIn(t);
      const done = await browser.visit(`${app.url}/connect/svc`);
      const asked = new URL(done.trail.find((address) => address.startsWith(`${t.baseUrl}/oauth/authorize`))!).searchParams;
      assert.equal(asked.get('scope'), 'openid,profile:read');
      assert.equal(asked.get('state'), null);
      assert.equal((JSON.parse(done.text) as { error: string }).error, 'invalid_scope');
    } finally {
      await app.close();
    }
  });

  test('with scope_delimiter and pkce, as its README documents: tokens, an id_token, and /me', async () => {
    const app = await startApp({ scope_delimiter: ' ', pkce: true });
    try {
      const browser = await TwoSiteBrowser.signedIn(t);
      const done = await browser.visit(`${app.url}/connect/svc`);
      const response = JSON.parse(done.text) as { access_token?: string; refresh_token?: string; id_token?: string; error?: string };
      assert.equal(response.error, undefined, done.text);
      assert.ok(response.refresh_token?.startsWith('svcr_'));
      assert.ok(response.id_token);
      const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${response.access_token}` } });
      assert.equal(me.status, 200);
    } finally {
      await app.close();
    }
  });
});
