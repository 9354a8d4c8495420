/**
 * express-openid-connect 3.4 (Auth0's Express middleware), in this process against the real
 * service. At its defaults it asks for `response_type=id_token` with `response_mode=form_post`
 * (the implicit flow, id_token only). This service offers `form_post` but only the code flow
 * (docs/oauth.md, "Authorization endpoint"): the refusal, `unsupported_response_type`, is posted
 * to the app's callback, and the library hands the app its code and description. With what its README says for the code flow
 * (`authorizationParams.response_type: 'code'` and `clientSecret`) the whole flow works:
 * sign-in (it sends PKCE, state and nonce), the id_token's claims, UserInfo, /me, a refresh,
 * and RP-initiated logout (`idpLogout: true`) that ends the session at the service.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import express from 'express';
import eoc from 'express-openid-connect';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { newClient } from '../oauth/helpers.js';
import { TwoSiteBrowser, appAddress, grantOf, listen, startLibraryService } from './in-process.js';

const SESSION_SECRET = 'a session secret of the app, long enough for its cookie';

forEachDatabase('express-openid-connect 3.4', (database) => {
  let t: TestApp;
  before(async () => { t = await startLibraryService(database); });
  after(() => t.close());

  test('its defaults (response_type=id_token, response_mode=form_post) are refused with unsupported_response_type', async () => {
    const { port, url } = await appAddress();
    const c = await newClient(t, { redirectUris: [`${url}/callback`] });
    const app = express();
    app.use(eoc.auth({ issuerBaseURL: t.baseUrl, baseURL: url, clientID: c.client.clientId, secret: SESSION_SECRET }));
    // What the library makes of the answer posted to its callback (http-errors carries the fields).
    app.use((error: { status?: number; error?: string; error_description?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(error.status ?? 500).json({ error: error.error, error_description: error.error_description });
    });
    const close = await listen(app, port);
    try {
      const browser = await TwoSiteBrowser.signedIn(t);
      const visit = await browser.visit(`${url}/`);
      const asked = new URL(visit.trail.find((address) => address.startsWith(`${t.baseUrl}/oauth/authorize`))!).searchParams;
      assert.equal(asked.get('response_type'), 'id_token');
      assert.equal(asked.get('response_mode'), 'form_post');
      assert.equal(visit.url.href, `${url}/callback`, 'the refusal was posted to the callback, as form_post asks');
      assert.equal(visit.status, 400);
      const shown = JSON.parse(visit.text) as { error: string; error_description: string };
      assert.equal(shown.error, 'unsupported_response_type');
      assert.match(shown.error_description, /Only response_type=code is supported/, 'the library hands the app our description');
    } finally {
      await close();
    }
  });

  test('with response_type=code and the client secret: sign-in, claims, UserInfo, /me, refresh and RP-initiated logout', async () => {
    const { port, url } = await appAddress();
    const c = await newClient(t, { redirectUris: [`${url}/callback`], postLogoutRedirectUris: [url] });
    const app = express();
    app.use(eoc.auth({
      issuerBaseURL: t.baseUrl, baseURL: url, clientID: c.client.clientId, clientSecret: c.secret!, secret: SESSION_SECRET,
      authRequired: false, idpLogout: true,
      authorizationParams: { response_type: 'code', scope: 'openid profile profile:read' },
    }));
    app.get('/', async (req, res) => {
      if (!req.oidc.isAuthenticated()) return void res.send('signed out');
      const accessToken = req.oidc.accessToken!;
      const claims = req.oidc.idTokenClaims; // before the refresh: a refreshed id_token has no nonce (OIDC Core 12.2)
      const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${accessToken.access_token}` } });
      const refreshed = await accessToken.refresh();
      res.json({
        claims, userinfo: await req.oidc.fetchUserInfo(), me: await me.json(),
        refreshed: refreshed.access_token !== accessToken.access_token,
      });
    });
    const close = await listen(app, port);
    try {
      const browser = await TwoSiteBrowser.signedIn(t);
      const signedIn = await browser.visit(`${url}/login`);
      assert.equal(signedIn.status, 200, signedIn.text);
      const asked = new URL(signedIn.trail.find((address) => address.startsWith(`${t.baseUrl}/oauth/authorize`))!).searchParams;
      assert.equal(asked.get('code_challenge_method'), 'S256');
      const shown = JSON.parse(signedIn.text) as {
        claims: Record<string, unknown>; userinfo: Record<string, unknown>; me: { username: string }; refreshed: boolean;
      };
      assert.equal(shown.claims.iss, t.baseUrl);
      assert.equal(shown.claims.aud, c.client.clientId);
      assert.equal(shown.claims.nonce, asked.get('nonce'));
      assert.equal(shown.userinfo.sub, shown.claims.sub);
      assert.equal(shown.me.username, shown.userinfo.preferred_username);
      assert.equal(shown.refreshed, true);
      assert.equal((await grantOf(t, c.client.clientId)).rotated, 1, 'the refresh rotated the refresh token');

      const signedOut = await browser.visit(`${url}/logout`);
      assert.ok(signedOut.trail.some((address) => address.startsWith(`${t.baseUrl}/oauth/logout?`)), signedOut.trail.join('\n'));
      assert.equal(signedOut.text, 'signed out');
      assert.equal(await browser.signedInAtService(), false, 'the id_token_hint ended the session at the service');
    } finally {
      await close();
    }
  });
});
