/**
 * examples/authjs (issue 17, "the proof"): Auth.js (@auth/core) with an `oidc` provider and its
 * defaults (checks ["pkce"], HTTP Basic, its default scope plus profile:read, its own sign-in and
 * sign-out pages), through the service's real pages in Chromium: /me, a refresh and revocation as
 * its "Refresh Token Rotation" guide does them. Auth.js has no OpenID sign-out, so the service's
 * session stays.
 */
import { after, before, describe, test } from 'node:test';
import { type Started, confidentialEnv, provesWholeFlow, startExample } from './support.js';
import { skipWithoutChromium } from '../support/chromium.js';

describe('examples/authjs', { skip: skipWithoutChromium }, () => {
  let t: Started;
  before(async () => {
    t = await startExample('authjs', {
      registration: (url) => ({ type: 'confidential', redirectUris: [`${url}/auth/callback/community`] }),
      env: confidentialEnv,
    });
  });
  after(async () => t?.close());

  test('a confidential app signs in through Auth.js pages, reads /me, refreshes and revokes with its defaults', async () => {
    await provesWholeFlow(t.browser, t.service, t.example, t.app, {
      // Auth.js asks for email too: the service drops it from the grant.
      grantedScope: 'openid profile profile:read posts:read',
      endsServiceSession: false,
      startSignIn: async (page) => {
        await page.getByRole('link', { name: 'Sign in' }).click();
        await page.getByRole('button', { name: 'Sign in with Community' }).click();
      },
      signOut: async (page) => {
        await page.getByRole('link', { name: 'Sign out' }).click();
        await page.getByRole('button', { name: 'Sign out' }).click();
      },
    });
  });
});
