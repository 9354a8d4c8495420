/**
 * Account security at /settings/security and the second step of sign-in (issue 18 items 1–5,
 * INTERFACE section 11), over real HTTP on each database, with a TestClock for TOTP time steps.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import { runJanitor } from '../../src/janitor.js';
import { AUDIT_EVENTS } from '../../src/core/audit.js';
import { hashRecoveryCode } from '../../src/core/accounts/recovery-codes.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { CODE_MAX_LENGTH, PENDING_SIGN_IN_MS } from '../../src/core/accounts/two-step.js';
import { RECENT_SIGN_IN_MS } from '../../src/core/accounts/sessions.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT, SIGN_IN_FAILURES_PER_DEVICE } from '../../src/core/accounts/sign-in.js';
import {
  Browser, PASSWORD, type TestClient, authorizeQuery, clientFields, codeExchangeFields, consentForm, newClient, newUser, pkcePair, tokenRequest, unique,
} from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase, whileInsertsFail } from '../support/databases.js';
import { fullWidth } from '../support/full-width.js';
import { normalizes } from '../support/normalizes.js';
import { SoftwarePasskey, addPasskey, passkeyAlone } from '../support/passkey.js';

const KEYS_SECRET = 'a test secret of at least thirty-two characters';
const STEP = 30_000;
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** A browser that names itself with a User-Agent. */
const namedBrowser = (t: TestApp, userAgent: string) => new Browser(t, { 'user-agent': userAgent });

forEachDatabase('account security', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: { KEYS_SECRET } }); });
  after(() => t.close());

  const csrf = (browser: Browser) => browser.cookies.get('svc_csrf')!;
  const security = (browser: Browser, fields: Record<string, string>) =>
    browser.postForm('/settings/security', { _csrf: csrf(browser), ...fields });
  const isSignedIn = async (browser: Browser) => (await browser.fetch('/settings/security')).status === 200;

  async function signedIn(userAgent = CHROME) {
    const user = await newUser(t);
    const browser = namedBrowser(t, userAgent);
    assert.equal((await browser.signIn(user.username)).status, 303);
    return { user, browser };
  }

  /** Turns two-step verification on through the page; the secret and the ten recovery codes. */
  async function enableTotp(browser: Browser): Promise<{ secret: string; codes: string[] }> {
    const started = await security(browser, { action: 'totp-start' });
    assert.equal(started.status, 200);
    const page = await started.text();
    const secret = /id="totp-secret">([A-Z2-7 ]+)</.exec(page)![1]!.replace(/ /g, '');
    assert.match(page, /<img class="qr" src="data:image\/svg\+xml;base64,/, 'a QR code as a data: image');
    assert.match(page, new RegExp(`otpauth://totp/Community:[^<]*secret=${secret}`), 'the otpauth:// URI as text');
    const confirmed = await security(browser, { action: 'totp-confirm', code: totpCode(secret, t.clock.now()) });
    assert.equal(confirmed.status, 200);
    const codes = [...(await confirmed.text()).matchAll(/<li>([a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4})<\/li>/g)].map((m) => m[1]!);
    // The enrolment's step is spent: the next code is the next step's.
    t.clock.advance(STEP);
    return { secret, codes };
  }

  /** Password, then the second step's code; the answer to the second step. */
  async function signInWithCode(browser: Browser, username: string, code: string, returnTo = '/'): Promise<Response> {
    const first = await browser.signIn(username, PASSWORD, returnTo);
    assert.equal(first.status, 303);
    assert.equal(first.headers.get('location'), '/login/second-step');
    return browser.postForm('/login/second-step', { _csrf: csrf(browser), code });
  }

  const events = async (userId: number) => (await t.deps.stores.securityEvents.listForUser(userId, 0, 200)).items;

  // ---- 1. Password change ----------------------------------------------------------------------

  test('the authenticator entry is named by a fixed issuer, Community, whatever the language of the page it was set up from', async () => {
    const { user } = await signedIn();
    const browser = new Browser(t, { 'user-agent': CHROME, 'accept-language': 'zh-CN' });
    assert.equal((await browser.signIn(user.username)).status, 303);
    const page = await (await security(browser, { action: 'totp-start' })).text();
    assert.match(page, /<html lang="zh-CN"/);
    const uri = /id="otpauth-uri">([^<]+)</.exec(page)![1]!.replace(/&amp;/g, '&');
    assert.match(uri, new RegExp(`^otpauth://totp/Community:${user.username}\\?`));
    assert.equal(new URL(uri).searchParams.get('issuer'), 'Community', 'not 社区: apps key an entry by its issuer (docs/site.md)');
  });

  test('password change: the current password is required and the new one follows the sign-up rules', async () => {
    const { user, browser } = await signedIn();
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ current_password: '', new_password: 'a brand new passphrase' }, /Enter your current password/],
      [{ current_password: 'not my password', new_password: 'a brand new passphrase' }, /not your current password/],
      [{ current_password: PASSWORD, new_password: 'short' }, /New password: Use 8 to 256 characters/],
      [{ current_password: PASSWORD, new_password: user.username }, /New password: Your password cannot be your username/],
      [{ current_password: PASSWORD, new_password: 'password123' }, /most common passwords/],
      [{ current_password: PASSWORD, new_password: PASSWORD }, /must differ from the current one/],
    ];
    for (const [fields, message] of cases) {
      const response = await security(browser, { action: 'change-password', ...fields });
      assert.equal(response.status, 400, JSON.stringify(fields));
      assert.match(await response.text(), message);
    }
    const stranger = new Browser(t);
    assert.equal((await stranger.signIn(user.username, PASSWORD)).status, 303, 'the password did not change');
  });

  test('password change: wrong current passwords are counted like sign-ins, then refused with 429', async () => {
    const { user } = await signedIn();
    // A browser without a device cookie for the account counts on the account's counter.
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).status, 303);
    browser.cookies.set('svc_device', '');
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) {
      assert.equal((await security(browser, { action: 'change-password', current_password: `wrong ${i}`, new_password: 'a brand new passphrase' })).status, 400);
    }
    const refused = await security(browser, { action: 'change-password', current_password: PASSWORD, new_password: 'a brand new passphrase' });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal((await new Browser(t).signIn(user.username, 'a brand new passphrase')).status, 429, 'and the sign-in counters are the same ones');
  });

  test('password change: the right current password renews the device cookie, so the wrong ones typed before it stop counting against this browser', async () => {
    const { browser } = await signedIn();
    const wrongTimes = async (n: number, newPassword: string) => {
      for (let i = 0; i < n; i++) {
        assert.equal((await security(browser, { action: 'change-password', current_password: `wrong ${i}`, new_password: newPassword })).status, 400, `wrong password ${i + 1} is an ordinary failure`);
      }
    };
    await wrongTimes(SIGN_IN_FAILURES_PER_DEVICE - 1, 'a brand new passphrase');
    const before = browser.cookies.get('svc_device');
    assert.equal((await security(browser, { action: 'change-password', current_password: PASSWORD, new_password: 'a brand new passphrase' })).status, 303);
    assert.notEqual(browser.cookies.get('svc_device'), before, 'a new device cookie, as a sign-in gives');
    await wrongTimes(SIGN_IN_FAILURES_PER_DEVICE - 1, 'another new passphrase');
    assert.equal((await security(browser, { action: 'change-password', current_password: 'a brand new passphrase', new_password: 'another new passphrase' })).status, 303,
      'the failures before the change no longer count');
  });

  test('password change: every other session ends, this one continues under a new id', async () => {
    const { user, browser } = await signedIn();
    const other = namedBrowser(t, FIREFOX);
    assert.equal((await other.signIn(user.username)).status, 303);
    const before = browser.cookies.get('svc_session')!;
    const changed = await security(browser, { action: 'change-password', current_password: PASSWORD, new_password: 'a brand new passphrase' });
    assert.equal(changed.status, 303);
    assert.equal(changed.headers.get('location'), '/settings/security?notice=password');
    assert.notEqual(browser.cookies.get('svc_session'), before, 'the session id was rotated');
    assert.ok(await isSignedIn(browser), 'this browser stays signed in');
    assert.equal(await isSignedIn(other), false, 'the other browser is signed out');
    const stale = new Browser(t);
    stale.cookies.set('svc_session', before);
    assert.equal(await isSignedIn(stale), false, 'the old session id is worthless');
    assert.equal((await new Browser(t).signIn(user.username, PASSWORD)).status, 401, 'the old password no longer works');
    assert.equal((await new Browser(t).signIn(user.username, 'a brand new passphrase')).status, 303);
    assert.ok((await events(user.id)).some((e) => e.kind === 'password.changed'));
  });

  test('password change: a sign-in waiting for its second step is ended too', async () => {
    const { user, browser } = await signedIn();
    const { secret } = await enableTotp(browser);
    const attacker = new Browser(t);
    const first = await attacker.signIn(user.username, PASSWORD);
    assert.equal(first.headers.get('location'), '/login/second-step', 'the stolen password got as far as the second step');
    const changed = await security(browser, { action: 'change-password', current_password: PASSWORD, new_password: 'a brand new passphrase' });
    assert.equal(changed.status, 303);
    const second = await attacker.postForm('/login/second-step', { _csrf: csrf(attacker), code: totpCode(secret, t.clock.now()) });
    assert.notEqual(second.status, 303, 'the waiting sign-in cannot finish');
    assert.equal(await isSignedIn(attacker), false);
  });

  test('changes that could lock the owner out need a sign-in of the last 15 minutes: an older one is sent to sign in again', async () => {
    const { user, browser } = await signedIn();
    t.clock.advance(RECENT_SIGN_IN_MS + 1000);
    for (const action of ['totp-start', 'passkey-add', 'recovery-codes', 'totp-disable', 'passkey-remove']) {
      const refused = await security(browser, { action });
      assert.equal(refused.status, 303, action);
      assert.equal(refused.headers.get('location'), '/login?reauth=1&return_to=%2Fsettings%2Fsecurity', action);
    }
    const options = await browser.fetch('/settings/security/passkeys/options', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ _csrf: csrf(browser) }),
    });
    assert.equal(options.status, 401);
    const refusal = await options.json() as Record<string, unknown>;
    assert.deepEqual({ error: refusal.error, location: refusal.location }, { error: 'sign_in_again', location: '/login?reauth=1&return_to=%2Fsettings%2Fsecurity' });
    assert.equal(typeof refusal.error_description, 'string');
    assert.equal((await browser.signIn(user.username, PASSWORD, '/settings/security')).status, 303);
    assert.equal((await security(browser, { action: 'totp-start' })).status, 200, 'signed in again: allowed');
  });

  test('an action or notice named like a property of every object (constructor, __proto__) is no action and no notice', async () => {
    const { browser } = await signedIn();
    for (const action of ['constructor', '__proto__', 'hasOwnProperty', 'toString', 'valueOf']) {
      const response = await security(browser, { action });
      assert.equal(response.status, 400, action);
      assert.match(await response.text(), /choose one of the buttons/i);
    }
    for (const path of ['/settings/security', '/settings/tokens', '/settings/applications']) {
      const page = await (await browser.fetch(`${path}?notice=constructor`)).text();
      assert.doesNotMatch(page, /native code|function Object/, path);
    }
  });

  // ---- 2. Two-step verification ---------------------------------------------------------------

  test('two-step enrolment needs a valid code to finish, and shows ten recovery codes once', async () => {
    const { user, browser } = await signedIn();
    const started = await (await security(browser, { action: 'totp-start' })).text();
    const secret = /id="totp-secret">([A-Z2-7 ]+)</.exec(started)![1]!.replace(/ /g, '');
    const wrong = await security(browser, { action: 'totp-confirm', code: totpCode(secret, t.clock.now() + 10 * STEP) });
    assert.equal(wrong.status, 400);
    assert.match(await wrong.text(), /not the one your app shows now/);
    assert.equal((await new Browser(t).signIn(user.username)).status, 303, 'not on before a valid code');
    const confirmed = await security(browser, { action: 'totp-confirm', code: totpCode(secret, t.clock.now()) });
    assert.equal(confirmed.status, 200);
    const codes = [...(await confirmed.text()).matchAll(/<li>([a-z2-7-]{19})<\/li>/g)].map((m) => m[1]!);
    assert.equal(new Set(codes).size, 10, 'ten different recovery codes');
    const later = await (await browser.fetch('/settings/security')).text();
    assert.ok(codes.every((c) => !later.includes(c)), 'shown once');
    assert.match(later, /10 recovery codes left/);
    assert.equal((await new Browser(t).signIn(user.username)).headers.get('location'), '/login/second-step', 'on from now');
  });

  test('the TOTP secret is sealed at rest with KEYS_SECRET and recovery codes are stored only as hashes', async () => {
    const { user, browser } = await signedIn();
    const { secret, codes } = await enableTotp(browser);
    const stored = await t.deps.stores.secondFactors.findTotp(user.id);
    assert.match(stored!.secret, /^enc:v2:/);
    assert.ok(!stored!.secret.includes(secret));
    const rows = await t.deps.database.db.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', user.id).execute();
    assert.equal(rows.length, 10);
    const hashes = new Set(rows.map((r) => r.code_hash));
    for (const code of codes) {
      assert.ok(hashes.has(hashRecoveryCode(code)), 'the SHA-256 is stored');
      assert.ok(!rows.some((r) => r.code_hash.includes(code.replace(/-/g, ''))), 'the code is not');
    }
  });

  test('sign-in asks for the code after the password on its own page, and no session exists before it passes', async () => {
    const { user, browser } = await signedIn();
    const { secret } = await enableTotp(browser);
    const fresh = new Browser(t);
    const first = await fresh.signIn(user.username, PASSWORD, '/posts/new');
    assert.equal(first.status, 303);
    assert.equal(first.headers.get('location'), '/login/second-step');
    assert.equal(fresh.cookies.get('svc_session'), undefined, 'no session cookie');
    assert.equal(await isSignedIn(fresh), false, 'not signed in');
    const sessions = (await t.deps.stores.sessions.listForUser(user.id, t.clock.now())).length;
    const page = await fresh.fetch('/login/second-step');
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Code from your authenticator app/);
    const second = await fresh.postForm('/login/second-step', { _csrf: csrf(fresh), code: totpCode(secret, t.clock.now()) });
    assert.equal(second.status, 303);
    assert.equal(second.headers.get('location'), '/posts/new', 'back where the sign-in was going');
    assert.equal((await t.deps.stores.sessions.listForUser(user.id, t.clock.now())).length, sessions + 1);
    const session = (await t.deps.stores.sessions.listForUser(user.id, t.clock.now()))[0]!;
    assert.deepEqual(session.amr, ['pwd', 'otp', 'mfa']);
    assert.ok(await isSignedIn(fresh));
  });

  test('a used TOTP time step cannot be replayed', async () => {
    const { user, browser } = await signedIn();
    const { secret } = await enableTotp(browser);
    const code = totpCode(secret, t.clock.now());
    assert.equal((await signInWithCode(new Browser(t), user.username, code)).status, 303);
    const replay = await signInWithCode(new Browser(t), user.username, code);
    assert.equal(replay.status, 401, 'the same code again is refused');
    // An earlier step inside the window is no better once a later one was used.
    assert.equal((await signInWithCode(new Browser(t), user.username, totpCode(secret, t.clock.now() - STEP))).status, 401);
    t.clock.advance(STEP);
    assert.equal((await signInWithCode(new Browser(t), user.username, totpCode(secret, t.clock.now()))).status, 303, 'the next step works');
  });

  test('a recovery code signs in once and is then spent', async () => {
    const { user, browser } = await signedIn();
    const { codes } = await enableTotp(browser);
    const used = await signInWithCode(new Browser(t), user.username, codes[0]!.toUpperCase().replace(/-/g, ' '));
    assert.equal(used.status, 303, 'letter case and separators do not matter');
    assert.equal((await signInWithCode(new Browser(t), user.username, codes[0]!)).status, 401, 'a spent code is refused');
    assert.equal(await t.deps.stores.secondFactors.countUnusedRecoveryCodes(user.id), 9);
    const kinds = (await events(user.id)).map((e) => e.kind);
    assert.ok(kinds.includes('recovery_code.used'));
  });

  test('a second-step code typed in full-width characters, as a Chinese input method in full-width mode types it, is the code it reads as', async () => {
    const { user, browser } = await signedIn();
    const { secret, codes } = await enableTotp(browser);
    const typed = fullWidth(totpCode(secret, t.clock.now()));
    assert.match(typed, /^[０-９]{6}$/);
    assert.equal((await signInWithCode(new Browser(t), user.username, typed)).status, 303, 'an authenticator code');
    assert.equal((await signInWithCode(new Browser(t), user.username, fullWidth(codes[0]!.toUpperCase()))).status, 303, 'a recovery code');
  });

  test('a username typed in full-width letters, as a Chinese input method in full-width mode types it, signs in as the username it reads as', async () => {
    const user = await newUser(t);
    const typed = fullWidth(user.username);
    assert.notEqual(typed, user.username);
    const browser = new Browser(t);
    assert.equal((await browser.signIn(typed)).status, 303);
    assert.ok(await isSignedIn(browser));
  });

  test('wrong second-step codes are counted like passwords: past 10 the sign-in is refused with 429', async () => {
    const { user, browser } = await signedIn();
    const { secret } = await enableTotp(browser);
    const attacker = new Browser(t);
    assert.equal((await attacker.signIn(user.username)).headers.get('location'), '/login/second-step');
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) {
      const wrong = await attacker.postForm('/login/second-step', { _csrf: csrf(attacker), code: String(100000 + i) });
      assert.equal(wrong.status, 401);
    }
    const refused = await attacker.postForm('/login/second-step', { _csrf: csrf(attacker), code: totpCode(secret, t.clock.now()) });
    assert.equal(refused.status, 429, 'even the right code');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.match(await refused.text(), /Try again in \d+ minutes?/);
    assert.equal(await isSignedIn(attacker), false);
    assert.ok((await events(user.id)).filter((e) => e.kind === 'sign_in.failed').length >= SIGN_IN_FAILURES_PER_ACCOUNT);
    // The owner's browser holds a device cookie and keeps its own attempts.
    t.clock.advance(STEP);
    assert.equal((await signInWithCode(browser, user.username, totpCode(secret, t.clock.now()))).status, 303);
  });

  test('a sign-in waits for its second step 5 minutes, and is used once', async () => {
    const { user, browser } = await signedIn();
    const { secret } = await enableTotp(browser);
    const slow = new Browser(t);
    await slow.signIn(user.username);
    t.clock.advance(PENDING_SIGN_IN_MS);
    const late = await slow.postForm('/login/second-step', { _csrf: csrf(slow), code: totpCode(secret, t.clock.now()) });
    assert.equal(late.status, 401);
    assert.match(await late.text(), /took too long/);
    assert.equal((await slow.fetch('/login/second-step')).headers.get('location'), '/login');
    t.clock.advance(STEP);
    const quick = new Browser(t);
    await quick.signIn(user.username);
    const pending = quick.cookies.get('svc_pending')!;
    assert.equal((await quick.postForm('/login/second-step', { _csrf: csrf(quick), code: totpCode(secret, t.clock.now()) })).status, 303);
    // The same pending sign-in presented again by another browser starts nothing.
    const copy = new Browser(t);
    await copy.fetch('/login');
    copy.cookies.set('svc_pending', pending);
    t.clock.advance(STEP);
    const again = await copy.postForm('/login/second-step', { _csrf: csrf(copy), code: totpCode(secret, t.clock.now()) });
    assert.equal(again.status, 401);
    assert.equal(await isSignedIn(copy), false);
  });

  test('a code too long to be one is wrong before NFKC reads it: setting the app up, turning it off, the second step of sign-in, deleting the account', async () => {
    // Combining marks of two classes in turn, which NFKC's canonical reordering sorts in time growing
    // with the square of their number; the security page's field holds 20,000 characters.
    const code = `1${'\u0316\u0301'.repeat(10_000)}`.slice(0, CODE_MAX_LENGTH + 1);
    const { user, browser } = await signedIn();
    assert.equal((await security(browser, { action: 'totp-start' })).status, 200);
    const read = async (post: () => Promise<Response>) => {
      let status = 0;
      assert.equal(await normalizes(code, async () => { status = (await post()).status; }), false, 'NFKC did not read it');
      return status;
    };
    assert.equal(await read(() => security(browser, { action: 'totp-confirm', code })), 400, 'not the code the app shows');
    await enableTotp(browser);
    assert.equal(await read(() => security(browser, { action: 'totp-disable', code })), 400, 'still on');
    // The second step's page says the code is wrong, as for any wrong code, not the generic error page.
    const secondStep = new Browser(t);
    let refused: Response | undefined;
    assert.equal(await read(async () => (refused = await signInWithCode(secondStep, user.username, code))), 401, 'not signed in');
    assert.match(await refused!.text(), /<p class="alert" role="alert" id="form-error">That code is not right/);
    assert.equal(await read(() => browser.postForm('/settings/account/delete', { _csrf: csrf(browser), confirm: 'yes', code })), 400, 'not deleted');
    assert.equal(await isSignedIn(browser), true);
  });

  test('turning two-step verification off needs a code', async () => {
    const { user, browser } = await signedIn();
    const { secret } = await enableTotp(browser);
    for (const code of ['', '000000', 'not-a-code']) {
      assert.equal((await security(browser, { action: 'totp-disable', code })).status, 400, `code ${JSON.stringify(code)}`);
    }
    assert.equal((await new Browser(t).signIn(user.username)).headers.get('location'), '/login/second-step', 'still on');
    const off = await security(browser, { action: 'totp-disable', code: totpCode(secret, t.clock.now()) });
    assert.equal(off.status, 303);
    assert.equal((await new Browser(t).signIn(user.username)).headers.get('location'), '/', 'the password alone signs in again');
    assert.equal(await t.deps.stores.secondFactors.countUnusedRecoveryCodes(user.id), 0, 'the recovery codes are gone');
    assert.ok((await events(user.id)).some((e) => e.kind === 'totp.disabled'));
  });

  test('new recovery codes need a code and replace the old ones', async () => {
    const { user, browser } = await signedIn();
    const { secret, codes } = await enableTotp(browser);
    assert.equal((await security(browser, { action: 'recovery-codes', code: '123456' })).status, 400);
    const made = await security(browser, { action: 'recovery-codes', code: totpCode(secret, t.clock.now()) });
    assert.equal(made.status, 200);
    const fresh = [...(await made.text()).matchAll(/<li>([a-z2-7-]{19})<\/li>/g)].map((m) => m[1]!);
    assert.equal(fresh.length, 10);
    assert.equal((await signInWithCode(new Browser(t), user.username, codes[1]!)).status, 401, 'an old code no longer works');
    assert.equal((await signInWithCode(new Browser(t), user.username, fresh[0]!)).status, 303);
  });

  test('the recovery codes\' download says whose they are and for which site, and holds the codes shown', async () => {
    const { user, browser } = await signedIn();
    const { secret } = await enableTotp(browser);
    const page = await (await security(browser, { action: 'recovery-codes', code: totpCode(secret, t.clock.now()) })).text();
    const shown = [...page.matchAll(/<li>([a-z2-7-]{19})<\/li>/g)].map((m) => m[1]!);
    const link = page.match(/href="data:text\/plain;charset=utf-8,([^"]+)" download="recovery-codes.txt"/);
    assert.ok(link, 'a download link');
    const file = decodeURIComponent(link[1]!.replaceAll('&amp;', '&'));
    const [heading, blank, ...codes] = file.trimEnd().split('\n');
    assert.equal(heading, `Recovery codes for two-step verification of the account @${user.username} at Community. Each works once.`, "the site's name in the page's language (the catalogs' own)");
    assert.equal(blank, '');
    assert.deepEqual(codes, shown);
  });

  test('a wrong code is marked on the form it was typed in only: turning two-step off and making new recovery codes each have a code field', async () => {
    const { browser } = await signedIn();
    await enableTotp(browser);
    /** The opening tag of the element with this id. */
    const element = (page: string, id: string) => new RegExp(`<[a-z]+ [^>]*id="${id}"[^>]*>`).exec(page)?.[0] ?? '';
    for (const [action, sent, other] of [['totp-disable', 'disable-code', 'recovery-code'], ['recovery-codes', 'recovery-code', 'disable-code']] as const) {
      const refused = await security(browser, { action, code: '000000' });
      assert.equal(refused.status, 400, action);
      const page = await refused.text();
      assert.match(page, /<p class="alert" role="alert" id="form-error">That code is not right/, `${action}: the section's summary says so`);
      assert.match(element(page, sent), /aria-invalid="true"/, `${action}: #${sent} is marked`);
      assert.match(page, new RegExp(`<p class="field-error" id="${sent}-error">`), `${action}: the message is under #${sent}`);
      assert.doesNotMatch(element(page, other), /aria-invalid|-error/, `${action}: #${other}, of the form not sent, is not marked`);
      assert.doesNotMatch(page, new RegExp(`id="${other}-error"`), `${action}: no message under #${other}`);
    }
  });

  test('a refused passkey name is marked on the form it was typed in only, and kept there: each passkey has a rename form with a name field, as the new passkey\'s form has', async () => {
    const { user, browser } = await signedIn();
    await addPasskey(t, browser);
    await addPasskey(t, browser);
    const [first, second] = await t.deps.stores.passkeys.listForUser(user.id);
    const [sent, other] = [`rename-${first!.credentialId}`, `rename-${second!.credentialId}`];
    const element = (page: string, id: string) => new RegExp(`<input [^>]*id="${id}"[^>]*>`).exec(page)?.[0] ?? '';
    const typed = 'Lap\u200btop';
    const refused = await security(browser, { action: 'passkey-rename', credential_id: first!.credentialId, name: typed });
    assert.equal(refused.status, 400);
    const page = await refused.text();
    assert.match(page, /<p class="alert" role="alert" id="form-error">/, "the section's summary says so");
    assert.match(element(page, sent), /aria-invalid="true"/, 'the field of the form sent is marked');
    assert.match(element(page, sent), new RegExp(`aria-describedby="${sent}-error"`));
    assert.match(page, new RegExp(`<p class="field-error" id="${sent}-error">Remove the control or invisible characters`), 'the message is under it');
    assert.match(element(page, sent), new RegExp(`value="${typed}"`), 'what was typed is kept, to be mended');
    assert.doesNotMatch(element(page, other), /aria-invalid/, "the other passkey's field is not marked");
    assert.match(element(page, other), /value="Laptop"/, "and keeps its passkey's name");
    assert.doesNotMatch(element(page, 'passkey-name'), /aria-invalid/, "nor is the new passkey's");

    const tooLong = 'x'.repeat(61);
    const added = await security(browser, { action: 'passkey-add', name: tooLong, credential: '{}' });
    assert.equal(added.status, 400);
    const addPage = await added.text();
    assert.match(element(addPage, 'passkey-name'), /aria-invalid="true"/, "the new passkey's name field is marked");
    assert.match(element(addPage, 'passkey-name'), new RegExp(`value="${tooLong}"`), 'and keeps what was typed');
    assert.match(addPage, /<p class="field-error" id="passkey-name-error">/);
    for (const id of [sent, other]) assert.doesNotMatch(element(addPage, id), /aria-invalid/, `#${id} is not marked`);
    const unverified = await (await security(browser, { action: 'passkey-add', name: 'Work laptop', credential: '{}' })).text();
    assert.match(element(unverified, 'passkey-name'), /value="Work laptop"/, 'a passkey not verified keeps the name typed for the next try');
  });

  test("the new passkey's form sent with no passkey (Enter in its name field without script) says adding one needs script, not that a passkey failed to verify", async () => {
    const { browser } = await signedIn();
    for (const fields of [{ name: 'Laptop' }, { name: 'Laptop', credential: '' }] as Record<string, string>[]) {
      const refused = await security(browser, { action: 'passkey-add', ...fields });
      assert.equal(refused.status, 400);
      const page = await refused.text();
      assert.match(page, /No passkey came with the form: adding one needs a browser with passkeys and JavaScript\./);
      assert.doesNotMatch(page, /could not be verified/);
    }
    const zh = new Browser(t, { 'user-agent': CHROME, 'accept-language': 'zh-CN' });
    const { user } = await signedIn();
    assert.equal((await zh.signIn(user.username)).status, 303);
    assert.match(await (await security(zh, { action: 'passkey-add', name: '笔记本' })).text(), /表单中没有通行密钥/);
  });

  test("a passkey left unnamed is named in the page's language, the word its name field showed as placeholder", async () => {
    for (const [language, word] of [['zh-CN', '通行密钥'], ['zh-TW', '通行金鑰'], ['en', 'Passkey']] as const) {
      const user = await newUser(t);
      const browser = new Browser(t, { 'user-agent': CHROME, 'accept-language': language });
      assert.equal((await browser.signIn(user.username)).status, 303);
      assert.match(await (await browser.fetch('/settings/security')).text(), new RegExp(`id="passkey-name" [^>]*placeholder="${word}"`));
      await addPasskey(t, browser, { name: '' });
      const [added] = await t.deps.stores.passkeys.listForUser(user.id);
      assert.equal(added!.name, word, `${language}: added`);
      assert.equal((await security(browser, { action: 'passkey-rename', credential_id: added!.credentialId, name: 'Laptop' })).status, 303);
      assert.equal((await security(browser, { action: 'passkey-rename', credential_id: added!.credentialId, name: '  ' })).status, 303);
      assert.equal((await t.deps.stores.passkeys.listForUser(user.id))[0]!.name, word, `${language}: renamed to nothing`);
    }
  });

  test('a passkey removed from its account and used again is told it is no passkey of an account here, and the page asks the browser to forget it; a wrong signature is not', async () => {
    const { user, browser } = await signedIn();
    const removed = await addPasskey(t, browser);
    const kept = await addPasskey(t, browser);
    assert.equal((await security(browser, { action: 'passkey-remove', credential_id: removed.credentialId })).status, 303);
    const zh = new Browser(t, { 'user-agent': CHROME, 'accept-language': 'zh-CN' });
    const refused = await passkeyAlone(zh, removed);
    assert.equal(refused.status, 401);
    const page = await refused.text();
    assert.match(page, /<p class="alert" role="alert" id="form-error">这个通行密钥不属于本站的任何账号，可能已被移除。/);
    assert.match(page, new RegExp(`data-unknown-credential="${removed.credentialId}"`), 'named for public/webauthn.js to signal (WebAuthn L3 signalUnknownCredential)');
    const forged = await (await passkeyAlone(new Browser(t), kept, true)).text();
    assert.match(forged, /That passkey could not be verified/);
    assert.doesNotMatch(forged, /data-unknown-credential/, "a passkey of the account is never the browser's to forget");
    assert.equal((await t.deps.stores.passkeys.listForUser(user.id)).length, 1);
  });

  test('a passkey made on the device but refused by the page (its name) is one the browser is asked to forget; one already registered is not', async () => {
    const { browser } = await signedIn();
    const registerOptions = async () => (await (await browser.postForm('/settings/security/passkeys/options', { _csrf: csrf(browser) })).json()) as { challenge: string };
    const made = new SoftwarePasskey(t.baseUrl);
    const refused = await security(browser, { action: 'passkey-add', name: 'Lap\u202etop', credential: made.register(await registerOptions()) });
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), new RegExp(`data-unknown-credential="${made.credentialId}"`), 'the device holds a passkey no account has');
    const kept = await addPasskey(t, browser);
    const again = await security(browser, { action: 'passkey-add', name: 'Laptop', credential: kept.register(await registerOptions()) });
    assert.equal(again.status, 400);
    const page = await again.text();
    assert.match(page, /That passkey is already registered/);
    assert.doesNotMatch(page, /data-unknown-credential/, "a registered passkey is never the browser's to forget");
  });

  test("the same new passkey sent twice at once (a form sent again, a request retried) is added once, and neither answer asks the browser to forget it: only the copy that spent the challenge decides", async () => {
    const { user, browser } = await signedIn();
    for (let i = 0; i < 5; i++) {
      const options = await (await browser.postForm('/settings/security/passkeys/options', { _csrf: csrf(browser) })).json() as { challenge: string };
      const made = new SoftwarePasskey(t.baseUrl);
      const credential = made.register(options);
      const answers = await Promise.all([1, 2].map(() => security(browser, { action: 'passkey-add', name: `Laptop ${i}`, credential })));
      assert.deepEqual(answers.map((a) => a.status).sort(), [303, 400], 'added once, the copy refused');
      for (const answer of answers) assert.doesNotMatch(await answer.text(), /data-unknown-credential/, "a passkey stored is never the browser's to forget");
      assert.ok((await t.deps.stores.passkeys.listForUser(user.id)).some((p) => p.credentialId === made.credentialId));
    }
  });

  test("a passkey of an account named by another spelling of its id (its base64url's unused last bits set) is never the browser's to forget: the browser reads that spelling as the passkey's own id", async () => {
    const { user, browser } = await signedIn();
    const kept = await addPasskey(t, browser);
    // 16 bytes are 22 base64url characters, the last carrying 4 unused bits: one more set spells the same bytes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const other = kept.credentialId.slice(0, -1) + alphabet[alphabet.indexOf(kept.credentialId.at(-1)!) ^ 1];
    assert.notEqual(other, kept.credentialId);
    assert.ok(Buffer.from(other, 'base64url').equals(Buffer.from(kept.credentialId, 'base64url')), 'the same bytes');
    const respelled = (credential: string) => JSON.stringify({ ...JSON.parse(credential), id: other, rawId: other });
    const signIn = new Browser(t, { 'user-agent': CHROME });
    await signIn.fetch('/login');
    const options = await (await signIn.postForm('/login/passkey/options', { _csrf: csrf(signIn) })).json() as { challenge: string };
    const refused = await signIn.postForm('/login/passkey', { _csrf: csrf(signIn), return_to: '/', credential: respelled(kept.assert(options)) });
    assert.equal(refused.status, 401);
    assert.doesNotMatch(await refused.text(), /data-unknown-credential/, 'a sign-in naming it');
    const registerOptions = await (await browser.postForm('/settings/security/passkeys/options', { _csrf: csrf(browser) })).json() as { challenge: string };
    const again = await security(browser, { action: 'passkey-add', name: 'Lap\u202etop', credential: respelled(kept.register(registerOptions)) });
    assert.equal(again.status, 400);
    assert.doesNotMatch(await again.text(), /data-unknown-credential/, 'a registration naming it, refused');
    assert.equal((await t.deps.stores.passkeys.listForUser(user.id)).length, 1);
  });

  test("every view of the security page names the account's passkeys as stored now, with the relying party and user handle the registration used, for the browser to drop one removed (signalAllAcceptedCredentials)", async () => {
    const { browser } = await signedIn();
    const accepted = async () => {
      const section = /<section class="card" aria-labelledby="passkeys-heading"([^>]*)>/.exec(await (await browser.fetch('/settings/security')).text())![1]!;
      const attribute = (name: string) => new RegExp(` ${name}="([^"]*)"`).exec(section)?.[1];
      return { rpId: attribute('data-rp-id'), userId: attribute('data-user-id'), ids: attribute('data-accepted-credentials')?.split(' ').filter((id) => id !== '').sort() };
    };
    assert.deepEqual((await accepted()).ids, [], 'none yet: the device is to hold none of this account');
    const options = await (await browser.postForm('/settings/security/passkeys/options', { _csrf: csrf(browser) })).json() as { rp: { id: string }; user: { id: string } };
    const removed = await addPasskey(t, browser);
    const kept = await addPasskey(t, browser);
    assert.deepEqual(await accepted(), { rpId: options.rp.id, userId: options.user.id, ids: [removed.credentialId, kept.credentialId].sort() });
    assert.equal((await security(browser, { action: 'passkey-remove', credential_id: removed.credentialId })).status, 303);
    assert.deepEqual(await accepted(), { rpId: options.rp.id, userId: options.user.id, ids: [kept.credentialId] }, 'the removed one is left out');
    const other = await signedIn();
    assert.notEqual((await (await other.browser.postForm('/settings/security/passkeys/options', { _csrf: csrf(other.browser) })).json() as typeof options).user.id, options.user.id, "each account's handle is its own");
  });

  test("a new passkey's name the form would refuse is refused with its options, before the device makes a passkey, in the words the form shows in the page's language; the form still checks it", async () => {
    for (const language of ['zh-CN', 'zh-TW', 'en']) {
      const browser = new Browser(t, { 'user-agent': CHROME, 'accept-language': language });
      assert.equal((await browser.signIn((await newUser(t)).username)).status, 303);
      const options = (name: string) => browser.postForm('/settings/security/passkeys/options', { _csrf: csrf(browser), name });
      for (const name of ['Lap\u202etop', 'x'.repeat(61)]) {
        const refused = await options(name);
        assert.equal(refused.status, 400, `${language}: ${JSON.stringify(name)}`);
        assert.equal(refused.headers.get('cache-control'), 'no-store');
        const body = await refused.json() as Record<string, unknown>;
        assert.equal(body.error, 'invalid_request');
        assert.equal(body.field, 'name');
        assert.equal(body.challenge, undefined, 'no challenge: nothing for the device to make a passkey with');
        const page = await (await security(browser, { action: 'passkey-add', name, credential: '{}' })).text();
        const shown = /<p class="field-error" id="passkey-name-error">([^<]*)<\/p>/.exec(page)![1]!.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&');
        assert.equal(body.error_description, shown, `${language}: the words the form shows`);
      }
      for (const name of ['Laptop', '', '  ']) assert.equal((await options(name)).status, 200, `${language}: ${JSON.stringify(name)} is taken`);
    }
  });

  test('a change made is answered as made when its security-log line cannot be written: new recovery codes are shown, not lost behind an error page', async () => {
    const { user, browser } = await signedIn();
    const { secret } = await enableTotp(browser);
    const made = await whileInsertsFail(t.deps.database.db, database, 'security_events',
      () => security(browser, { action: 'recovery-codes', code: totpCode(secret, t.clock.now()) }));
    assert.equal(made.status, 200);
    const fresh = [...(await made.text()).matchAll(/<li>([a-z2-7-]{19})<\/li>/g)].map((m) => m[1]!);
    assert.equal(fresh.length, 10, 'the codes the account now holds are on the page');
    assert.equal((await signInWithCode(new Browser(t), user.username, fresh[0]!)).status, 303, 'and they sign in');
  });

  test('the authorization flow keeps working through the second step (prompt=login, max_age), and amr says pwd, then pwd, otp and mfa', async () => {
    const { user, browser } = await signedIn();
    const c = await newClient(t);
    const authorize = async (extra: Record<string, string>) => {
      const pkce = pkcePair();
      const query = authorizeQuery(c, { scope: 'openid profile:read', pkce, extra: { nonce: unique('n'), ...extra } });
      return { pkce, url: `/oauth/authorize?${query}` };
    };
    const redeem = async (location: string, pkce: { verifier: string }) => {
      const code = new URL(location).searchParams.get('code')!;
      const response = await tokenRequest(t, codeExchangeFields(c, code, pkce));
      assert.equal(response.status, 200);
      return (await response.json()) as { id_token: string; refresh_token: string };
    };
    const approve = async (b: Browser, url: string) => {
      let response = await b.fetch(url);
      if (response.status === 200) response = await b.postForm('/oauth/authorize', [...consentForm(await response.text()), ['decision', 'approve']]);
      assert.equal(response.status, 302);
      return response.headers.get('location')!;
    };

    const plain = await authorize({});
    const before = decodeJwt((await redeem(await approve(browser, plain.url), plain.pkce)).id_token);
    assert.deepEqual(before.amr, ['pwd'], 'a password sign-in');

    const { secret } = await enableTotp(browser);
    // prompt=login: sign in again, through the second step, and come back to the request.
    const forced = await authorize({ prompt: 'login' });
    const toLogin = await browser.fetch(forced.url);
    const loginUrl = new URL(toLogin.headers.get('location')!, t.baseUrl);
    assert.equal(loginUrl.pathname, '/login');
    const returnTo = loginUrl.searchParams.get('return_to')!;
    const second = await signInWithCode(browser, user.username, totpCode(secret, t.clock.now()), returnTo);
    assert.equal(second.status, 303);
    assert.equal(second.headers.get('location'), returnTo, 'the second step returns to the authorization request');
    const tokens = await redeem(await approve(browser, returnTo), forced.pkce);
    const claims = decodeJwt(tokens.id_token);
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(claims.auth_time, Math.floor(t.clock.now() / 1000));

    // A refresh keeps the sign-in's methods (OIDC Core 12.2).
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
    assert.deepEqual(decodeJwt(((await refreshed.json()) as { id_token: string }).id_token).amr, ['pwd', 'otp', 'mfa']);

    // max_age: a session older than it signs in again, through the second step too.
    t.clock.advance(120_000);
    const aged = await authorize({ max_age: '60' });
    const again = new URL((await browser.fetch(aged.url)).headers.get('location')!, t.baseUrl);
    assert.equal(again.pathname, '/login');
    const back = await signInWithCode(browser, user.username, totpCode(secret, t.clock.now()), again.searchParams.get('return_to')!);
    const agedClaims = decodeJwt((await redeem(await approve(browser, back.headers.get('location')!), aged.pkce)).id_token);
    assert.deepEqual(agedClaims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(agedClaims.auth_time, Math.floor(t.clock.now() / 1000));
  });

  test('the profile API and the id_token never expose two-step verification data', async () => {
    const { user, browser } = await signedIn();
    const { secret, codes } = await enableTotp(browser);
    const c: TestClient = await newClient(t);
    const pkce = pkcePair();
    const query = authorizeQuery(c, { scope: 'openid profile:read', pkce, extra: { nonce: 'n-1' } });
    let response = await browser.fetch(`/oauth/authorize?${query}`);
    response = await browser.postForm('/oauth/authorize', [...consentForm(await response.text()), ['decision', 'approve']]);
    const code = new URL(response.headers.get('location')!).searchParams.get('code')!;
    const tokens = await (await tokenRequest(t, codeExchangeFields(c, code, pkce))).json() as { access_token: string; id_token: string };
    const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    const profile = await me.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(profile).sort(), ['avatarUrl', 'bio', 'createdAt', 'id', 'level', 'member', 'profileUrl', 'username', 'xp'], 'seed table 2.2 and nothing else');
    const userinfo = await (await fetch(`${t.baseUrl}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).json() as Record<string, unknown>;
    const claims = decodeJwt(tokens.id_token);
    for (const [what, value] of [['profile', profile], ['userinfo', userinfo], ['id_token', claims]] as const) {
      const text = JSON.stringify(value).toLowerCase();
      for (const leak of ['totp', 'otp_', 'recovery', 'second_factor', 'two_step', 'passkey', secret.toLowerCase(), codes[0]!]) {
        assert.ok(!text.includes(leak), `${what} says nothing of ${leak}`);
      }
    }
    assert.equal(profile.id, user.id);
  });

  // ---- 4. Sessions ------------------------------------------------------------------------------

  test('sessions: each signed-in browser is listed with its device, address, sign-in time and last activity', async () => {
    const { user, browser } = await signedIn(CHROME);
    const other = namedBrowser(t, FIREFOX);
    assert.equal((await other.signIn(user.username)).status, 303);
    t.clock.advance(90_000);
    await other.fetch('/');
    const page = await (await browser.fetch('/settings/security')).text();
    const section = page.slice(page.indexOf('Where you are signed in'), page.indexOf('Security log'));
    assert.match(section, /Chrome on Linux <span class="current-session">\(this browser\)<\/span>/);
    assert.match(section, /Firefox on Windows/);
    assert.equal([...section.matchAll(/127\.0\.0\.1|::1|::ffff:127\.0\.0\.1/g)].length, 2, 'the address of each');
    const times = [...section.matchAll(/<time datetime="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(times.includes(new Date(t.clock.now()).toISOString().replace('.000Z', 'Z')), 'the last activity of the other browser, touched once a minute');
    assert.equal(user.id, (await t.deps.stores.sessions.listForUser(user.id, t.clock.now()))[0]!.userId);
  });

  test('sessions: "sign out" ends one other session, "sign out everywhere else" all but this one', async () => {
    const { user, browser } = await signedIn(CHROME);
    const [a, b] = [namedBrowser(t, FIREFOX), namedBrowser(t, FIREFOX)];
    for (const other of [a, b]) assert.equal((await other.signIn(user.username)).status, 303);
    const listed = await t.deps.stores.sessions.listForUser(user.id, t.clock.now());
    assert.equal(listed.length, 3);
    const target = listed.find((s) => s.idHash !== listed.find((x) => x.userAgent === CHROME)!.idHash)!;
    const out = await security(browser, { action: 'session-sign-out', session: target.idHash });
    assert.equal(out.status, 303);
    assert.equal([await isSignedIn(a), await isSignedIn(b)].filter(Boolean).length, 1, 'one of the others is signed out');
    assert.equal((await security(browser, { action: 'sign-out-others' })).status, 303);
    assert.equal(await isSignedIn(a) || await isSignedIn(b), false, 'everywhere else');
    assert.ok(await isSignedIn(browser), 'but here');
    const kinds = (await events(user.id)).map((e) => e.kind);
    assert.ok(kinds.includes('session.signed_out') && kinds.includes('sessions.signed_out_elsewhere'));
  });

  test("sessions: another user's session cannot be signed out from my page", async () => {
    const { browser } = await signedIn();
    const { user: victim, browser: theirs } = await signedIn();
    const [session] = await t.deps.stores.sessions.listForUser(victim.id, t.clock.now());
    const refused = await security(browser, { action: 'session-sign-out', session: session!.idHash });
    assert.equal(refused.status, 404);
    assert.ok(await isSignedIn(theirs));
  });

  // ---- 5. The security log ------------------------------------------------------------------------

  test('the security log records sign-ins, failures of existing accounts only, and security changes, and holds no secret', async () => {
    const { user, browser } = await signedIn();
    const before = await t.deps.database.db.selectFrom('security_events').select(sql<number>`count(*)`.as('n')).executeTakeFirst();
    assert.equal((await new Browser(t).signIn(`nobody${unique('x')}`, 'a guess at a password')).status, 401);
    const after = await t.deps.database.db.selectFrom('security_events').select(sql<number>`count(*)`.as('n')).executeTakeFirst();
    assert.equal(Number(after!.n), Number(before!.n), 'a failure for no account is logged nowhere');
    assert.equal((await new Browser(t).signIn(user.username, 'a wrong password')).status, 401);
    const { secret, codes } = await enableTotp(browser);
    assert.equal((await browser.postForm('/settings/tokens', { _csrf: csrf(browser), name: 'backup', scopes: 'profile:read', expires_in_days: '30', password: PASSWORD })).status, 303);
    const tokenPage = await browser.fetch('/settings/tokens');
    const token = /value="(svcp_[^"]+)"/.exec(await tokenPage.text())![1]!;
    const [created] = await t.deps.stores.personalTokens.listForUser(user.id);
    await browser.postForm('/settings/tokens/revoke', { _csrf: csrf(browser), token_id: String(created!.id), confirm: 'yes' });
    const kinds = (await events(user.id)).map((e) => e.kind);
    for (const kind of ['sign_in.succeeded', 'sign_in.failed', 'totp.enabled', 'personal_token.created', 'personal_token.revoked']) {
      assert.ok(kinds.includes(kind), kind);
    }
    const rows = JSON.stringify(await t.deps.database.db.selectFrom('security_events').selectAll().where('user_id', '=', user.id).execute());
    for (const secretValue of [PASSWORD, 'a wrong password', secret, token, ...codes, browser.cookies.get('svc_session')!]) {
      assert.ok(!rows.includes(secretValue), 'no secret in the log');
    }
    const page = await (await browser.fetch('/settings/security')).text();
    const log = page.slice(page.indexOf('Security log'));
    const shown = [...log.matchAll(/<tr role="row" data-kind="([^"]+)">/g)].map((m) => m[1]);
    assert.equal(shown[0], 'personal_token.revoked', 'newest first');
    assert.match(log, /Failed sign-in attempt wrong password/);
  });

  test('the security log is paged, 20 to a page, newest first', async () => {
    const { user, browser } = await signedIn();
    for (let i = 0; i < 25; i++) {
      t.clock.advance(1000);
      await t.deps.securityLog.record({ userId: user.id, kind: 'passkey.removed', detail: { name: `key ${i}` } });
    }
    const first = await (await browser.fetch('/settings/security')).text();
    assert.equal([...first.matchAll(/<tr role="row" data-kind=/g)].length, 20);
    assert.match(first, /“key 24”/);
    assert.match(first, /href="\/settings\/security\?page=1#log-heading" rel="next"/);
    const second = await (await browser.fetch('/settings/security?page=1')).text();
    const rows = [...second.matchAll(/<tr role="row" data-kind=/g)].length;
    assert.equal(rows, 6, 'the rest, with the sign-in');
    assert.match(second, /“key 0”/);
    assert.match(second, /rel="prev"/);
  });

  test('the janitor deletes security log events older than 90 days and keeps newer ones', async () => {
    const { user } = await signedIn();
    await t.deps.securityLog.record({ userId: user.id, kind: 'password.changed' });
    t.clock.advance(60 * 86_400_000);
    await t.deps.securityLog.record({ userId: user.id, kind: 'totp.enabled' });
    t.clock.advance(31 * 86_400_000);
    const deleted = await runJanitor(t.deps);
    assert.ok(deleted.security_events! >= 2, 'the sign-in and the password change');
    assert.deepEqual((await events(user.id)).map((e) => e.kind), ['totp.enabled']);
  });

  test('approving an app, withdrawing its access and rotating a client secret are in the security log', async () => {
    const { user, browser } = await signedIn();
    const c = await newClient(t, { ownerId: user.id });
    let response = await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair() })}`);
    response = await browser.postForm('/oauth/authorize', [...consentForm(await response.text()), ['decision', 'approve']]);
    assert.equal(response.status, 302);
    await browser.postForm('/settings/applications/revoke', { _csrf: csrf(browser), client_id: c.client.clientId });
    await browser.postForm(`/settings/developers/${c.client.clientId}/rotate-secret`, { _csrf: csrf(browser), confirm: 'yes' });
    const logged = await events(user.id);
    for (const kind of ['app.authorized', 'app.access_withdrawn', 'client_secret.rotated']) {
      const event = logged.find((e) => e.kind === kind);
      assert.equal(event?.detail.client_id, c.client.clientId, kind);
    }
    // Each once in the audit log too, written by its action with the ids the security log does not keep.
    const audited = t.audit.filter((e) => 'clientId' in e && e.clientId === c.client.clientId);
    assert.deepEqual(audited.map((e) => e.audit), ['consent.granted', 'consent.withdrawn', 'client.secret_rotated']);
  });
});

// ---- The server log ---------------------------------------------------------------------------

/** A JSON line of the server log (the app's and the audit sink's, as `startTestApp` collects them). */
type LogLine = Record<string, unknown>;

forEachDatabase('account security in the server log', (database) => {
  let t: TestApp;
  const lines: string[] = [];
  before(async () => { t = await startTestApp(database, { env: { KEYS_SECRET }, logLines: lines }); });
  after(() => t.close());

  const parsed = () => lines.map((l) => JSON.parse(l) as LogLine);
  const auditLinesOf = (userId: number) => parsed().filter((l) => typeof l.audit === 'string' && l.userId === userId);
  const csrf = (browser: Browser) => browser.cookies.get('svc_csrf')!;
  const security = (browser: Browser, fields: Record<string, string>) =>
    browser.postForm('/settings/security', { _csrf: csrf(browser), ...fields });
  const recoveryCodesIn = (page: string) => [...page.matchAll(/<li>([a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4})<\/li>/g)].map((m) => m[1]!);

  async function enableTotp(browser: Browser): Promise<string> {
    const started = await (await security(browser, { action: 'totp-start' })).text();
    const secret = /id="totp-secret">([A-Z2-7 ]+)</.exec(started)![1]!.replace(/ /g, '');
    assert.equal((await security(browser, { action: 'totp-confirm', code: totpCode(secret, t.clock.now()) })).status, 200);
    t.clock.advance(STEP);
    return secret;
  }

  test('every security event reaches the log once, as an audit event in the documented shape', async () => {
    const user = await newUser(t);
    const secrets = [PASSWORD, 'a wrong password'];
    assert.equal((await new Browser(t).signIn(user.username, 'a wrong password')).status, 401);
    const browser = namedBrowser(t, CHROME);
    assert.equal((await browser.signIn(user.username)).status, 303);
    const other = namedBrowser(t, FIREFOX);
    assert.equal((await other.signIn(user.username)).status, 303);
    const secret = await enableTotp(browser);
    const regenerated = await security(browser, { action: 'recovery-codes', code: totpCode(secret, t.clock.now()) });
    assert.equal(regenerated.status, 200);
    const codes = recoveryCodesIn(await regenerated.text());
    t.clock.advance(STEP);
    secrets.push(secret, ...codes);

    // Second steps: a wrong code then the authenticator app's; a recovery code.
    const third = new Browser(t);
    assert.equal((await third.signIn(user.username)).headers.get('location'), '/login/second-step');
    assert.equal((await third.postForm('/login/second-step', { _csrf: csrf(third), code: '000000' })).status, 401);
    assert.equal((await third.postForm('/login/second-step', { _csrf: csrf(third), code: totpCode(secret, t.clock.now()) })).status, 303);
    t.clock.advance(STEP);
    const fourth = new Browser(t);
    assert.equal((await fourth.signIn(user.username)).headers.get('location'), '/login/second-step');
    assert.equal((await fourth.postForm('/login/second-step', { _csrf: csrf(fourth), code: codes[0]! })).status, 303);

    // Sessions: the Firefox one, then every other.
    const firefox = (await t.deps.stores.sessions.listForUser(user.id, t.clock.now())).find((s) => s.userAgent === FIREFOX)!;
    assert.equal((await security(browser, { action: 'session-sign-out', session: firefox.idHash })).status, 303);
    assert.equal((await security(browser, { action: 'sign-out-others' })).status, 303);

    // A personal token, created and revoked; two-step verification off with a recovery code; a new password.
    await browser.fetch('/settings/tokens');
    assert.equal((await browser.postForm('/settings/tokens', { _csrf: csrf(browser), name: 'backup', scopes: 'profile:read', expires_in_days: '30', password: PASSWORD })).status, 303);
    const [token] = await t.deps.stores.personalTokens.listForUser(user.id);
    assert.equal((await browser.postForm('/settings/tokens/revoke', { _csrf: csrf(browser), token_id: String(token!.id), confirm: 'yes' })).status, 303);
    assert.equal((await security(browser, { action: 'totp-disable', code: codes[1]! })).status, 303);
    assert.equal((await security(browser, { action: 'change-password', current_password: PASSWORD, new_password: 'a brand new passphrase' })).status, 303);
    secrets.push('a brand new passphrase');

    // The account's log, oldest first, and the audit events of the account: one for one, in order.
    const kinds = (await t.deps.stores.securityEvents.listForUser(user.id, 0, 200)).items.map((e) => e.kind).reverse();
    assert.deepEqual(kinds, [
      'sign_in.failed', 'sign_in.succeeded', 'sign_in.succeeded', 'totp.enabled', 'recovery_codes.regenerated',
      'sign_in.failed', 'sign_in.succeeded', 'recovery_code.used', 'sign_in.succeeded',
      'session.signed_out', 'sessions.signed_out_elsewhere', 'personal_token.created', 'personal_token.revoked',
      'totp.disabled', 'password.changed',
    ]);
    const audits = auditLinesOf(user.id);
    assert.deepEqual(audits.map((l) => l.audit), [
      'sign_in.failed', 'sign_in.succeeded', 'sign_in.succeeded', 'totp.enabled', 'recovery_codes.regenerated',
      'sign_in.failed', 'sign_in.succeeded', 'recovery_code.used', 'sign_in.succeeded',
      'session.signed_out', 'sessions.signed_out_elsewhere', 'personal_token.created', 'personal_token.revoked',
      'totp.disabled', 'account.password_changed',
    ]);

    // The documented shape: `"audit": "<event>"` and `"msg": "audit"` at info, ids and categories as fields.
    for (const line of audits) {
      assert.ok(AUDIT_EVENTS.includes(line.audit as never), String(line.audit));
      assert.equal(line.msg, 'audit');
      assert.equal(line.level, 30);
      for (const [key, value] of Object.entries(line)) assert.notEqual(typeof value, 'object', `${String(line.audit)}.${key} is not an object`);
    }
    const of = (name: string) => audits.filter((l) => l.audit === name);
    const pick = (line: LogLine, ...keys: string[]) => Object.fromEntries(keys.map((k) => [k, line[k]]));
    assert.deepEqual(of('sign_in.succeeded').map((l) => l.method), ['password', 'password', 'password_totp', 'password_recovery_code']);
    assert.deepEqual(of('sign_in.failed').map((l) => l.reason), ['invalid_credentials', 'invalid_second_factor']);
    const address = of('sign_in.succeeded')[0]!.address;
    assert.ok(typeof address === 'string' && address !== '');
    for (const name of ['totp.enabled', 'recovery_codes.regenerated', 'recovery_code.used', 'session.signed_out']) {
      assert.deepEqual(of(name).map((l) => pick(l, 'userId', 'via', 'address')), [{ userId: user.id, via: 'site', address }], name);
    }
    assert.equal(of('sessions.signed_out_elsewhere')[0]!.sessionsEnded, 2, 'the Chrome session stays; the two second-step ones end');
    assert.equal(of('totp.disabled')[0]!.method, 'recovery_code');
    assert.deepEqual(pick(of('account.password_changed')[0]!, 'via', 'sessionsEnded'), { via: 'site', sessionsEnded: 0 });
    const everything = lines.join('\n');
    for (const value of secrets) assert.ok(!everything.includes(value), 'no secret in the log');
  });

  test('no line carries an object-valued audit field', async () => {
    const user = await newUser(t);
    assert.equal((await new Browser(t).signIn(user.username, 'a wrong password')).status, 401);
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).status, 303);
    await enableTotp(browser);
    assert.ok(auditLinesOf(user.id).some((l) => l.audit === 'totp.enabled'));
    for (const line of parsed()) {
      if ('audit' in line) assert.equal(typeof line.audit, 'string', JSON.stringify(line));
      assert.notEqual(line.msg, 'security event');
    }
  });
});

forEachDatabase('account security in a server log at LOG_LEVEL=warn', (database) => {
  let t: TestApp;
  const lines: string[] = [];
  before(async () => { t = await startTestApp(database, { env: { KEYS_SECRET }, logLines: lines, logLevel: 'warn' }); });
  after(() => t.close());

  test('audit lines are written at info whatever LOG_LEVEL says: security events reach a log at warn', async () => {
    const user = await newUser(t);
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).status, 303);
    const started = await (await browser.postForm('/settings/security', { _csrf: browser.cookies.get('svc_csrf')!, action: 'totp-start' })).text();
    const secret = /id="totp-secret">([A-Z2-7 ]+)</.exec(started)![1]!.replace(/ /g, '');
    const confirmed = await browser.postForm('/settings/security', { _csrf: browser.cookies.get('svc_csrf')!, action: 'totp-confirm', code: totpCode(secret, t.clock.now()) });
    assert.equal(confirmed.status, 200);
    assert.equal((await browser.postForm('/settings/security', { _csrf: browser.cookies.get('svc_csrf')!, action: 'sign-out-others' })).status, 303);
    const logged = lines.map((l) => JSON.parse(l) as LogLine);
    const mine = logged.filter((l) => l.userId === user.id);
    assert.deepEqual(mine.map((l) => [l.audit, l.level, l.msg]), [
      ['sign_in.succeeded', 30, 'audit'], ['totp.enabled', 30, 'audit'], ['sessions.signed_out_elsewhere', 30, 'audit'],
    ]);
    assert.ok(logged.every((l) => l.msg === 'audit' || (l.level as number) >= 40), 'the request log is quiet at warn');
  });
});
