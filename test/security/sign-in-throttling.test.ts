/**
 * Sign-in throttling (INTERFACE section 4; RFC 6819 4.4.3.6; OWASP "device cookies"), over real
 * HTTP with the real limiter: successes never count, failures count per account and per address,
 * and a browser that signed into an account before keeps its own attempts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import {
  SIGN_IN_FAILURES_PER_ACCOUNT, SIGN_IN_FAILURES_PER_ADDRESS, SIGN_IN_FAILURES_PER_DEVICE, SIGN_IN_WINDOW_SECONDS,
} from '../../src/core/accounts/sign-in.js';
import { Browser, PASSWORD, hiddenFields, newUser } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { PASSWORD as MEMBER_PASSWORD, person } from '../staff/support.js';

forEachDatabase('sign-in throttling', (database) => {
  let t: TestApp;
  // One proxy in front (INTERFACE section 8): X-Forwarded-For names the address a test speaks from.
  // Sign-ups limited to 40 an hour here, so the test of that limit shows the default's case (40
  // people behind one address) and its refusal without 50 password hashes.
  before(async () => { t = await startTestApp(database, { env: { TRUST_PROXY: '1', SIGN_UPS_PER_HOUR: '40' } }); });
  after(() => t.close());

  /** A browser behind its own address, as seen through the proxy. */
  const addressed = (address: string) => new Browser(t, { 'x-forwarded-for': address });

  let addresses = 0;
  const freshAddress = () => `198.51.100.${++addresses}`;

  async function failTimes(n: number, username: string, browser: () => Browser): Promise<void> {
    for (let i = 0; i < n; i++) {
      const response = await browser().signIn(username, `wrong password ${i}`);
      assert.equal(response.status, 401, `failure ${i + 1} is an ordinary failure`);
    }
  }

  test('successful sign-ins never count: 40 people behind one address sign in, some of them twice', async () => {
    const address = freshAddress();
    const users = await Promise.all(Array.from({ length: 40 }, () => newUser(t)));
    for (const [i, user] of users.entries()) {
      const first = await addressed(address).signIn(user.username);
      assert.equal(first.status, 303, `person ${i + 1} signs in`);
      if (i % 4 === 0) assert.equal((await addressed(address).signIn(user.username)).status, 303);
    }
  });

  test('past 10 failures on an account, a browser without a device cookie for it is refused with 429 and Retry-After, the right password included', async () => {
    const user = await newUser(t);
    await failTimes(SIGN_IN_FAILURES_PER_ACCOUNT, user.username, () => addressed(freshAddress()));
    const refused = await addressed(freshAddress()).signIn(user.username, PASSWORD);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('location'), null, 'not signed in');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= SIGN_IN_WINDOW_SECONDS, `Retry-After is the seconds until the window frees (${retryAfter})`);
    assert.match(await refused.text(), /Try again in \d+ (minutes?|seconds)/, 'the page says how long');
  });

  test('the window passing frees the account', async () => {
    const user = await newUser(t);
    await failTimes(SIGN_IN_FAILURES_PER_ACCOUNT, user.username, () => addressed(freshAddress()));
    assert.equal((await addressed(freshAddress()).signIn(user.username)).status, 429);
    t.clock.advance(SIGN_IN_WINDOW_SECONDS * 1000);
    assert.equal((await addressed(freshAddress()).signIn(user.username)).status, 303);
  });

  test('a browser that signed into the account before keeps its own attempts while the account is locked for everyone else', async () => {
    const user = await newUser(t);
    const owner = addressed(freshAddress());
    assert.equal((await owner.signIn(user.username)).status, 303);
    assert.equal((await owner.postForm('/logout', { _csrf: owner.cookies.get('svc_csrf')! })).status, 303);
    const attacker = addressed(freshAddress());
    await failTimes(SIGN_IN_FAILURES_PER_ACCOUNT, user.username, () => attacker);
    assert.equal((await attacker.signIn(user.username, PASSWORD)).status, 429, 'locked for browsers without a device cookie');
    // The owner mistypes a few times and still gets in: their failures are counted on their own cookie.
    await failTimes(3, user.username, () => owner);
    assert.equal((await owner.signIn(user.username)).status, 303, 'the owner signs in');
  });

  /** Signs up through the form, as a newcomer's browser does. */
  async function signUp(browser: Browser, username: string): Promise<Response> {
    const csrf = hiddenFields(await (await browser.fetch('/signup')).text()).find(([n]) => n === '_csrf')![1];
    return browser.postForm('/signup', { username, password: PASSWORD, _csrf: csrf });
  }

  test('a browser that just signed up keeps its own attempts while the account is locked for everyone else', async () => {
    const username = `fresh${addresses}x${Date.now() % 100000}`;
    const owner = addressed(freshAddress());
    assert.equal((await signUp(owner, username)).status, 303);
    await failTimes(SIGN_IN_FAILURES_PER_ACCOUNT, username, () => addressed(freshAddress()));
    assert.equal((await addressed(freshAddress()).signIn(username)).status, 429, 'locked for others');
    assert.equal((await owner.postForm('/logout', { _csrf: owner.cookies.get('svc_csrf')! })).status, 303);
    assert.equal((await owner.signIn(username)).status, 303, 'the browser that created the account signs in');
  });

  test('an address may create SIGN_UPS_PER_HOUR accounts an hour (40 people behind one address all sign up), and past it is refused with 429, Retry-After and how long', async () => {
    const limit = t.deps.settings.signUpsPerHour;
    const address = freshAddress();
    for (let i = 0; i < limit; i++) {
      const response = await signUp(addressed(address), `crowd${addresses}n${i}x${Date.now() % 100000}`);
      assert.equal(response.status, 303, `person ${i + 1} signs up`);
    }
    const refused = await signUp(addressed(address), `crowd${addresses}late${Date.now() % 100000}`);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.match(await refused.text(), /Try again in \d+ (minutes?|seconds)/);
    assert.equal((await signUp(addressed(freshAddress()), `crowd${addresses}other${Date.now() % 100000}`)).status, 303, 'another address is not held back');
  });

  test('a browser with a device cookie is itself refused after 10 failures', async () => {
    const user = await newUser(t);
    const browser = addressed(freshAddress());
    assert.equal((await browser.signIn(user.username)).status, 303);
    await failTimes(SIGN_IN_FAILURES_PER_DEVICE, user.username, () => browser);
    assert.equal((await browser.signIn(user.username)).status, 429);
  });

  test('a device cookie counts only for the account it was issued for, and a forged one counts for none', async () => {
    const [mine, victim] = [await newUser(t), await newUser(t)];
    const attacker = addressed(freshAddress());
    assert.equal((await attacker.signIn(mine.username)).status, 303, 'the attacker signs into their own account');
    await failTimes(SIGN_IN_FAILURES_PER_ACCOUNT, victim.username, () => attacker);
    assert.equal((await attacker.signIn(victim.username, 'one more guess')).status, 429, 'their cookie gives no attempts on another account');
    const forger = addressed(freshAddress());
    forger.cookies.set('svc_device', `${victim.username.toLowerCase()}.${'A'.repeat(22)}.${'B'.repeat(43)}`);
    assert.equal((await forger.signIn(victim.username, PASSWORD)).status, 429, 'an unsigned cookie is no device cookie');
  });

  test('past 100 failures from one address, whatever the accounts, that address is refused', async () => {
    const address = freshAddress();
    const user = await newUser(t);
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ADDRESS; i++) {
      const response = await addressed(address).signIn(`nobody-${i}`, 'a wrong password');
      assert.equal(response.status, 401);
    }
    const refused = await addressed(address).signIn(user.username, PASSWORD);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal((await addressed(freshAddress()).signIn(user.username)).status, 303, 'another address is not affected');
  });

  test('the addresses of one IPv6 /64 count as one address', async () => {
    const user = await newUser(t);
    const prefix = `2001:db8:${(++addresses).toString(16)}:7`;
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ADDRESS; i++) {
      const response = await addressed(`${prefix}::${(i + 1).toString(16)}`).signIn(`nobody-v6-${i}`, 'a wrong password');
      assert.equal(response.status, 401);
    }
    assert.equal((await addressed(`${prefix}:ffff:ffff:ffff:ffff`).signIn(user.username)).status, 429);
    assert.equal((await addressed(`2001:db8:${addresses.toString(16)}:8::1`).signIn(user.username)).status, 303, 'the next /64 is another address');
  });

  test('a right password never counts toward the lock-out, an account\'s that is not active neither, with two-step verification or without', async () => {
    let sent = 0;
    // Addresses of their own, one an attempt: only the account's counter is at stake here.
    const elsewhere = () => addressed(`203.0.113.${++sent}`);
    const plain = await newUser(t);
    const { user: twoStep } = await person(t, 'member', { twoStep: true });
    // Told the status at once; with two-step verification on, sent to the second step, as an active account's is.
    for (const [user, password, answer] of [[plain, PASSWORD, 401], [twoStep, MEMBER_PASSWORD, 303]] as const) {
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
      for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT + 2; i++) {
        assert.equal((await elsewhere().signIn(user.username, password)).status, answer, `${user.username}: right password ${i + 1}`);
      }
      await failTimes(SIGN_IN_FAILURES_PER_ACCOUNT, user.username, elsewhere);
      assert.equal((await elsewhere().signIn(user.username, password)).status, 429, `${user.username}: the wrong ones counted`);
    }
  });

  test('the password re-check before a personal token is throttled as sign-in is, and its successes do not count', async () => {
    const user = await newUser(t);
    const browser = addressed(freshAddress());
    assert.equal((await browser.signIn(user.username)).status, 303);
    const create = async (password: string) => {
      const csrf = hiddenFields(await (await browser.fetch('/settings/tokens')).text()).find(([n]) => n === '_csrf')![1];
      return browser.postForm('/settings/tokens', [['_csrf', csrf], ['name', 'ci'], ['scopes', 'profile:read'], ['expires_in_days', '7'], ['password', password]]);
    };
    for (let i = 0; i < 12; i++) assert.equal((await create(PASSWORD)).status, 303, 'a right password never counts');
    for (let i = 0; i < SIGN_IN_FAILURES_PER_DEVICE; i++) assert.equal((await create('not my password')).status, 400);
    const refused = await create(PASSWORD);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.match(await refused.text(), /Try again in/);
  });
});
