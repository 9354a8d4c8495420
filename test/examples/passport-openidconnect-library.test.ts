/**
 * passport-openidconnect 0.1 (Jared Hanson's OpenID Connect strategy for Passport), in this
 * process against the real service. It has no PKCE, and sends a nonce only when its `nonce`
 * option is set (lib/strategy.js; its README does not mention it), so at its defaults it sends
 * `openid` with `state` alone, which this service refuses: the seed asks for a nonce with `openid`,
 * and PKCE is the only thing accepted instead (docs/oauth.md, "PKCE stands in for state and
 * nonce"). With `nonce` set, sign-in works: the token exchange with `client_secret_post` (node-oauth
 * puts the secret in the body), its checks of the id_token's claims and nonce (it verifies no
 * signature), UserInfo as the profile, and /me with the access token.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import express from 'express';
import session from 'express-session';
import { Passport } from 'passport';
import { Strategy, type StrategyOptions } from 'passport-openidconnect';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { newClient } from '../oauth/helpers.js';
import { TwoSiteBrowser, appAddress, listen, startLibraryService } from './in-process.js';

forEachDatabase('passport-openidconnect 0.1', (database) => {
  let t: TestApp;
  before(async () => { t = await startLibraryService(database); });
  after(() => t.close());

  /** An Express app with the strategy under `options`, whose home page shows what the verify callback got. */
  async function startApp(extra: Partial<StrategyOptions>) {
    const { port, url } = await appAddress();
    const c = await newClient(t, { redirectUris: [`${url}/cb`] });
    const passport = new Passport();
    passport.use('svc', new Strategy({
      issuer: t.baseUrl, authorizationURL: `${t.baseUrl}/oauth/authorize`, tokenURL: `${t.baseUrl}/api/oauth/token`,
      userInfoURL: `${t.baseUrl}/api/oauth/userinfo`, clientID: c.client.clientId, clientSecret: c.secret!,
      callbackURL: `${url}/cb`, scope: ['profile', 'profile:read'], skipUserProfile: false, ...extra,
    }, (_issuer: string, profile: object, _context: object, _idToken: string | object, accessToken: string | object, _refreshToken: string, _params: unknown,
      done: (error: Error | null, user?: Express.User) => void) => done(null, { profile, accessToken })));
    passport.serializeUser((user, done) => done(null, user));
    passport.deserializeUser((user: Express.User, done) => done(null, user));
    const app = express();
    app.use(session({ secret: 'the app session secret', resave: false, saveUninitialized: false }));
    app.use(passport.session());
    app.get('/login', passport.authenticate('svc'));
    app.get('/cb', passport.authenticate('svc', { failureMessage: true }), (_req, res) => res.redirect('/'));
    app.get('/', (req, res) => { res.json(req.user ?? null); });
    return { url, close: await listen(app, port) };
  }

  test('its defaults send openid with state and no nonce: refused with invalid_request naming the nonce', async () => {
    const app = await startApp({});
    try {
      const browser = await TwoSiteBrowser.signedIn(t);
      const back = await browser.visit(`${app.url}/login`, { stop: (to) => to.origin === app.url && to.pathname === '/cb' });
      assert.equal(back.url.searchParams.get('error'), 'invalid_request');
      assert.match(back.url.searchParams.get('error_description')!, /nonce/);
    } finally {
      await app.close();
    }
  });

  test('with its nonce option: sign-in, UserInfo as the profile, and /me with the access token', async () => {
    const app = await startApp({ nonce: 'on' }); // any value turns on a fresh random nonce per request
    try {
      const browser = await TwoSiteBrowser.signedIn(t);
      const home = await browser.visit(`${app.url}/login`);
      assert.equal(home.status, 200, home.text);
      const user = JSON.parse(home.text) as { profile: { id: string; username: string }; accessToken: string };
      assert.ok(user.profile.id);
      const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${user.accessToken}` } });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { username: string }).username, user.profile.username);
    } finally {
      await app.close();
    }
  });
});
