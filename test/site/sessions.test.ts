/** Sign-in sessions (INTERFACE section 8 and 10): renewal of the CSRF token, idle and absolute ends. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SESSION_IDLE_MS, SESSION_LIFETIME_MS } from '../../src/core/accounts/sessions.js';
import { Browser, newUser } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase, whileWritesFail } from '../support/databases.js';

const HOUR = 3600_000;

forEachDatabase('sign-in sessions', (database) => {
  let t: TestApp;
  const logLines: string[] = [];
  before(async () => { t = await startTestApp(database, { logLines, logLevel: 'warn' }); });
  after(() => t.close());

  const signedIn = async (browser: Browser) => /Sign out/.test(await (await browser.fetch('/')).text());

  test('signing in renews the CSRF token: a token known before the sign-in is refused after it', async () => {
    const user = await newUser(t);
    const browser = new Browser(t);
    await browser.fetch('/login');
    const before = browser.cookies.get('svc_csrf')!;
    assert.equal((await browser.signIn(user.username)).status, 303);
    const renewed = browser.cookies.get('svc_csrf')!;
    assert.notEqual(renewed, before);
    // A form carrying the token someone learned before the sign-in no longer passes.
    assert.equal((await browser.postForm('/logout', { _csrf: before })).status, 403);
    assert.ok(await signedIn(browser), 'and it did not sign the browser out');
    assert.equal((await browser.postForm('/logout', { _csrf: renewed })).status, 303);
  });

  test('a session ends after 7 days without a request', async () => {
    const browser = new Browser(t);
    assert.equal((await browser.signIn((await newUser(t)).username)).status, 303);
    t.clock.advance(SESSION_IDLE_MS - HOUR);
    assert.ok(await signedIn(browser), 'still signed in just before 7 idle days');
    t.clock.advance(SESSION_IDLE_MS);
    assert.equal(await signedIn(browser), false, 'signed out after 7 idle days');
  });

  test('a request a day keeps a session alive, but never past 14 days from its sign-in', async () => {
    const browser = new Browser(t);
    assert.equal((await browser.signIn((await newUser(t)).username)).status, 303);
    for (let day = 1; day < 14; day++) {
      t.clock.advance(24 * HOUR);
      assert.ok(await signedIn(browser), `day ${day}`);
    }
    t.clock.advance(SESSION_LIFETIME_MS - 13 * 24 * HOUR);
    assert.equal(await signedIn(browser), false, 'signed out at 14 days');
  });

  test('a page whose session activity cannot be written is served all the same, the failure logged as a warning, and the next request writes it', async () => {
    const user = await newUser(t);
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).status, 303);
    t.clock.advance(HOUR);
    const from = logLines.length;
    const page = await whileWritesFail(t.deps.database.db, database, 'sessions', 'update', () => browser.fetch('/settings/security'));
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Sign out/);
    const logged = logLines.slice(from).map((line) => JSON.parse(line) as { level: number; msg: string });
    assert.deepEqual(logged.map(({ level, msg }) => [level, msg]), [[40, 'could not record session activity']]);
    const lastSeen = async () => (await t.deps.stores.sessions.listForUser(user.id, t.clock.now()))[0]?.lastSeenAt;
    assert.notEqual(await lastSeen(), t.clock.now(), 'not written');
    assert.equal((await browser.fetch('/settings/security')).status, 200);
    assert.equal(await lastSeen(), t.clock.now(), 'the next request writes it');
  });
});
