/**
 * A staff reason written on several lines is stored with its line breaks, and every page that
 * shows it (the staff log, and the member's and the app's pages, which list their own entries)
 * shows those lines as lines, in headless Chromium on each database: HTML folds a line break into
 * a space unless the cell keeps it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser as Chromium } from 'playwright-core';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { PASSWORD as MEMBER_PASSWORD } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { forEachDatabase } from '../support/databases.js';
import { person, uniqueName } from './support.js';

forEachDatabase('a staff reason keeps its lines on the page', (database) => {
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

  test('a reason written on two lines is shown on two lines in the staff log and on the member\'s page', { skip: skipWithoutChromium }, async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const member = await createAccount(t.deps.stores, t.clock, { username: uniqueName('lines'), password: MEMBER_PASSWORD });
    const done = await moderator.visitor.post(`/admin/members/${member.id}/status`, { status: 'suspended', reason: 'Spam in three threads\r\nSee the second report', confirm: 'yes' });
    assert.equal(done.status, 303);

    const context = await browser.newContext();
    await context.addCookies([...moderator.visitor.cookies].map(([name, value]) => ({ name, value, url: t.baseUrl })));
    const page = await context.newPage();
    for (const path of ['/admin/staff-log', `/admin/members/${member.id}`]) {
      assert.equal((await page.goto(`${t.baseUrl}${path}`))?.status(), 200, path);
      assert.equal(await page.locator('table.staff-log td.reason').first().innerText(), 'Spam in three threads\nSee the second report', path);
    }
    await context.close();
  });
});
