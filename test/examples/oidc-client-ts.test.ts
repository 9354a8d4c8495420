/**
 * examples/oidc-client-ts (issue 17, "the proof"): a single-page app served from another origin
 * (localhost, its own port; the service is on 127.0.0.1) signs in through the service's real
 * pages in Chromium with oidc-client-ts's browser build and its defaults, reads /me, refreshes
 * (signinSilent with the refresh token), revokes and signs out with signoutRedirect, with no
 * console error.
 */
import { after, before, describe, test } from 'node:test';
import { type Started, provesWholeFlow, startExample } from './support.js';
import { skipWithoutChromium } from '../support/chromium.js';

describe('examples/oidc-client-ts', { skip: skipWithoutChromium }, () => {
  let t: Started;
  before(async () => {
    t = await startExample('oidc-client-ts', {
      registration: (url) => ({ type: 'public', redirectUris: [`${url}/callback`], postLogoutRedirectUris: [`${url}/signed-out`] }),
      env: (app) => ({ CLIENT_ID: app.clientId }),
    });
  });
  after(async () => t?.close());

  test('a browser app on another origin signs in, reads /me, refreshes, revokes and signs out with no console error', async () => {
    await provesWholeFlow(t.browser, t.service, t.example, t.app, { grantedScope: 'openid profile profile:read posts:read', endsServiceSession: true });
  });
});
