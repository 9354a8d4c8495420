/**
 * A page on another site has its visitors' browsers push authorization requests for its own
 * public app (attack59 M1), send wrong secrets for a confidential app, or register apps
 * (attack62 M1), in a real headless Chromium: with `fetch` (no-cors, so no preflight; CORS for
 * the registrations) and with a form posted into a hidden frame.
 * Chromium sends `Origin` with each, so they use up only the browsers' share of the address, and
 * a native app or an app's backend behind the same address (here Node's `fetch`, which sends no
 * `Origin`) goes on (`src/core/oauth/endpoint-limits.ts`).
 */
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser as Chromium, Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { authorizeQuery, clientFields, newClient, pkcePair, startOAuthApp } from './helpers.js';

/** Pushes, or failed client authentications, the page sends before the one past the browsers' share. */
const SHARE = 3;

async function refusals(t: TestApp, endpoint: string, scope: string): Promise<number> {
  return (await t.deps.metrics.rateLimitRefusals.get()).values
    .find((v) => v.labels.endpoint === endpoint && v.labels.scope === scope)?.value ?? 0;
}

/** What the page's script sends: `count` no-cors form POSTs to `url`, one after another. */
function sendByFetch(tab: Page, url: string, count: number, body: string): Promise<void> {
  return tab.evaluate(async ({ url, count, body }) => {
    for (let i = 0; i < count; i++) {
      await fetch(url, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    }
  }, { url, count, body });
}

function postForm(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
}

forEachDatabase('another site\'s page posting to the client endpoints from its visitors\' browsers in Chromium', (database) => {
  let t: TestApp;
  let browser: Chromium;
  let site: Server;
  let page = '';

  before(async () => {
    t = await startOAuthApp(database, { env: { PAR_PER_MINUTE_PER_ADDRESS: String(SHARE), CLIENT_AUTH_FAILURES_PER_ADDRESS: String(SHARE), REGISTRATIONS_PER_HOUR_PER_ADDRESS: String(SHARE) } });
    site = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    if (!skipWithoutChromium) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    await t.close();
  });

  test('pushes a page has a browser send, by fetch or by a form, leave a native app behind the same address its own pushes', { skip: skipWithoutChromium }, async () => {
    const pagesApp = await newClient(t, { type: 'public' });
    const fields = () => new URLSearchParams({ ...Object.fromEntries(authorizeQuery(pagesApp, { pkce: pkcePair() })), ...clientFields(pagesApp) });
    const par = `${t.baseUrl}/api/oauth/par`;
    const inputs = [...fields()].map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`).join('');
    page = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>`
      + `<iframe name="sink"></iframe><form id="push" method="post" action="${par}" target="sink">${inputs}</form></body></html>`;
    const tab = await (await browser.newContext()).newPage();
    // Another host name than the server's 127.0.0.1: another site.
    await tab.goto(`http://localhost:${(site.address() as { port: number }).port}/`);
    const formAnswered = tab.waitForResponse(par);
    await tab.evaluate(() => (document.getElementById('push') as HTMLFormElement).submit());
    assert.equal((await formAnswered).status(), 201, 'the form\'s push');
    await sendByFetch(tab, par, SHARE - 1, fields().toString());
    assert.equal(await refusals(t, 'par', 'push-address'), 0, 'the page\'s pushes, within the share');
    await sendByFetch(tab, par, 1, fields().toString());
    assert.equal(await refusals(t, 'par', 'push-address'), 1, 'the page\'s push past the browsers\' share is refused');

    const nativeApp = await newClient(t, { type: 'public' });
    const pushed = await postForm(par, { ...Object.fromEntries(authorizeQuery(nativeApp, { pkce: pkcePair() })), ...clientFields(nativeApp) });
    assert.equal(pushed.status, 201, await pushed.clone().text());
    await tab.context().close();
  });

  test('wrong secrets a page has a browser send leave a confidential app\'s backend behind the same address its token requests', { skip: skipWithoutChromium }, async () => {
    const backend = await newClient(t);
    const revoke = `${t.baseUrl}/api/oauth/revoke`;
    page = '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body></body></html>';
    const tab = await (await browser.newContext()).newPage();
    await tab.goto(`http://localhost:${(site.address() as { port: number }).port}/`);
    const wrong = new URLSearchParams({ token: 'x', client_id: backend.client.clientId, client_secret: 'not-the-secret' }).toString();
    await sendByFetch(tab, revoke, SHARE + 1, wrong);
    assert.equal(await refusals(t, 'revoke', 'client-auth-address-client'), 1, 'the page\'s failure past the browsers\' share is refused');
    assert.equal((await postForm(revoke, { token: 'x', ...clientFields(backend) })).status, 200, 'the backend at the same address');
    await tab.context().close();
  });

  test('registrations a page has a browser send (RFC 7591, CORS) leave an agent behind the same address its own', { skip: skipWithoutChromium }, async () => {
    const register = `${t.baseUrl}/api/oauth/register`;
    const body = JSON.stringify({ redirect_uris: ['https://agent.example/callback'], token_endpoint_auth_method: 'none' });
    page = '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body></body></html>';
    const tab = await (await browser.newContext()).newPage();
    await tab.goto(`http://localhost:${(site.address() as { port: number }).port}/`);
    const statuses = await tab.evaluate(async ({ register, body, count }) => {
      const answered: number[] = [];
      for (let i = 0; i < count; i++) answered.push((await fetch(register, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status);
      return answered;
    }, { register, body, count: SHARE + 1 });
    assert.deepEqual(statuses, [...Array<number>(SHARE).fill(201), 429], 'the page reads its answers: the endpoint answers CORS');
    const agent = await fetch(register, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(agent.status, 201, await agent.clone().text());
    await tab.context().close();
  });
});
