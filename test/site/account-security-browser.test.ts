/**
 * Account security in a real browser (headless Chromium; issue 18): turning on two-step
 * verification, the second step of sign-in, passkeys with Chromium's virtual authenticator
 * (DevTools protocol `WebAuthn`), and an app's authorization flow through the second step.
 * BASE_URL is http://localhost:PORT: WebAuthn accepts localhost as a secure origin and as a
 * relying party, and refuses IP addresses.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { MAX_PASSKEYS } from '../../src/core/accounts/passkeys.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { pkcePair } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';

const ARTIFACTS = 'test-artifacts/site';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const STEP = 30_000;

describe('account security in a browser', () => {
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp(temporarySqliteDatabase(), { hostname: 'localhost' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A virtual platform authenticator (a laptop's fingerprint reader, say) for this page's browser context. */
  async function addAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return { cdp, authenticatorId };
  }

  async function passwordStep(page: Page, username: string, password: string): Promise<void> {
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  async function signedInPage(username: string, password: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/login`);
    await passwordStep(page, username, password);
    await page.waitForURL(`${t.baseUrl}/`);
    return { context, page };
  }

  /** Turns two-step verification on as a person does, reading the key off the page; returns it. */
  async function enrol(page: Page): Promise<string> {
    await page.goto(`${t.baseUrl}/settings/security`);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = (await page.locator('#totp-secret').innerText()).replace(/\s/g, '');
    const qr = page.getByRole('img', { name: /QR code/ });
    assert.ok(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the QR code is shown (the CSP allows data: images)');
    assert.match(await page.locator('#otpauth-uri').innerText(), /^otpauth:\/\/totp\/Community:/);
    await page.screenshot({ path: `${ARTIFACTS}/security-enrol.png`, fullPage: true });
    await page.getByLabel('Code from your app').fill(totpCode(secret, t.clock.now()));
    await page.getByRole('button', { name: 'Turn on two-step verification' }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await codes.first().waitFor();
    assert.equal(await codes.count(), 10);
    await page.screenshot({ path: `${ARTIFACTS}/security-recovery-codes.png`, fullPage: true });
    t.clock.advance(STEP);
    return secret;
  }

  test('a member turns on two-step verification: QR code and key, a code to finish, ten recovery codes once', async () => {
    await createAccount(t.deps.stores, t.clock, { username: 'enroller', password: 'enroller password' });
    const { context, page } = await signedInPage('enroller', 'enroller password');
    await enrol(page);
    await page.getByRole('link', { name: 'I have saved them' }).click();
    assert.equal(await page.getByRole('list', { name: 'Recovery codes' }).count(), 0, 'shown once');
    assert.match(await page.getByRole('region', { name: 'Two-step verification' }).innerText(), /On: signing in asks for a code/);
    await page.screenshot({ path: `${ARTIFACTS}/security.png`, fullPage: true });
    await context.close();
  });

  test('the recovery codes offer Copy, Download and Print, and the security page fits a phone in every language', async () => {
    await createAccount(t.deps.stores, t.clock, { username: 'phoner', password: 'phoner password' });
    const { context, page } = await signedInPage('phoner', 'phoner password');
    await enrol(page);
    assert.ok(await page.getByRole('button', { name: 'Copy' }).isVisible(), 'Copy is shown with the script');
    assert.ok(await page.getByRole('button', { name: 'Print' }).isVisible(), 'Print is shown with the script');
    const download = page.getByRole('link', { name: 'Download' });
    assert.equal(await download.getAttribute('download'), 'recovery-codes.txt');
    const file = decodeURIComponent((await download.getAttribute('href'))!.replace(/^data:text\/plain;charset=utf-8,/, ''));
    const shown = await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').allInnerTexts();
    assert.deepEqual(file.trim().split('\n').slice(-10), shown, 'the file holds the codes shown');
    await page.setViewportSize(PHONE);
    for (const lang of ['en', 'zh-CN', 'zh-TW']) {
      await context.addCookies([{ name: 'lang', value: lang, url: t.baseUrl }]);
      await page.goto(`${t.baseUrl}/settings/security`);
      const widest = await page.evaluate(() => Math.max(...[...document.querySelectorAll('body *')].map((e) => e.getBoundingClientRect().right)));
      assert.ok(widest <= PHONE.width, `${lang}: nothing reaches past the screen's right edge (${widest}px)`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${lang}: no sideways scrolling`);
      await page.screenshot({ path: `${ARTIFACTS}/security-phone-${lang}.png`, fullPage: true });
    }
    await context.close();
  });

  test('sign-in asks for the authenticator code on its own page after the password', async () => {
    await createAccount(t.deps.stores, t.clock, { username: 'twostep', password: 'twostep password' });
    const first = await signedInPage('twostep', 'twostep password');
    const secret = await enrol(first.page);
    await first.context.close();

    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/login?return_to=${encodeURIComponent('/settings/security')}`);
    await passwordStep(page, 'twostep', 'twostep password');
    await page.waitForURL(`${t.baseUrl}/login/second-step`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Two-step verification');
    await page.getByLabel('Code from your authenticator app').fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    assert.match(await page.getByRole('alert').innerText(), /not right/);
    await page.getByLabel('Code from your authenticator app').fill(totpCode(secret, t.clock.now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${t.baseUrl}/settings/security`);
    assert.match(await page.getByRole('region', { name: 'Where you are signed in' }).innerText(), /Headless Chrome on Linux \(this browser\)/);
    await context.close();
  });

  test('a member registers two passkeys, renames one and removes the other, in Chromium with a virtual authenticator', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'keyholder', password: 'keyholder password' });
    const { context, page } = await signedInPage('keyholder', 'keyholder password');
    const laptop = await addAuthenticator(page);
    await page.goto(`${t.baseUrl}/settings/security`);
    await page.getByLabel('Name of the new passkey').fill('Laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('The passkey was added').waitFor();
    // A second device: the first authenticator already holds a passkey of this account.
    await laptop.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: laptop.authenticatorId });
    const phone = await addAuthenticator(page);
    t.clock.advance(60_000);
    await page.getByLabel('Name of the new passkey').fill('Phone');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    // The first addition's notice is still on the page until the next one loads: wait for the new passkey itself.
    await page.getByRole('button', { name: 'Rename passkey Phone' }).waitFor();
    const stored = await t.deps.stores.passkeys.listForUser(user.id);
    assert.deepEqual(stored.map((p) => p.name), ['Laptop', 'Phone']);
    const { credentials } = await phone.cdp.send('WebAuthn.getCredentials', { authenticatorId: phone.authenticatorId });
    assert.equal(credentials.length, 1);
    assert.equal(credentials[0]!.isResidentCredential, true, 'a discoverable credential');

    await page.getByLabel('New name for passkey Phone').fill('Old phone');
    await page.getByRole('button', { name: 'Rename passkey Phone' }).click();
    await page.getByText('The passkey was renamed').waitFor();
    await page.getByRole('button', { name: 'Remove passkey Laptop' }).click();
    await page.getByText('The passkey was removed').waitFor();
    assert.deepEqual((await t.deps.stores.passkeys.listForUser(user.id)).map((p) => p.name), ['Old phone']);
    assert.match(await page.getByRole('region', { name: 'Security log' }).innerText(), /Passkey removed “Laptop”/);
    await page.screenshot({ path: `${ARTIFACTS}/security-passkeys.png`, fullPage: true });

    // A passkey alone signs in, from the sign-in page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(`${t.baseUrl}/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${t.baseUrl}/`);
    assert.ok(await page.getByRole('button', { name: 'Sign out' }).isVisible(), 'signed in with the passkey alone');
    const sessions = await t.deps.stores.sessions.listForUser(user.id, t.clock.now());
    assert.deepEqual(sessions[0]!.amr, ['hwk', 'user', 'mfa']);

    // A passkey does not turn two-step verification on by itself (no recovery codes without an
    // app): the password alone still signs in. With it on, the passkey serves as the second step.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(`${t.baseUrl}/login`);
    await passwordStep(page, 'keyholder', 'keyholder password');
    await page.waitForURL(`${t.baseUrl}/`);
    await enrol(page);
    await page.goto(`${t.baseUrl}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(`${t.baseUrl}/login`);
    await passwordStep(page, 'keyholder', 'keyholder password');
    await page.waitForURL(`${t.baseUrl}/login/second-step`);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL(`${t.baseUrl}/`);
    const latest = (await t.deps.stores.sessions.listForUser(user.id, t.clock.now()))[0]!;
    assert.deepEqual(latest.amr, ['pwd', 'hwk', 'user', 'mfa']);
    // Each passkey change and each sign-in, whatever signed it in, is one audit event, with no passkey's name.
    const audited = t.audit.filter((e) => 'userId' in e && e.userId === user.id);
    assert.deepEqual(audited.filter((e) => e.audit.startsWith('passkey.')).map((e) => e.audit), ['passkey.added', 'passkey.added', 'passkey.removed']);
    assert.deepEqual(audited.flatMap((e) => (e.audit === 'sign_in.succeeded' ? [e.method] : [])), ['password', 'passkey', 'password', 'password_passkey']);
    assert.ok(!/Laptop|phone/i.test(JSON.stringify(audited)), 'names stay in the security log');
    await context.close();
  });

  test("Enter in the new passkey's name field adds the passkey, as its button does, in Chinese on a phone", async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'enterkey', password: 'enterkey password' });
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale: 'zh-CN', extraHTTPHeaders: { 'accept-language': 'zh-CN' } });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/login`);
    await page.getByLabel('用户名').fill('enterkey');
    await page.getByLabel('密码').fill('enterkey password');
    await page.getByRole('button', { name: '登录', exact: true }).click();
    await page.waitForURL(`${t.baseUrl}/`);
    await addAuthenticator(page);
    await page.goto(`${t.baseUrl}/settings/security`);
    await page.getByLabel('新通行密钥的名称').fill('笔记本');
    await page.getByLabel('新通行密钥的名称').press('Enter');
    await page.getByText('通行密钥已添加').waitFor();
    assert.deepEqual((await t.deps.stores.passkeys.listForUser(user.id)).map((p) => p.name), ['笔记本']);
    await context.close();
  });

  test("a new passkey's name the page would refuse is told before the device makes a passkey, in the page's language; mended, the passkey is added", async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'namer', password: 'namer password' });
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale: 'zh-CN', extraHTTPHeaders: { 'accept-language': 'zh-CN' } });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/login`);
    await page.getByLabel('用户名').fill('namer');
    await page.getByLabel('密码').fill('namer password');
    await page.getByRole('button', { name: '登录', exact: true }).click();
    await page.waitForURL(`${t.baseUrl}/`);
    const device = await addAuthenticator(page);
    let made = 0;
    device.cdp.on('WebAuthn.credentialAdded', () => { made++; });
    await page.goto(`${t.baseUrl}/settings/security`);
    const name = page.getByLabel('新通行密钥的名称');
    await name.fill('笔记\u202e本');
    await page.getByRole('button', { name: '添加通行密钥' }).click();
    const status = page.locator('#passkey-name ~ [data-webauthn-status]');
    await page.getByText('请删除其中的控制字符或不可见字符。').first().waitFor();
    assert.equal(await status.innerText(), '请删除其中的控制字符或不可见字符。', 'told in the form, as the page would say it');
    assert.equal(await name.evaluate((field: HTMLInputElement) => field.validationMessage), '请删除其中的控制字符或不可见字符。');
    assert.equal(page.url(), `${t.baseUrl}/settings/security`, 'nothing was sent');
    await page.waitForTimeout(300);
    assert.equal(made, 0, 'the device made no passkey');
    assert.equal((await device.cdp.send('WebAuthn.getCredentials', { authenticatorId: device.authenticatorId })).credentials.length, 0);
    await name.fill('笔记本');
    await page.getByRole('button', { name: '添加通行密钥' }).click();
    await page.getByText('通行密钥已添加').waitFor();
    assert.equal(made, 1);
    assert.deepEqual((await t.deps.stores.passkeys.listForUser(user.id)).map((p) => p.name), ['笔记本']);
    await context.close();
  });

  test(`an account with ${MAX_PASSKEYS} passkeys is told so in the form's status line before the device makes one; no passkey is left on the device`, async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'keyring', password: 'keyring password' });
    for (let i = 0; i < MAX_PASSKEYS; i++) {
      await t.deps.stores.passkeys.insert({ credentialId: `seeded-${i}`, userId: user.id, name: `Key ${i}`, publicKey: 'AAAA', counter: 0, transports: [], backedUp: false }, t.clock.now());
    }
    const { context, page } = await signedInPage('keyring', 'keyring password');
    const device = await addAuthenticator(page);
    let made = 0;
    device.cdp.on('WebAuthn.credentialAdded', () => { made++; });
    await page.goto(`${t.baseUrl}/settings/security`);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    const status = page.locator('#passkey-name ~ [data-webauthn-status]');
    await page.waitForFunction(() => /Remove one/.test(document.querySelector('#passkey-name ~ [data-webauthn-status]')?.textContent ?? ''));
    assert.equal(await status.innerText(), `You have ${MAX_PASSKEYS} passkeys, the most an account can have. Remove one before adding another.`);
    assert.equal(page.url(), `${t.baseUrl}/settings/security`, 'nothing was sent');
    await page.waitForTimeout(300);
    assert.equal(made, 0, 'the device made no passkey');
    assert.equal(await page.getByRole('button', { name: 'Add a passkey' }).isEnabled(), true, 'the button works again once one is removed');
    assert.equal((await t.deps.stores.passkeys.listForUser(user.id)).length, MAX_PASSKEYS);
    await context.close();
  });

  test("a new passkey's name cannot be changed while the passkey is being made, so the name the server checked is the one it stores; after a failure it can be mended", async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: 'steady', password: 'steady password' });
    const { context, page } = await signedInPage('steady', 'steady password');
    await addAuthenticator(page);
    await page.goto(`${t.baseUrl}/settings/security`);
    const name = page.getByLabel('Name of the new passkey');
    let release = (): void => undefined;
    // Resolved once the second request is held: releasing before that would release nothing,
    // and the request would then wait for ever (a CI failure, 2026-12-04).
    let markHeld = (): void => undefined;
    const held = new Promise<void>((resolve) => { markHeld = resolve; });
    let failNext = true;
    await page.route('**/settings/security/passkeys/options', async (route) => {
      if (failNext) {
        failNext = false;
        await route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"server_error"}' });
        return;
      }
      await new Promise<void>((resolve) => { release = resolve; markHeld(); });
      await route.continue();
    });
    await name.fill('Laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('The passkey was not used. You can try again.').waitFor();
    assert.equal(await name.evaluate((field: HTMLInputElement) => field.readOnly), false, 'editable again after a failure');
    await name.fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Waiting for your passkey…').waitFor();
    assert.equal(await name.evaluate((field: HTMLInputElement) => field.readOnly), true, 'read-only while the passkey is made');
    await name.press('End');
    await page.keyboard.type(' changed');
    await held;
    release();
    await page.getByText('The passkey was added. You can sign in with it.').waitFor();
    assert.deepEqual((await t.deps.stores.passkeys.listForUser(user.id)).map((p) => p.name), ['Work laptop']);
    await context.close();
  });

  test('a passkey button on a page left open while another tab signed in (a new form token) says to reload the page, not to try again', async () => {
    await createAccount(t.deps.stores, t.clock, { username: 'twotabs', password: 'twotabs password' });
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale: 'zh-CN', extraHTTPHeaders: { 'accept-language': 'zh-CN' } });
    const [stale, other] = [await context.newPage(), await context.newPage()];
    await addAuthenticator(stale);
    await stale.goto(`${t.baseUrl}/login`);
    await other.goto(`${t.baseUrl}/login`);
    await other.getByLabel('用户名').fill('twotabs');
    await other.getByLabel('密码').fill('twotabs password');
    await other.getByRole('button', { name: '登录', exact: true }).click();
    await other.waitForURL(`${t.baseUrl}/`);
    await stale.getByRole('button', { name: '使用通行密钥登录' }).click();
    await stale.getByText('此页面已过期，请刷新页面后重试。').waitFor();
    assert.equal(stale.url(), `${t.baseUrl}/login`);
    await context.close();
  });

  /** How many passkeys `device` holds once the page's script had time to signal (it changes soon after the page loads). */
  async function heldBy(page: Page, device: { cdp: CDPSession; authenticatorId: string }, awaited: number): Promise<number> {
    const held = async () => (await device.cdp.send('WebAuthn.getCredentials', { authenticatorId: device.authenticatorId })).credentials.length;
    for (let i = 0; i < 20 && await held() !== awaited; i++) await page.waitForTimeout(100);
    return held();
  }

  /** Removes the account's passkey named `name` from another browser, whose device holds none. */
  async function removeElsewhere(username: string, password: string, name: string): Promise<void> {
    const other = await signedInPage(username, password);
    await other.page.goto(`${t.baseUrl}/settings/security`);
    await other.page.getByRole('button', { name: `Remove passkey ${name}` }).click();
    await other.page.getByText('The passkey was removed').waitFor();
    await other.context.close();
  }

  test('a passkey removed on the security page and then used to sign in is told so, and the browser forgets it (signalUnknownCredential)', async () => {
    await createAccount(t.deps.stores, t.clock, { username: 'forgetter', password: 'forgetter password' });
    const { context, page } = await signedInPage('forgetter', 'forgetter password');
    const device = await addAuthenticator(page);
    await page.goto(`${t.baseUrl}/settings/security`);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('The passkey was added').waitFor();
    // Removed from another browser: this one's security page would have its device drop it (signalAllAcceptedCredentials).
    await removeElsewhere('forgetter', 'forgetter password', 'Passkey');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(`${t.baseUrl}/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByText('That passkey is no passkey of an account here').waitFor();
    // The page's script signals once it loads; the authenticator forgets soon after.
    assert.equal(await heldBy(page, device, 0), 0, 'the authenticator no longer offers it');
    await context.close();
  });

  test("a passkey removed on the security page is dropped by the device at once, and one removed from another browser once the device's browser views the page (signalAllAcceptedCredentials)", async () => {
    await createAccount(t.deps.stores, t.clock, { username: 'dropper', password: 'dropper password' });
    const { context, page } = await signedInPage('dropper', 'dropper password');
    const device = await addAuthenticator(page);
    await page.goto(`${t.baseUrl}/settings/security`);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('The passkey was added').waitFor();
    await page.waitForTimeout(500);
    assert.equal(await heldBy(page, device, 1), 1, 'a passkey the account has is kept');
    await page.getByRole('button', { name: 'Remove passkey Passkey' }).click();
    await page.getByText('The passkey was removed').waitFor();
    assert.equal(await heldBy(page, device, 0), 0, 'the removed passkey is no longer offered, before any sign-in with it fails');

    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('The passkey was added').waitFor();
    await removeElsewhere('dropper', 'dropper password', 'Passkey');
    assert.equal(await heldBy(page, device, 1), 1, 'the device has not heard of it yet');
    await page.goto(`${t.baseUrl}/settings/security`);
    assert.equal(await heldBy(page, device, 0), 0, 'the next view of the page has the device drop it');
    await context.close();
  });

  test('the authorization flow through the second step ends with an id_token whose amr is pwd, otp and mfa', async () => {
    await createAccount(t.deps.stores, t.clock, { username: 'appuser', password: 'appuser password' });
    const first = await signedInPage('appuser', 'appuser password');
    const secret = await enrol(first.page);
    await first.context.close();
    const { client, secret: clientSecret } = await registerClient(t.deps.stores, t.clock, {
      name: 'Browser App', type: 'confidential', redirectUris: ['https://app.example/callback'], ownerId: null,
      homepageUrl: 'https://app.example', description: 'An app under test.',
    });

    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    // The app's callback: the browser never leaves the machine; the test reads the address.
    let callback: URL | undefined;
    await page.route('https://app.example/**', async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the app' });
    });
    const pkce = pkcePair();
    const query = new URLSearchParams({
      response_type: 'code', client_id: client.clientId, redirect_uri: 'https://app.example/callback', scope: 'openid profile:read',
      state: 'browser-state', nonce: 'browser-nonce', code_challenge: pkce.challenge, code_challenge_method: 'S256', prompt: 'login',
    });
    await page.goto(`${t.baseUrl}/oauth/authorize?${query}`);
    await page.waitForURL(/\/login\?/);
    await passwordStep(page, 'appuser', 'appuser password');
    await page.waitForURL(`${t.baseUrl}/login/second-step`);
    await page.getByLabel('Code from your authenticator app').fill(totpCode(secret, t.clock.now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByText('back at the app').waitFor();
    assert.equal(callback?.searchParams.get('state'), 'browser-state');

    const response = await fetch(`${t.baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', code: callback!.searchParams.get('code')!, redirect_uri: 'https://app.example/callback',
        code_verifier: pkce.verifier, client_id: client.clientId, client_secret: clientSecret!,
      }),
    });
    assert.equal(response.status, 200);
    const claims = decodeJwt(((await response.json()) as { id_token: string }).id_token);
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(claims.nonce, 'browser-nonce');
    await context.close();
  });
});
