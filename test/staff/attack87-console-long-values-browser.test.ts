/**
 * attack87: the console's tables of records stack their rows at a phone's width (3524106), every
 * cell a block the card's width. A value with no place to break (an app's name of 80 letters, a
 * token's name, a reason of 500 characters; a member or an app registering itself chooses them)
 * still reached past the screen's edge: the stacked table's box scrolled sideways and the rest of
 * the value was hidden there, which stacking was to end. Measured by the words, not the boxes: a
 * block cell keeps the screen's width while its text runs out of it.
 *
 * attack91: the member page's list of the apps the member authorized is a list of links, not a
 * table, and the same name ran out of it (890 px at 390), the whole page scrolling sideways.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser as Chromium, type Page } from 'playwright-core';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { LOCALES } from '../../src/core/locales.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { REASON_MAX_LENGTH } from '../../src/core/staff/staff.js';
import { Browser, PASSWORD as MEMBER_PASSWORD, obtainTokens } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { forEachDatabase } from '../support/databases.js';
import { appReview, person, uniqueName } from './support.js';

const PHONE = { width: 390, height: 844 };

/** Every run of words in `main` that reaches past the window's edge or out of its table's box, as `tag "words" right`, and the page's own width when wider than the window. */
function wordsPastTheEdge(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const edge = document.documentElement.clientWidth;
    const out: string[] = [];
    const walker = document.createTreeWalker(document.querySelector('main')!, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent!.trim() || node.parentElement!.closest('.visually-hidden')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const box = range.getBoundingClientRect();
      const wrap = node.parentElement!.closest('.table-wrap')?.getBoundingClientRect();
      if (box.width > 0 && (box.right > edge + 0.5 || (wrap && box.right > wrap.right + 0.5))) {
        out.push(`${node.parentElement!.localName} "${node.textContent!.trim().slice(0, 20)}…" reaches ${Math.round(box.right)}px`);
      }
    }
    if (document.documentElement.scrollWidth > edge) out.push(`the page is ${document.documentElement.scrollWidth}px wide`);
    return out;
  });
}

forEachDatabase('attack87: a stacked table of the staff console keeps a long value on the screen at a phone\'s width', (database) => {
  let t: TestApp;
  let browser: Chromium;
  before(async () => {
    t = await startTestApp(database);
    if (!skipWithoutChromium) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('an app\'s name, a token\'s name and a reason with no place to break wrap inside the row or the list, in every language', { skip: skipWithoutChromium }, async () => {
    const { stores } = t.deps;
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await createAccount(stores, t.clock, { username: uniqueName('longvalues'), password: MEMBER_PASSWORD });
    const redirectUri = 'https://long.example/cb';
    const { client: app, secret } = await registerClient(stores, t.clock, { name: `Q${'q'.repeat(78)}Q`, type: 'confidential', redirectUris: [redirectUri], ownerId: member.id });
    // Authorized by the member, so their console page lists it among their apps too (attack91).
    const memberBrowser = new Browser(t);
    assert.equal((await memberBrowser.signIn(member.username)).status, 303);
    await obtainTokens(t, memberBrowser, { client: app, secret: secret!, redirectUri }, { scope: 'profile:read' });
    await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: member.id, name: `T${'t'.repeat(58)}T`, scopes: ['profile:read', 'posts:read'], expiresInDays: 30 });
    const reason = 'R'.repeat(REASON_MAX_LENGTH);
    assert.equal((await (await appReview(admin, app.clientId)).verify(reason)).status, 303);

    const problems: string[] = [];
    for (const locale of LOCALES) {
      const context = await browser.newContext({ locale, viewport: PHONE });
      await context.addCookies([...admin.visitor.cookies, ['lang', locale]].map(([name, value]) => ({ name: name!, value: value!, url: t.baseUrl })));
      const page = await context.newPage();
      for (const path of [`/admin/apps?q=${app.clientId}`, `/admin/members/${member.id}`, '/admin/staff-log']) {
        assert.equal((await page.goto(`${t.baseUrl}${path}`))?.status(), 200, path);
        if (path.startsWith('/admin/members/')) assert.equal(await page.locator(`ul.links a[href="/admin/apps/${app.clientId}"]`).count(), 1, 'the app among the authorized');
        for (const line of await wordsPastTheEdge(page)) problems.push(`${locale} ${path}: ${line}`);
      }
      await context.close();
    }
    assert.deepEqual(problems, [], 'every value wraps inside its row');
  });
});
