/**
 * examples/oauth4webapi-spa (issue 17, "the proof"): a single-page app served from another origin
 * (localhost, its own port; the service is on 127.0.0.1) signs in through the service's real
 * pages in Chromium with oauth4webapi imported as a module, following its own examples, reads
 * /me, refreshes, revokes and signs out through the end_session_endpoint from discovery, with no
 * console error.
 */
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { TestApp } from '../support/app.js';
import {
  type ExampleApp, type RunningExample, freePort, launchBrowser, provesWholeFlow, registerExample, runExample,
  skipWithoutChromium, startService,
} from './support.js';

describe('examples/oauth4webapi-spa', { skip: skipWithoutChromium }, () => {
  let service: TestApp;
  let app: ExampleApp;
  let example: RunningExample;
  let browser: Browser;

  before(async () => {
    service = await startService();
    const port = await freePort();
    const url = `http://localhost:${port}`;
    app = await registerExample(service, { type: 'public', redirectUris: [`${url}/callback`], postLogoutRedirectUris: [`${url}/signed-out`] });
    example = await runExample('oauth4webapi-spa', { ISSUER: service.baseUrl, CLIENT_ID: app.clientId }, port);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await example?.stop();
    await service?.close();
  });

  test('a browser app on another origin signs in, reads /me, refreshes, revokes and signs out with no console error', async () => {
    await provesWholeFlow(browser, service, example, app, { grantedScope: 'openid profile profile:read', endsServiceSession: true });
  });
});
