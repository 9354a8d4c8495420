/**
 * The site in a real browser (headless Chromium): the flows a person clicks through, with a
 * screenshot of each page at desktop and phone width under test-artifacts/site/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { writePost } from '../../src/core/community/posts.js';
import { pkcePair } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';

const ARTIFACTS = 'test-artifacts/site';
const PHONE = { width: 390, height: 844 };
/** A 16×16 PNG, a blue square. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGOQj99PEmIY1TCqYfhqAADnbD0Q6eftKwAAAABJRU5ErkJggg==', 'base64');
const DESKTOP = { width: 1280, height: 900 };

describe('site in a browser', () => {
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp(temporarySqliteDatabase());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Screenshots the page as it is at desktop width and again at phone width. */
  async function snap(page: Page, name: string): Promise<void> {
    await page.setViewportSize(DESKTOP);
    await page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: `${ARTIFACTS}/${name}-phone.png`, fullPage: true });
    await page.setViewportSize(DESKTOP);
  }

  async function signedInContext(username: string, password: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/login`);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${t.baseUrl}/`);
    return { context, page };
  }

  test('a visitor signs up with the keyboard and lands on their profile, signed in', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/signup`);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content', 'the first Tab offers to skip the navigation');
    await page.getByLabel('Username').fill('browser-user');
    await page.getByLabel('Password', { exact: true }).fill('password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /most common passwords/);
    await snap(page, 'signup-error');
    await page.getByLabel('Password', { exact: true }).fill('a quiet harbour at dawn');
    await page.getByLabel('Password', { exact: true }).press('Enter');
    await page.waitForURL(`${t.baseUrl}/u/browser-user`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'browser-user');
    assert.ok(await page.getByRole('button', { name: 'Sign out' }).isVisible());
    await snap(page, 'profile-own');
    await context.close();
  });

  test('a member writes a post and a draft; the draft stays private', async () => {
    await createAccount(t.deps.stores, t.clock, { username: 'writer', password: 'writer password 1' });
    const { context, page } = await signedInContext('writer', 'writer password 1');
    await page.goto(`${t.baseUrl}/posts/new`);
    await page.getByLabel('Title').fill('Harbour at dawn');
    await page.getByLabel('Category').fill('Photography');
    await page.getByLabel('Text').fill('The fog lifted at 6:40.\n\nThen the ferries started <b>running</b>.');
    await snap(page, 'post-new');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.waitForURL(/\/posts\/\d+$/);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Harbour at dawn');
    assert.match(await page.locator('.post-body').innerText(), /Then the ferries started <b>running<\/b>\./);
    await page.getByLabel('Add a comment').fill('Lovely light.');
    await page.getByRole('button', { name: 'Comment' }).click();
    await page.getByRole('button', { name: 'Like' }).click();
    assert.match(await page.locator('article .meta').last().innerText(), /1 like · 1 comment/);
    await snap(page, 'post');

    await page.goto(`${t.baseUrl}/posts/new`);
    await page.getByLabel('Title').fill('Unfinished thoughts');
    await page.getByLabel('Category').fill('Photography');
    await page.getByLabel('Text').fill('Not ready.');
    await page.getByRole('button', { name: 'Save as draft' }).click();
    await page.waitForURL(/\/posts\/\d+$/);
    const draftUrl = page.url();
    assert.match(await page.getByText('only you can see this post').innerText(), /Draft/);
    const stranger = await browser.newPage();
    const response = await stranger.goto(draftUrl);
    assert.equal(response?.status(), 404);
    await stranger.close();

    await page.goto(`${t.baseUrl}/`);
    assert.ok(await page.getByRole('link', { name: 'Harbour at dawn' }).isVisible());
    assert.equal(await page.getByRole('link', { name: 'Unfinished thoughts' }).count(), 0);
    await snap(page, 'home');
    await context.close();
  });

  test('a member creates a personal token, sees it once, and revokes it', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'scripter', password: 'scripter password' });
    const { context, page } = await signedInContext('scripter', 'scripter password');
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
    await page.goto(`${t.baseUrl}/settings/tokens`);
    await page.getByLabel('Name', { exact: true }).fill('nightly backup');
    await page.getByLabel('posts:read').uncheck();
    await page.getByLabel('Expires').selectOption('30');
    await page.getByLabel('Your password').fill('scripter password');
    await page.getByRole('button', { name: 'Create token' }).click();
    const field = page.getByLabel('Your new token');
    const token = await field.inputValue();
    assert.match(token, /^svcp_/);
    assert.equal(await field.getAttribute('readonly'), '');
    await field.focus();
    await page.keyboard.press('Control+A');
    assert.equal(await page.evaluate(() => window.getSelection()?.toString() || (document.activeElement as HTMLInputElement).value.slice(
      (document.activeElement as HTMLInputElement).selectionStart ?? 0, (document.activeElement as HTMLInputElement).selectionEnd ?? 0)), token,
    'the token can be selected for copying without any script of ours');
    const copy = page.locator('button[data-copy="new-token"]');
    assert.equal(await copy.innerText(), 'Copy', 'shown by the script');
    await copy.click();
    // The button changes once the clipboard write has settled, after the click has returned.
    await page.locator('button[data-copy="new-token"]', { hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
    await snap(page, 'tokens-created');
    const bearer = await t.deps.stores.personalTokens.findBearer(hashSecret(token));
    assert.equal(bearer?.user.id, user.id);
    assert.equal(bearer?.scope, 'profile:read');

    await page.goto(`${t.baseUrl}/settings/tokens`);
    assert.equal(await page.getByLabel('Your new token').count(), 0, 'shown once');
    const row = page.getByRole('row', { name: /nightly backup/ });
    assert.match(await row.innerText(), /profile:read/);
    await row.getByRole('button', { name: 'Revoke token nightly backup' }).click();
    assert.match(await page.getByRole('heading', { level: 1 }).innerText(), /Revoke the token “nightly backup”\?/);
    assert.equal((await t.deps.stores.personalTokens.findBearer(hashSecret(token)))?.revokedAt, null, 'asked first, nothing revoked yet');
    await page.getByRole('button', { name: 'Revoke token', exact: true }).click();
    await page.getByRole('status').waitFor();
    assert.match(await page.getByRole('row', { name: /nightly backup/ }).innerText(), /Revoked/);
    assert.notEqual((await t.deps.stores.personalTokens.findBearer(hashSecret(token)))?.revokedAt, null);
    await snap(page, 'tokens-list');
    await context.close();
  });

  test('a member revokes an authorized application and its tokens end', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'reader', password: 'reader password 1' });
    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: 'Photo Printer', type: 'confidential', redirectUris: ['https://printer.example/cb'],
      homepageUrl: 'https://printer.example', description: 'Prints your best posts.',
    });
    const now = t.clock.now();
    await t.deps.stores.consents.save(user.id, client.clientId, 'openid profile:read posts:read', now);
    const grant = await t.deps.stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 'openid profile:read posts:read', nonce: null, authTime: now }, now);
    const tokenHash = hashSecret('svco_browser_test_access_token');
    await t.deps.stores.tokens.insertAccess({ tokenHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: grant.scope, createdAt: now, expiresAt: now + 3_600_000 });

    const { context, page } = await signedInContext('reader', 'reader password 1');
    await page.goto(`${t.baseUrl}/settings/applications`);
    const card = page.getByRole('region', { name: 'Photo Printer' });
    assert.match(await card.innerText(), /Nickname, avatar, bio/);
    await snap(page, 'applications');
    // The card asks first: the button that acts shows once "Revoke access…" is opened.
    assert.equal(await card.getByRole('button', { name: 'Revoke access for Photo Printer' }).isVisible(), false);
    await card.getByText('Revoke access…').click();
    await card.getByRole('button', { name: 'Revoke access for Photo Printer' }).click();
    await page.getByRole('status').waitFor();
    assert.equal(await page.getByRole('region', { name: 'Photo Printer' }).count(), 0);
    assert.notEqual((await t.deps.stores.tokens.findAccessBearer(tokenHash))?.revokedAt, null);
    assert.equal(await t.deps.stores.consents.find(user.id, client.clientId), undefined);
    await snap(page, 'applications-revoked');
    await context.close();
  });

  test('a developer registers an application, copies its secret once and rotates it', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'developer', password: 'developer password' });
    const { context, page } = await signedInContext('developer', 'developer password');
    await page.goto(`${t.baseUrl}/settings/developers`);
    await page.getByLabel('Name', { exact: true }).fill('Gallery Sync');
    await page.getByLabel(/^Homepage/).fill('https://gallery.example');
    await page.getByLabel('Redirect URIs', { exact: true }).fill('http://gallery.example/cb');
    await page.getByRole('button', { name: 'Register application' }).click();
    assert.match(await page.getByRole('alert').innerText(), /must use https, http on a loopback host, or an app.s own scheme/);
    await snap(page, 'developers-error');
    await page.getByLabel('Redirect URIs', { exact: true }).fill('https://gallery.example/cb\nhttp://127.0.0.1:8080/cb');
    await page.getByRole('button', { name: 'Register application' }).click();
    const secret = await page.getByRole('textbox', { name: 'Client secret' }).inputValue();
    assert.match(secret, /^svcs_/);
    const clientId = await page.getByRole('textbox', { name: 'Client ID' }).inputValue();
    const stored = await t.deps.stores.clients.findById(clientId);
    assert.equal(stored?.ownerId, user.id);
    assert.equal(stored?.secretHash, hashSecret(secret));
    await snap(page, 'developer-app-created');

    await page.getByRole('button', { name: 'Rotate secret…' }).click();
    assert.equal((await t.deps.stores.clients.findById(clientId))?.secretHash, hashSecret(secret), 'asked first, the secret still works');
    await page.getByRole('button', { name: 'Rotate secret', exact: true }).click();
    const rotated = await page.getByRole('textbox', { name: 'Client secret' }).inputValue();
    assert.notEqual(rotated, secret);
    assert.equal((await t.deps.stores.clients.findById(clientId))?.secretHash, hashSecret(rotated));
    await page.goto(`${t.baseUrl}/settings/developers`);
    assert.ok(await page.getByRole('link', { name: 'Gallery Sync' }).isVisible());
    await snap(page, 'developers');
    await context.close();
  });

  test('one long word a member typed (a link in a post, an app\'s name) wraps at phone width: no page scrolls sideways', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'linker', password: 'linker password 1' });
    const link = `https://photos.example/albums/${'harbour-at-dawn-'.repeat(12)}full-resolution`;
    const post = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: `Album ${'x'.repeat(100)}`, body: `See ${link}`, category: 'Photography', status: 'published' });
    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: 'A'.repeat(80), type: 'confidential', redirectUris: ['https://linker.example/cb'], ownerId: user.id,
    });
    const { context, page } = await signedInContext('linker', 'linker password 1');
    await page.setViewportSize(PHONE);
    for (const path of ['/', `/posts/${post.id}`, '/u/linker', '/settings/developers', `/settings/developers/${client.clientId}`]) {
      await page.goto(`${t.baseUrl}${path}`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= PHONE.width, `${path} is ${width} px wide on a ${PHONE.width} px phone`);
    }
    await context.close();
  });

  test('an e-mail address wraps at phone width inside Chinese, which has no spaces to break at: the e-mail page never scrolls sideways', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'mailer', password: 'mailer password 1' });
    await t.deps.stores.memberEmails.set(user.id, 'zhangxiaoming.beijing2024.longer.than.a.phone@foxmail.com', 'en', t.clock.now());
    const { context, page } = await signedInContext('mailer', 'mailer password 1');
    await page.setViewportSize(PHONE);
    await context.addCookies([{ name: 'lang', value: 'zh-CN', url: t.baseUrl }]);
    await page.goto(`${t.baseUrl}/settings/email`);
    assert.match(await page.locator('main').innerText(), /尚未验证/, 'the page in Chinese, naming the address');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `/settings/email is ${width} px wide on a ${PHONE.width} px phone (attack86)`);
    await context.close();
  });

  test('a nickname of one long word wraps at phone width: the header, the consent page and the sign-out question never scroll sideways', async () => {
    // 30 letters and no space is a nickname the rules allow (INTERFACE section 12), wider than a phone.
    const user = await createAccount(t.deps.stores, t.clock, { username: 'longname_member_of_thirty_char', nickname: 'W'.repeat(30), password: 'longname password 1' });
    const post = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'Long name', body: 'Hello', category: 'General', status: 'published' });
    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: 'Wide App', type: 'confidential', redirectUris: ['https://wide.example/cb'], ownerId: user.id,
    });
    const query = new URLSearchParams({
      response_type: 'code', client_id: client.clientId, redirect_uri: 'https://wide.example/cb', scope: 'profile:read',
      state: 'wide-state', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    });
    const { context, page } = await signedInContext('longname_member_of_thirty_char', 'longname password 1');
    await page.setViewportSize(PHONE);
    for (const path of ['/', `/posts/${post.id}`, '/u/longname_member_of_thirty_char', '/settings/profile', `/oauth/authorize?${query}`, '/logout']) {
      await page.goto(`${t.baseUrl}${path}`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= PHONE.width, `${path} is ${width} px wide on a ${PHONE.width} px phone`);
    }
    await context.close();
  });

  test('a member uploads an avatar and the profile shows it', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'painter', password: 'painter password' });
    const { context, page } = await signedInContext('painter', 'painter password');
    await page.goto(`${t.baseUrl}/settings/profile`);
    await page.getByLabel('New avatar').setInputFiles({ name: 'not-an-image.png', mimeType: 'image/png', buffer: Buffer.from('hello') });
    await page.getByRole('button', { name: 'Upload avatar' }).click();
    assert.match(await page.getByRole('alert').innerText(), /must be a PNG, JPEG, WebP or GIF/);
    await snap(page, 'profile-settings-error');
    await page.getByLabel('New avatar').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: PNG });
    await page.getByRole('button', { name: 'Upload avatar' }).click();
    await page.getByRole('status').waitFor();
    assert.equal((await t.deps.stores.users.findAvatar(user.id))?.contentType, 'image/png');
    await page.goto(`${t.baseUrl}/u/painter`);
    const avatar = page.getByRole('img', { name: 'Avatar of painter' });
    assert.ok(await avatar.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the uploaded image loads');
    await snap(page, 'profile-avatar');
    await context.close();
  });
});
