/**
 * The developer docs a developer can copy from (issue 33 item 5), in headless Chromium: a Copy
 * button on every code block (only when the script runs), a table of contents in view on a wide
 * screen, no sideways scrolling on a phone, the API reference drawn under the site's CSP, and the
 * app page's Copy button for the client id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';

const PHONE = { width: 375, height: 812 };
const WIDE = { width: 1440, height: 900 };

describe('developer docs in a browser', () => {
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    t = await startTestApp(temporarySqliteDatabase());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A page that records what the Content-Security-Policy refused and every script error. */
  async function watchedPage(options: { viewport?: { width: number; height: number }; javaScriptEnabled?: boolean } = {}) {
    const context = await browser.newContext({ viewport: options.viewport ?? WIDE, javaScriptEnabled: options.javaScriptEnabled ?? true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(String(error)));
    return { page, problems, close: () => context.close() };
  }

  const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

  test('every code block on /docs gets a Copy button that copies it from the keyboard and says Copied', async () => {
    const { page, problems, close } = await watchedPage();
    await page.goto(`${t.baseUrl}/docs`);
    const blocks = await page.locator('.docs pre').count();
    assert.ok(blocks > 20, `${blocks} code blocks`);
    assert.equal(await page.locator('.docs .code-block > button.copy-code').count(), blocks, 'one button per block');

    const block = page.locator('#token .code-block').first();
    const button = block.getByRole('button', { name: 'Copy' });
    await button.focus();
    await page.keyboard.press('Enter');
    await block.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await clipboard(page), await block.locator('pre').innerText());
    assert.match(await clipboard(page), /^curl -X POST .*\/api\/oauth\/token/);
    // The live region is filled a moment after the button changes, so screen readers notice it (public/copy.js).
    await page.getByRole('status').filter({ hasText: 'Copied' }).first().waitFor();
    assert.equal(await page.getByRole('status').filter({ hasText: 'Copied' }).count(), 1, 'a screen reader hears it too');
    await block.getByRole('button', { name: 'Copy' }).waitFor({ timeout: 5000 });
    assert.deepEqual(problems, []);
    await close();
  });

  test('the Copy button speaks the reader’s language', async () => {
    const { page, close } = await watchedPage();
    await page.context().addCookies([{ name: 'lang', value: 'zh-CN', url: t.baseUrl }]);
    await page.goto(`${t.baseUrl}/docs`);
    const block = page.locator('#token .code-block').first();
    await block.getByRole('button', { name: '复制' }).click();
    await block.getByRole('button', { name: '已复制' }).waitFor();
    await close();
  });

  test('without JavaScript the docs show every code block and no Copy button', async () => {
    const { page, close } = await watchedPage({ javaScriptEnabled: false });
    await page.goto(`${t.baseUrl}/docs`);
    assert.ok(await page.locator('.docs pre').count() > 20);
    assert.equal(await page.getByRole('button', { name: 'Copy' }).count(), 0);
    await close();
  });

  test('a phone 375 px wide never scrolls the docs sideways: code blocks scroll inside themselves', async () => {
    for (const path of ['/docs', '/docs/api']) {
      const { page, close } = await watchedPage({ viewport: PHONE });
      await page.goto(`${t.baseUrl}${path}`);
      if (path === '/docs/api') await page.locator('.opblock').first().waitFor();
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      assert.ok(widths.scroll <= widths.inner, `${path}: the page is ${widths.scroll} px wide in a ${widths.inner} px window`);
      await close();
    }
    const { page, close } = await watchedPage({ viewport: PHONE });
    await page.goto(`${t.baseUrl}/docs`);
    const widest = await page.evaluate(() => Math.max(...[...document.querySelectorAll('pre')].map((pre) => pre.scrollWidth - pre.clientWidth)));
    assert.ok(widest > 0, 'some code block is wider than the phone, and scrolls inside itself');
    await close();
  });

  test('on a wide screen the table of contents stays in view while the page scrolls', async () => {
    const { page, close } = await watchedPage();
    await page.goto(`${t.baseUrl}/docs#limits`);
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
    const box = await page.getByRole('navigation', { name: 'On this page' }).boundingBox();
    assert.ok(box, 'the table of contents is shown');
    assert.ok(box.y >= 0 && box.y < 100, `its top is at ${box.y} px, in view`);
    await page.getByRole('navigation', { name: 'On this page' }).getByRole('link', { name: 'Errors', exact: true }).click();
    await page.waitForURL(/#errors$/);
    await close();
  });

  test('the API reference draws the OpenAPI document from this origin under the site’s CSP and shows the /me operation', async () => {
    const { page, problems, close } = await watchedPage();
    const origins = new Set<string>();
    page.on('request', (request) => origins.add(new URL(request.url()).origin));
    const response = await page.goto(`${t.baseUrl}/docs/api`);
    const csp = response!.headers()['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-eval|unsafe-inline/);
    const me = page.locator('.opblock-summary-path').filter({ hasText: /^\/me$/ });
    await me.waitFor();
    await me.click();
    await page.getByText('Never contains e-mail, account status or other private fields.').waitFor();
    assert.equal(await page.getByText(/Seed \d/).count(), 0, 'no reference to the specification');
    assert.deepEqual(problems, [], 'no script error and nothing the CSP refused');
    assert.deepEqual([...origins], [t.baseUrl], 'everything comes from this origin');
    await close();
  });

  test('without JavaScript the API reference page says where the endpoints are described', async () => {
    const { page, close } = await watchedPage({ javaScriptEnabled: false });
    await page.goto(`${t.baseUrl}/docs/api`);
    assert.match(await page.locator('#api-reference').innerText(), /drawn by a script/);
    assert.equal(await page.getByRole('link', { name: 'developer documentation' }).first().getAttribute('href'), '/docs#endpoints');
    await close();
  });

  test('the app page copies the client id and shows the issuer and the discovery address', async () => {
    const owner = await createAccount(t.deps.stores, t.clock, { username: 'copier', password: 'copier password 1' });
    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: 'Copy App', type: 'confidential', redirectUris: ['https://copy.example/cb'], ownerId: owner.id,
    });
    const { page, problems, close } = await watchedPage();
    await page.goto(`${t.baseUrl}/login`);
    await page.getByLabel('Username').fill('copier');
    await page.getByLabel('Password').fill('copier password 1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${t.baseUrl}/`);
    await page.goto(`${t.baseUrl}/settings/developers/${client.clientId}`);
    assert.equal(await page.getByRole('textbox', { name: 'Issuer' }).inputValue(), t.baseUrl);
    assert.equal(await page.getByRole('textbox', { name: 'Discovery document' }).inputValue(), `${t.baseUrl}/.well-known/openid-configuration`);
    const row = page.locator('.copy-row').filter({ has: page.locator('#client-id') });
    await row.getByRole('button', { name: 'Copy' }).click();
    await row.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await clipboard(page), client.clientId);
    assert.deepEqual(problems, []);
    await close();
  });
});
