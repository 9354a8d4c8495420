/**
 * A Chinese-speaking member's whole way through the site in headless Chromium (issue 32's "done
 * means"), in a browser that asks for zh-CN: sign-up with a Chinese nickname from an app that
 * sends `ui_locales=zh-CN`, consent, two-step verification, an e-mail address verified by the
 * mailed link, and a forgotten password reset by mail with the second step. Every page visited
 * must say `<html lang="zh-CN">`, hold no English sentence and fit a phone's width; the problems
 * are collected and reported together. With WALK_SHOTS=1 each page is also saved, at desktop and
 * phone width, under /tmp/walk-shots/ for a reader of Chinese to look at (SQLite run only).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { englishSentences } from '../i18n/untranslated.js';
import { pkcePair, tokenRequest } from '../oauth/helpers.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail } from '../support/member-mail.js';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const SHOTS = process.env.WALK_SHOTS === '1' ? '/tmp/walk-shots' : undefined;
const STEP = 30_000;
const USERNAME = 'linxw';
const NICKNAME = '林小伟';
const EMAIL = 'linxw@example.test';
const FULL_WIDTH_EMAIL = 'ｌｉｎｘｗ＠ｅｘａｍｐｌｅ．ｔｅｓｔ';

forEachDatabase('a member in Chinese, in Chromium', (database) => {
  let t: TestAppWithSmtp;
  let browser: Browser;
  let app: Server;
  let appPort: number;

  before(async () => {
    t = await startAppWithSmtp(database);
    app = createServer((_request, response) => response.end('back at the app'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appPort = (app.address() as { port: number }).port;
    if (!skipWithoutChromium) browser = await launchChromium();
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => app?.close(resolve));
    await t?.close();
  });

  const deliver = () => deliverMail(t);

  test('a member signs up, approves an app, turns on two-step, verifies an address and resets the password, all in Chinese', { skip: skipWithoutChromium }, async () => {
    const problems: string[] = [];
    let shot = 0;
    /** The link in the latest mail holding one to `path`; the mail, too, must be in Chinese. */
    function linkInLastMail(path: string): string {
      const mail = t.smtp.to(EMAIL).filter((m) => m.text.includes(`${path}?token=`)).at(-1);
      assert.ok(mail, `a mail with a ${path} link arrived`);
      for (const sentence of englishSentences(`${mail.subject}\n${mail.text}`)) problems.push(`mail "${mail.subject}": English "${sentence}"`);
      return new RegExp(`http://[^\\s]+${path.replace(/\//g, '\\/')}\\?token=[A-Za-z0-9_-]+`).exec(mail.text)![0];
    }
    /** Checks the page as a reader of Chinese meets it; saves it at both widths when asked. */
    async function look(page: Page, name: string, expected = 'zh-CN'): Promise<void> {
      await page.waitForLoadState('load');
      const where = `${name} (${new URL(page.url()).pathname})`;
      const lang = await page.evaluate(() => document.documentElement.lang);
      if (lang !== expected) problems.push(`${where}: <html lang="${lang}">`);
      // A Latin app name or username set between Chinese characters gets the space Chinese typesetting puts there.
      const autospace = await page.evaluate(() => getComputedStyle(document.body).getPropertyValue('text-autospace'));
      if (expected.startsWith('zh') && autospace !== 'normal') problems.push(`${where}: text-autospace ${autospace}`);
      for (const sentence of englishSentences(await page.content())) problems.push(`${where}: English "${sentence}"`);
      // Chinese sets no space before full-width punctuation, after a full stop, nor between a Chinese word and a quotation.
      for (const [spaced] of (await page.locator('body').innerText()).matchAll(/.{0,8}(?: [（「，。：；？！]|[\u3400-\u9fff] “|[。！？] [\u3400-\u9fff]).{0,8}/g)) problems.push(`${where}: a space in "${spaced}"`);
      await page.setViewportSize(PHONE);
      const widest = await page.evaluate(() => Math.max(...[...document.querySelectorAll('body *')].map((e) => e.getBoundingClientRect().right)));
      if (widest > PHONE.width) problems.push(`${where}: at ${PHONE.width}px something reaches ${Math.round(widest)}px`);
      if (SHOTS && database.name === 'sqlite') {
        shot += 1;
        const file = `${SHOTS}/${String(shot).padStart(2, '0')}-${name}`;
        await page.screenshot({ path: `${file}-phone.png`, fullPage: true });
        await page.setViewportSize(DESKTOP);
        await page.screenshot({ path: `${file}-desktop.png`, fullPage: true });
      }
      await page.setViewportSize(DESKTOP);
    }

    const { client } = await registerClient(t.deps.stores, t.clock, { name: '读书笔记', type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    const redirectUri = `http://127.0.0.1:${appPort}/callback`;
    const pkce = pkcePair();
    const context = await browser.newContext({ locale: 'zh-CN', timezoneId: 'Asia/Shanghai', viewport: DESKTOP });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);

    // The app sends the member to sign in, asking for Chinese (OpenID Connect Core 1.0 section 3.1.2.1).
    const query = new URLSearchParams({
      response_type: 'code', client_id: client.clientId, redirect_uri: redirectUri, scope: 'openid profile:read',
      state: 'walk-state', code_challenge: pkce.challenge, code_challenge_method: 'S256', ui_locales: 'zh-CN',
    });
    await page.goto(`${t.baseUrl}/oauth/authorize?${query}`);
    await page.waitForURL(/\/login\?/);
    await look(page, 'sign-in-for-app');
    await page.getByRole('link', { name: '立即注册' }).click();
    await page.waitForURL(/\/signup\?/);
    await look(page, 'sign-up-for-app');
    await page.getByLabel('用户名').fill(USERNAME);
    await page.getByLabel('昵称').fill(NICKNAME);
    await page.getByLabel('密码', { exact: true }).fill('password');
    await page.getByRole('button', { name: '注册' }).click();
    await page.getByRole('alert').waitFor();
    await look(page, 'sign-up-mistake');
    await page.getByLabel('密码', { exact: true }).fill('春眠不觉晓 处处闻啼鸟');
    await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.getByRole('button', { name: '注册' }).click()]);
    await look(page, 'consent');
    assert.match(await page.locator('main').innerText(), /林小伟/, 'the consent page names the member by the nickname');
    await Promise.all([page.waitForURL(/127\.0\.0\.1:\d+\/callback/), page.getByRole('button', { name: '允许' }).click()]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), 'walk-state');
    const tokens = await tokenRequest(t, {
      grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: redirectUri,
      code_verifier: pkce.verifier, client_id: client.clientId,
    });
    assert.equal(tokens.status, 200);

    await page.goto(`${t.baseUrl}/`);
    await look(page, 'home');
    await page.goto(`${t.baseUrl}/u/${USERNAME}`);
    await look(page, 'profile');
    assert.match(await page.locator('main').innerText(), /林小伟[\s\S]*@linxw/, 'the nickname with @username');

    // Two-step verification, as a person turns it on: the key read off the page.
    await page.goto(`${t.baseUrl}/settings/security`);
    await look(page, 'security');
    await page.getByRole('button', { name: '设置身份验证器应用' }).click();
    const secret = (await page.locator('#totp-secret').innerText()).replace(/\s/g, '');
    await look(page, 'security-set-up');
    await page.getByLabel('应用中的验证码').fill(totpCode(secret, t.clock.now()));
    await page.getByRole('button', { name: '开启两步验证' }).click();
    await page.getByRole('list', { name: '恢复码' }).waitFor();
    await look(page, 'security-recovery-codes');
    await page.getByRole('link', { name: '我已保存好' }).click();
    await page.waitForURL(`${t.baseUrl}/settings/security`);
    await look(page, 'security-on');
    t.clock.advance(STEP);

    // An e-mail address, verified by the mailed link.
    await page.goto(`${t.baseUrl}/settings/email`);
    await look(page, 'email');
    // Typed in full-width letters, as a Chinese input method left on gives them: the field is no
    // type="email", whose browser check would refuse what the service reads as the address.
    await page.getByLabel('邮箱地址').fill(FULL_WIDTH_EMAIL);
    await page.getByRole('button', { name: '保存并发送验证链接' }).click();
    await page.getByText(`验证链接已发送到 ${EMAIL}`).waitFor();
    await look(page, 'email-sent');
    await deliver();
    await page.goto(linkInLastMail('/email/verify'));
    await look(page, 'email-verified');
    await page.goto(`${t.baseUrl}/settings/email`);
    await look(page, 'email-settings-verified');

    await page.getByRole('button', { name: '退出登录' }).first().click();
    await page.waitForLoadState('load');
    await look(page, 'signed-out');

    // A forgotten password, reset by mail with the second step.
    await page.goto(`${t.baseUrl}/login`);
    await look(page, 'sign-in');
    await page.getByRole('link', { name: '忘记密码？' }).click();
    await page.waitForURL(`${t.baseUrl}/password/forgot`);
    await look(page, 'forgot');
    await page.getByLabel('用户名或邮箱').fill(USERNAME);
    await page.getByRole('button', { name: '发送链接' }).click();
    await page.getByText('重置密码的链接已发送到该邮箱').waitFor();
    await look(page, 'forgot-sent');
    await deliver();
    await page.goto(linkInLastMail('/password/reset'));
    await look(page, 'reset');
    await page.getByLabel('新密码').fill('夜来风雨声 花落知多少');
    await page.getByLabel('身份验证器应用中的验证码，或一个恢复码').fill(totpCode(secret, t.clock.now()));
    await page.getByRole('button', { name: '设置新密码' }).click();
    await page.getByText('密码已修改').waitFor();
    await look(page, 'reset-done');
    t.clock.advance(STEP);

    await page.goto(`${t.baseUrl}/login`);
    await page.getByLabel('用户名').fill(USERNAME);
    await page.getByLabel('密码').fill('夜来风雨声 花落知多少');
    await page.getByRole('button', { name: '登录', exact: true }).click();
    await page.waitForURL(`${t.baseUrl}/login/second-step`);
    await look(page, 'second-step');
    // The field takes a recovery code too (letters and dashes), so a phone must offer letters.
    assert.equal(await page.getByLabel('身份验证器应用中的验证码').getAttribute('inputmode'), 'text');
    await page.getByLabel('身份验证器应用中的验证码').fill(totpCode(secret, t.clock.now()));
    await page.getByRole('button', { name: '验证' }).click();
    await page.waitForURL(`${t.baseUrl}/`);
    await page.goto(`${t.baseUrl}/settings/security`);
    await look(page, 'security-after-reset');
    assert.ok(await page.getByRole('button', { name: '退出登录' }).first().isVisible(), 'signed in with the new password');

    // The member switches to Traditional Chinese with the picker: the pages follow, consent too.
    await page.getByLabel('语言').selectOption('zh-TW');
    await Promise.all([page.waitForURL(`${t.baseUrl}/settings/security`), page.getByRole('button', { name: '切换' }).click()]);
    await look(page, 'zh-TW-security', 'zh-TW');
    await page.goto(`${t.baseUrl}/settings/email`);
    await look(page, 'zh-TW-email', 'zh-TW');
    await page.goto(`${t.baseUrl}/u/${USERNAME}`);
    await look(page, 'zh-TW-profile', 'zh-TW');
    query.delete('ui_locales');
    query.set('prompt', 'consent');
    await page.goto(`${t.baseUrl}/oauth/authorize?${query}`);
    await look(page, 'zh-TW-consent', 'zh-TW');
    await page.goto(`${t.baseUrl}/password/forgot`);
    await look(page, 'zh-TW-forgot', 'zh-TW');

    await context.close();
    await deliver();
    if (SHOTS && database.name === 'sqlite') writeFileSync(`${SHOTS}/mails.txt`, t.smtp.to(EMAIL).map((m) => `${m.subject}\n\n${m.text}`).join('\n\n========\n\n'));
    assert.deepEqual(problems, [], `every page in Chinese, fitting a phone:\n${problems.join('\n')}`);
  });
});
