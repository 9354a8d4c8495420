/**
 * attack91: the staff console's member page lists the apps the member authorized (a list of
 * links, not a stacked table, so b7b791b's rule for a stacked cell does not reach it). An app's
 * name of 80 letters with no place to break (any app that registers itself chooses its name,
 * INTERFACE section 13; a member who authorized it is enough) runs past a phone's edge at 390 px
 * and makes the whole page scroll sideways, in every language: what attack87 fixed for the
 * console's tables (docs/staff.md: a value breaks anywhere rather than run past the screen's edge).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser as Chromium, type Page } from 'playwright-core';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { LOCALES } from '../../src/core/locales.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { Browser, PASSWORD as MEMBER_PASSWORD, obtainTokens } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { forEachDatabase } from '../support/databases.js';
import { person, uniqueName } from '../staff/support.js';

const PHONE = { width: 390, height: 844 };

/** Every run of words in `main` that reaches past the window's edge, and the page's own width when wider than the window. */
function pastTheEdge(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const edge = document.documentElement.clientWidth;
    const out: string[] = [];
    const walker = document.createTreeWalker(document.querySelector('main')!, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent!.trim() || node.parentElement!.closest('.visually-hidden')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const box = range.getBoundingClientRect();
      if (box.width > 0 && box.right > edge + 0.5) out.push(`${node.parentElement!.localName} "${node.textContent!.trim().slice(0, 20)}…" reaches ${Math.round(box.right)}px`);
    }
    if (document.documentElement.scrollWidth > edge) out.push(`the page is ${document.documentElement.scrollWidth}px wide`);
    return out;
  });
}

forEachDatabase('attack91: the console\'s list of a member\'s authorized apps keeps a long app name on a phone\'s screen', (database) => {
  let t: TestApp;
  let chromium: Chromium;
  before(async () => {
    t = await startTestApp(database);
    if (!skipWithoutChromium) chromium = await launchChromium();
  });
  after(async () => {
    await chromium?.close();
    await t?.close();
  });

  test('an app\'s name of 80 letters wraps inside the member page\'s list of authorized apps, in every language', { skip: skipWithoutChromium }, async () => {
    const { stores } = t.deps;
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await createAccount(stores, t.clock, { username: uniqueName('authorized'), password: MEMBER_PASSWORD });
    const redirectUri = 'https://long.example/cb';
    const { client, secret } = await registerClient(stores, t.clock, { name: `Q${'q'.repeat(78)}Q`, type: 'confidential', redirectUris: [redirectUri], ownerId: null });
    const memberBrowser = new Browser(t);
    assert.equal((await memberBrowser.signIn(member.username)).status, 303);
    await obtainTokens(t, memberBrowser, { client, secret: secret!, redirectUri }, { scope: 'profile:read' });

    const problems: string[] = [];
    for (const locale of LOCALES) {
      const context = await chromium.newContext({ locale, viewport: PHONE });
      await context.addCookies([...admin.visitor.cookies, ['lang', locale]].map(([name, value]) => ({ name: name!, value: value!, url: t.baseUrl })));
      const page = await context.newPage();
      const path = `/admin/members/${member.id}`;
      assert.equal((await page.goto(`${t.baseUrl}${path}`))?.status(), 200, path);
      assert.equal(await page.locator(`a[href="/admin/apps/${client.clientId}"]`).count(), 1, 'the app is listed');
      for (const line of await pastTheEdge(page)) problems.push(`${locale} ${path}: ${line}`);
      await context.close();
    }
    assert.deepEqual(problems, [], 'the app\'s name wraps inside the card');
  });
});
