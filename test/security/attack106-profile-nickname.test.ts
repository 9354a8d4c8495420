/**
 * attack106 F5: a nickname is 1 to 30 characters (seed 2.2; `NICKNAME_MAX_LENGTH`, counted by code
 * point), and the sign-up form lets the browser take twice as many UTF-16 units, so a name in Han
 * characters beyond the Basic Multilingual Plane (`𠮷`, common in Chinese and Japanese names; two
 * UTF-16 units each) fits there. The profile's field allowed 30 units: typed in Chromium, the
 * 24-character nickname `𠮷野` × 12 stopped at 20 characters, and the profile was saved with the
 * name cut, saying it was saved. The profile's field takes what sign-up's takes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';

const USERNAME = 'jiyejia';
const PASSWORD = 'a name with rare characters';

test('a 24-character nickname of astral Han characters is typed and saved whole on the profile, as at sign-up', { skip: skipWithoutChromium }, async (context) => {
  const t: TestApp = await startTestApp(temporarySqliteDatabase());
  const browser: Browser = await launchChromium();
  context.after(async () => { await browser.close(); await t.close(); });
  const user = await createAccount(t.deps.stores, t.clock, { username: USERNAME, nickname: '吉', password: PASSWORD });
  const page = await (await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'zh-CN', extraHTTPHeaders: { 'Accept-Language': 'zh-CN' } })).newPage();
  await page.goto(`${t.baseUrl}/login`);
  await page.fill('input[name=username]', USERNAME);
  await page.fill('input[name=password]', PASSWORD);
  await Promise.all([page.waitForNavigation(), page.click('form[action="/login"] button[type=submit]')]);
  const nickname = '𠮷野'.repeat(12);
  assert.equal([...nickname].length, 24);
  await page.goto(`${t.baseUrl}/settings/profile`);
  await page.fill('[name=nickname]', '');
  await page.type('[name=nickname]', nickname);
  assert.equal(await page.inputValue('[name=nickname]'), nickname, 'the field holds the whole nickname as typed');
  await Promise.all([page.waitForNavigation(), page.click('main form:has([name=nickname]) button[type=submit]')]);
  assert.equal((await t.deps.stores.users.findById(user.id))?.nickname, nickname);
  await page.goto(`${t.baseUrl}/signup`);
  await page.type('[name=nickname]', nickname);
  assert.equal(await page.inputValue('[name=nickname]'), nickname, 'sign-up takes it too');
});
