/**
 * A page on another site has its visitors' browsers push authorization requests for its own
 * public app (attack59 M1), in a real headless Chromium: with `fetch` (no-cors, so no preflight)
 * and with a form posted into a hidden frame. Chromium sends `Origin` with each, so they use up
 * only the browsers' share of pushes at the address, and a native app behind the same address
 * (here Node's `fetch`, which sends no `Origin`) pushes on (`src/core/oauth/endpoint-limits.ts`).
 */
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser as Chromium } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { authorizeQuery, clientFields, newClient, pkcePair, startOAuthApp } from './helpers.js';

/** Pushes the page sends before the one past the browsers' share. */
const SHARE = 3;

async function pushRefusals(t: TestApp): Promise<number> {
  return (await t.deps.metrics.rateLimitRefusals.get()).values
    .find((v) => v.labels.endpoint === 'par' && v.labels.scope === 'push-address')?.value ?? 0;
}

forEachDatabase('another site\'s page pushing from its visitors\' browsers in Chromium', (database) => {
  let t: TestApp;
  let browser: Chromium;
  let site: Server;
  let page = '';

  before(async () => {
    t = await startOAuthApp(database, { env: { PAR_PER_MINUTE_PER_ADDRESS: String(SHARE) } });
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
    const sendByFetch = (count: number, body: string) => tab.evaluate(async ({ par, count, body }) => {
      for (let i = 0; i < count; i++) {
        await fetch(par, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      }
    }, { par, count, body });
    const formAnswered = tab.waitForResponse(par);
    await tab.evaluate(() => (document.getElementById('push') as HTMLFormElement).submit());
    assert.equal((await formAnswered).status(), 201, 'the form\'s push');
    await sendByFetch(SHARE - 1, fields().toString());
    assert.equal(await pushRefusals(t), 0, 'the page\'s pushes, within the share');
    await sendByFetch(1, fields().toString());
    assert.equal(await pushRefusals(t), 1, 'the page\'s push past the browsers\' share is refused');

    const nativeApp = await newClient(t, { type: 'public' });
    const pushed = await fetch(par, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...Object.fromEntries(authorizeQuery(nativeApp, { pkce: pkcePair() })), ...clientFields(nativeApp) }),
    });
    assert.equal(pushed.status, 201, await pushed.clone().text());
    await tab.context().close();
  });
});
