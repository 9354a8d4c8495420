/**
 * The staff console's "done means" (issue 34), in headless Chromium on each database: a moderator
 * with two-step verification signs in, finds a member by nickname, suspends them with a reason
 * through the confirmation page, the member's access token answers 401 at once at the resource
 * API, and the action is in the staff log. The console's pages fit a phone's width.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser as Chromium, type Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { Browser, PASSWORD as MEMBER_PASSWORD, newClient, obtainTokens } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';
import { PASSWORD, person, uniqueName } from './support.js';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const REASON = 'Posted phishing links in three threads';

forEachDatabase('a moderator in the staff console, in Chromium', (database) => {
  let t: TestApp;
  let chromiumBrowser: Chromium;

  before(async () => {
    t = await startTestApp(database, { clock: new TestClock(Date.now()) });
    if (!skipWithoutChromium) chromiumBrowser = await launchChromium();
  });
  after(async () => {
    await chromiumBrowser?.close();
    await t?.close();
  });

  /**
   * Nothing on the page reaches past a phone's width: a table of records (members, sessions,
   * tokens, log lines) stands each row as a block, every cell after its column's name, so no
   * column hides past the screen's edge. Only the overview's grid of daily figures scrolls
   * sideways, in its own box (`.table-wrap`): what is inside it reaches as far as the box.
   */
  async function fitsPhone(page: Page, what: string): Promise<void> {
    await page.setViewportSize(PHONE);
    const [widest, element] = await page.evaluate(() => [...document.querySelectorAll('body *')]
      .map((e): [number, string] => [(e.closest('.table-wrap:has(> table.figures)') ?? e).getBoundingClientRect().right, `${e.tagName.toLowerCase()}.${e.className}`])
      .reduce((a, b) => (b[0] > a[0] ? b : a), [0, '']));
    assert.ok(widest <= PHONE.width, `${what}: at ${PHONE.width}px ${element} reaches ${Math.round(widest)}px`);
    await page.setViewportSize(DESKTOP);
  }

  /**
   * On a phone the overview's grid of daily figures is wider than the screen and scrolls in its
   * box: a shade at its right edge says so, and scrolled to its last column each row still shows
   * its day, under the day column's heading.
   */
  async function dayStaysInView(page: Page): Promise<void> {
    await page.setViewportSize(PHONE);
    const grid = page.locator('.table-wrap:has(> table.figures)');
    const measured = await grid.evaluate((box) => {
      const wide = box.scrollWidth > box.clientWidth;
      box.scrollLeft = box.scrollWidth;
      const day = box.querySelector('tbody th[scope=row]')!.getBoundingClientRect();
      const heading = box.querySelector('thead th')!.getBoundingClientRect();
      return { wide, shade: getComputedStyle(box).backgroundImage, boxLeft: box.getBoundingClientRect().left, dayLeft: day.left, headingLeft: heading.left, scrolled: box.scrollLeft };
    });
    assert.ok(measured.wide, 'the grid is wider than a phone, so it scrolls in its box');
    assert.ok(measured.scrolled > 0, 'scrolled to its last column');
    assert.match(measured.shade, /radial-gradient/, 'a shade at the edge says it scrolls');
    assert.ok(Math.abs(measured.dayLeft - measured.boxLeft) < 1, `the day stays in view: at ${measured.dayLeft}px, the box at ${measured.boxLeft}px`);
    assert.ok(Math.abs(measured.headingLeft - measured.boxLeft) < 1, `its heading stays above it, not another column's: at ${measured.headingLeft}px`);
    await page.setViewportSize(DESKTOP);
  }

  test('a moderator with two-step finds a member, suspends them with a reason, the member\'s token answers 401 at once, and the staff log has it', { skip: skipWithoutChromium }, async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const nickname = `Spammy ${uniqueName('')}`;
    const member = await createAccount(t.deps.stores, t.clock, { username: uniqueName('spam'), password: MEMBER_PASSWORD, nickname });
    const app = await newClient(t);
    const memberBrowser = new Browser(t);
    assert.equal((await memberBrowser.signIn(member.username)).status, 303);
    const { access_token: token } = await obtainTokens(t, memberBrowser, app, { scope: 'profile:read' });
    const me = () => fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await me()).status, 200, 'the token works before');

    const context = await chromiumBrowser.newContext({ locale: 'en-US', viewport: DESKTOP });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    // The console sends no one to sign in (it is a 404 to the signed out); the moderator signs in, then goes there.
    await page.goto(`${t.baseUrl}/login?return_to=%2Fadmin`);
    await page.getByLabel('Username').fill(moderator.user.username);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await Promise.all([page.waitForURL(/\/login\/second-step/), page.locator('main form button[type=submit]').first().click()]);
    await page.locator('input[name=code]').fill(totpCode(moderator.secret!, t.clock.now()));
    await Promise.all([page.waitForURL(`${t.baseUrl}/admin`), page.locator('main form button[type=submit]').first().click()]);
    t.clock.advance(30_000);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    assert.equal(await page.locator('svg[role=img]').count(), 5, 'a chart per figure');
    await fitsPhone(page, 'overview');
    await dayStaysInView(page);

    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByLabel('Find a member').fill(nickname.split(' ')[1]!);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: new RegExp(nickname) }).click();
    await page.waitForURL(`${t.baseUrl}/admin/members/${member.id}`);
    await fitsPhone(page, 'member');
    assert.match(await page.locator('main').innerText(), /1 authorized app/);

    await page.getByLabel('New status').selectOption('suspended');
    await page.locator('#status-reason').fill(REASON);
    await page.getByRole('button', { name: 'Change status…' }).click();
    await page.getByRole('heading', { name: /Make .* Suspended\?/ }).waitFor();
    assert.match(await page.locator('main').innerText(), /will no longer be able to sign in/);
    await fitsPhone(page, 'confirmation');
    await Promise.all([page.waitForURL(/notice=status/), page.getByRole('button', { name: 'Make Suspended' }).click()]);
    await page.getByText('The status was changed.').waitFor();

    const refused = await me();
    assert.equal(refused.status, 401, 'the member\'s token answers 401 at once');

    await page.getByRole('link', { name: 'Staff log' }).click();
    const row = page.locator('table.staff-log tbody tr').first();
    const text = await row.innerText();
    for (const expected of [moderator.user.username, 'Set status to Suspended', member.username, REASON]) assert.ok(text.includes(expected), `${expected} in "${text}"`);
    await fitsPhone(page, 'staff log');
    await context.close();
  });
});
