/**
 * OpenID Back-Channel Logout 1.0 (INTERFACE section 5, issue 17 item 5), over real HTTP on each
 * database, with a real receiver: the logout token that arrives verifies against the JWKS with
 * jose and has every claim the specification requires; each event sends one; a receiver that is
 * down gets it after a retry; a restart loses nothing; it is given up after a day; no token is
 * ever in the logs. The worker is driven by hand (`runOnce`) and the clock by the test; one test
 * lets a listening instance deliver on its own.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type JWTPayload, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { deactivateClient } from '../../src/core/oauth/clients.js';
import { DELIVERY_LEASE_MS, DELIVERY_MAX_AGE_MS } from '../../src/core/oidc/logout/delivery.js';
import { BACKCHANNEL_LOGOUT_EVENT } from '../../src/core/oidc/logout-token.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { formFields } from '../support/browser-flow.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';
import { holdsWithin } from '../support/eventually.js';
import { LogoutReceiver } from '../support/logout-receiver.js';
import {
  Browser, PASSWORD, type TestClient, clientFields, codeExchangeFields, newClient, newUser, obtainCode, obtainTokens, pkcePair, signedInBrowser,
  startOAuthApp, tokenRequest,
} from '../oauth/helpers.js';

const MANUAL = { LOGOUT_DELIVERY_INTERVAL: '0' };

forEachDatabase('back-channel logout', (database) => {
  let t: TestApp;
  let receiver: LogoutReceiver;
  const logLines: string[] = [];
  /** Every logout token and id_token this suite saw: none may ever be in a log line. */
  const secrets: string[] = [];

  before(async () => {
    receiver = await LogoutReceiver.start();
    t = await startOAuthApp(database, { clock: new TestClock(Date.now()), env: MANUAL, logLines });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const path = () => `/backchannel/${randomBytes(6).toString('hex')}`;
  const deliver = (app: TestApp = t) => app.deps.logoutDeliveries.runOnce();

  /** An app with a back-channel logout URI of its own on the receiver. */
  async function appWithBackchannel(app: TestApp = t, options: { alg?: 'ES256' } = {}): Promise<{ c: TestClient; at: string }> {
    const at = path();
    const c = await newClient(app, { backchannelLogoutUri: receiver.url(at) });
    if (options.alg) await app.deps.database.db.updateTable('clients').set({ id_token_alg: options.alg }).where('client_id', '=', c.client.clientId).execute();
    return { c, at };
  }

  async function authorize(app: TestApp, browser: Browser, c: TestClient) {
    const tokens = await obtainTokens(app, browser, c, { scope: 'openid profile:read', extra: { nonce: 'n' } });
    secrets.push(tokens.id_token!);
    return tokens;
  }

  async function signOutAtSite(browser: Browser): Promise<void> {
    const page = await (await browser.fetch('/settings/tokens')).text();
    const response = await browser.postForm('/logout', { _csrf: formFields(page, '/logout')._csrf! });
    assert.equal(response.status, 303);
  }

  /** The logout tokens `at` received, each verified as an app verifies it (section 2.6). */
  async function verifiedTokens(at: string, c: TestClient, app: TestApp = t, issuer = app.baseUrl): Promise<Array<{ payload: JWTPayload; header: ReturnType<typeof decodeProtectedHeader> }>> {
    const jwks = createRemoteJWKSet(new URL(`${app.baseUrl}/.well-known/jwks.json`));
    const out = [];
    for (const token of receiver.tokens(at)) {
      secrets.push(token);
      const { payload, protectedHeader } = await jwtVerify(token, jwks, {
        issuer, audience: c.client.clientId, typ: 'logout+jwt', algorithms: ['RS256', 'ES256'],
        currentDate: new Date(app.clock.now()),
      });
      out.push({ payload, header: protectedHeader });
    }
    return out;
  }

  const rows = (clientId: string, app: TestApp = t) =>
    app.deps.database.db.selectFrom('logout_deliveries').selectAll().where('client_id', '=', clientId).orderBy('id').execute();

  test('signing out at the site sends every app with a live grant a logout token that verifies against the JWKS, with every required claim and typ logout+jwt', async () => {
    const a = await appWithBackchannel();
    const b = await appWithBackchannel(t, { alg: 'ES256' });
    const silent = await newClient(t);
    const { browser, user } = await signedInBrowser(t);
    const tokens = await authorize(t, browser, a.c);
    await authorize(t, browser, b.c);
    await authorize(t, browser, silent);
    const sid = decodeJwt(tokens.id_token!).sid;
    assert.equal(typeof sid, 'string');

    await signOutAtSite(browser);
    assert.equal((await rows(a.c.client.clientId)).length, 1, 'queued with the sign-out');
    assert.equal((await rows(silent.client.clientId)).length, 0, 'an app without a back-channel URI gets nothing');
    const pass = await deliver();
    assert.ok(pass.delivered >= 2, JSON.stringify(pass));

    for (const [app, alg] of [[a, 'RS256'], [b, 'ES256']] as const) {
      const request = receiver.received.find((r) => r.path === app.at)!;
      assert.equal(request.method, 'POST');
      assert.equal(request.headers['content-type'], 'application/x-www-form-urlencoded');
      const [verified, ...more] = await verifiedTokens(app.at, app.c);
      assert.equal(more.length, 0, 'one token per app');
      const { payload, header } = verified!;
      assert.equal(header.alg, alg, 'signed with the app\'s id_token algorithm');
      assert.equal(header.typ, 'logout+jwt');
      assert.equal(typeof header.kid, 'string');
      assert.deepEqual(Object.keys(payload).sort(), ['aud', 'events', 'exp', 'iat', 'iss', 'jti', 'sid', 'sub']);
      assert.equal(payload.sub, String(user.id));
      assert.equal(payload.sid, sid, 'the session that ended, as the id_token had it');
      assert.deepEqual(payload.events, { [BACKCHANNEL_LOGOUT_EVENT]: {} });
      assert.equal(payload.exp! - payload.iat!, 120);
      assert.equal(payload.nonce, undefined);
      assert.equal(typeof payload.jti, 'string');
    }
    assert.deepEqual((await rows(a.c.client.clientId)).map((r) => r.delivered_at !== null), [true]);
    assert.equal((await deliver()).claimed, 0, 'a delivered logout is not sent again');
  });

  test('signing out another session, or everywhere else, on the security page sends the app a logout token for each session ended there', async () => {
    const { c, at } = await appWithBackchannel();
    const { browser: here, user } = await signedInBrowser(t);
    const sids: string[] = [];
    const elsewhere: Browser[] = [];
    for (let i = 0; i < 3; i++) {
      const other = new Browser(t);
      assert.equal((await other.signIn(user.username)).status, 303);
      sids.push(decodeJwt((await authorize(t, other, c)).id_token!).sid as string);
      elsewhere.push(other);
    }
    const page = await (await here.fetch('/settings/security')).text();
    const oneSession = formFields(page, '/settings/security');
    const target = [...page.matchAll(/name="session" value="([^"]+)"/g)].map((m) => m[1]!);
    assert.equal(target.length, 3, 'the three other sessions are listed');
    assert.equal((await here.postForm('/settings/security', { _csrf: oneSession._csrf!, action: 'session-sign-out', session: target[0]! })).status, 303);
    assert.equal((await rows(c.client.clientId)).length, 1, 'one session ended: one logout');
    assert.equal((await here.postForm('/settings/security', { _csrf: oneSession._csrf!, action: 'sign-out-others' })).status, 303);
    assert.equal((await rows(c.client.clientId)).length, 3, 'then the two others');
    await deliver();
    const received = (await verifiedTokens(at, c)).map((v) => v.payload.sid).sort();
    assert.deepEqual(received, [...sids].sort(), 'one logout per ended session, each with its sid');
    for (const other of elsewhere) assert.doesNotMatch(await (await other.fetch('/')).text(), /Sign out/, 'signed out there');
  });

  test('a password change tells the apps signed into in the renewed session that it ended, with its sid', async () => {
    const { c, at } = await appWithBackchannel();
    const { browser, user } = await signedInBrowser(t);
    const sid = decodeJwt((await authorize(t, browser, c)).id_token!).sid as string;
    const page = await (await browser.fetch('/settings/security')).text();
    const changed = await browser.postForm('/settings/security', {
      _csrf: formFields(page, '/settings/security')._csrf!, action: 'change-password', current_password: PASSWORD, new_password: 'a brand new passphrase',
    });
    assert.equal(changed.status, 303);
    await deliver();
    const [verified, ...more] = await verifiedTokens(at, c);
    assert.equal(more.length, 0);
    assert.equal(verified?.payload.sub, String(user.id));
    assert.equal(verified?.payload.sid, sid, 'the sid the app knows');
  });

  test('withdrawing consent on the settings page sends the app a logout token for every session of the person (no sid)', async () => {
    const { c, at } = await appWithBackchannel();
    const { browser, user } = await signedInBrowser(t);
    await authorize(t, browser, c);
    const page = await (await browser.fetch('/settings/applications')).text();
    const response = await browser.postForm('/settings/applications/revoke', { _csrf: formFields(page, '/settings/applications/revoke')._csrf!, client_id: c.client.clientId });
    assert.equal(response.status, 303);
    await deliver();
    const [verified] = await verifiedTokens(at, c);
    assert.equal(verified?.payload.sub, String(user.id));
    assert.equal(verified?.payload.sid, undefined);
    assert.equal((await rows(c.client.clientId))[0]?.cause, 'consent_withdrawn');
  });

  test('the app revoking its refresh token, or presenting a rotated one again, ends that grant and sends a logout token with its sid', async () => {
    const { c, at } = await appWithBackchannel();
    const { browser } = await signedInBrowser(t);
    const first = await authorize(t, browser, c);
    const revoke = await fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: first.refresh_token, ...clientFields(c) }),
    });
    assert.equal(revoke.status, 200);
    const second = await authorize(t, browser, c);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: second.refresh_token, ...clientFields(c) });
    assert.equal(refreshed.status, 200);
    // Its successor used, the rotated token presented again is reuse, not a replay (INTERFACE section 11).
    const successor = ((await refreshed.json()) as { refresh_token: string }).refresh_token;
    assert.equal((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: successor, ...clientFields(c) })).status, 200);
    const replay = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: second.refresh_token, ...clientFields(c) });
    assert.equal(replay.status, 400);
    await deliver();
    const verified = await verifiedTokens(at, c);
    assert.deepEqual(verified.map((v) => v.payload.sid), [decodeJwt(first.id_token!).sid, decodeJwt(second.id_token!).sid]);
    assert.deepEqual((await rows(c.client.clientId)).map((r) => r.cause), ['revoked_by_client', 'refresh_reuse']);
  });

  test('presenting a code again ends every grant with the app and sends a logout token without sid', async () => {
    const { c, at } = await appWithBackchannel();
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const code = await obtainCode(browser, c, { scope: 'openid', pkce, extra: { nonce: 'n' } });
    const exchange = () => tokenRequest(t, codeExchangeFields(c, code, pkce));
    assert.equal((await exchange()).status, 200);
    assert.equal((await exchange()).status, 400);
    await deliver();
    const [verified] = await verifiedTokens(at, c);
    assert.equal(verified?.payload.sid, undefined);
    assert.deepEqual((await rows(c.client.clientId)).map((r) => r.cause), ['code_reuse']);
  });

  test('an account that becomes unusable sends every app it had authorized a logout token', async () => {
    const a = await appWithBackchannel();
    const b = await appWithBackchannel();
    const { browser, user } = await signedInBrowser(t);
    await authorize(t, browser, a.c);
    await authorize(t, browser, b.c);
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    await deliver();
    for (const app of [a, b]) {
      const [verified, ...more] = await verifiedTokens(app.at, app.c);
      assert.equal(more.length, 0);
      assert.equal(verified?.payload.sub, String(user.id));
      assert.equal(verified?.payload.sid, undefined, 'every session of the person');
    }
  });

  test('a deactivated app is sent no logout token, and what was pending for it is given up', async () => {
    const { c, at } = await appWithBackchannel();
    const { browser } = await signedInBrowser(t);
    await authorize(t, browser, c);
    await signOutAtSite(browser);
    await deactivateClient(t.deps.stores, t.deps.clock, c.client.clientId);
    assert.equal((await rows(c.client.clientId)).length, 1, 'deactivating queues nothing');
    await deliver();
    assert.deepEqual(receiver.tokens(at), []);
    const [row] = await rows(c.client.clientId);
    assert.notEqual(row?.abandoned_at, null);
    assert.match(row!.last_error!, /deactivated/);
  });

  test('a receiver that is down at first (connection refused, then 500) gets the logout token after retries, with the same jti', async () => {
    const down = await LogoutReceiver.start();
    try {
      await down.down();
      const at = path();
      const c = await newClient(t, { backchannelLogoutUri: down.url(at) });
      const { browser } = await signedInBrowser(t);
      await authorize(t, browser, c);
      await signOutAtSite(browser);

      assert.equal((await deliver()).retrying, 1, 'connection refused');
      let [row] = await rows(c.client.clientId);
      assert.match(row!.last_error!, /ECONNREFUSED/);
      assert.ok(row!.next_attempt_at > t.clock.now(), 'tried again later, not at once');
      assert.equal((await deliver()).claimed, 0, 'not before its time');

      await down.up();
      down.answer(at, { status: 500 });
      t.clock.advance(row!.next_attempt_at - t.clock.now());
      assert.equal((await deliver()).retrying, 1, 'HTTP 500');
      [row] = await rows(c.client.clientId);
      assert.equal(row!.last_error, 'answered HTTP 500');

      down.answer(at, { status: 204 });
      t.clock.advance(row!.next_attempt_at - t.clock.now());
      assert.equal((await deliver()).delivered, 1);
      const jtis = down.tokens(at).map((token) => { secrets.push(token); return decodeJwt(token).jti; });
      assert.equal(jtis.length, 2, 'the 500 attempt and the one that succeeded');
      assert.equal(new Set(jtis).size, 1, 'one logout, one jti');
      [row] = await rows(c.client.clientId);
      assert.deepEqual([row!.attempts, row!.delivered_at !== null], [3, true]);
    } finally {
      await down.close();
    }
  });

  test('a restart loses nothing: logouts queued or claimed by one instance are delivered by the next on the same database', async () => {
    const clock = new TestClock(Date.now());
    const first = await startTestApp(database, { clock, env: MANUAL });
    const { c, at } = await appWithBackchannel(first);
    receiver.answer(at, { status: 503 });
    const user = await newUser(first);
    const browser = new Browser(first);
    assert.equal((await browser.signIn(user.username)).status, 303);
    await authorize(first, browser, c);
    await signOutAtSite(browser);
    assert.equal((await deliver(first)).retrying, 1, 'tried once, failed');
    // A second logout, claimed by this instance as if it were sending it when it died.
    await setAccountStatus(first.deps.stores, first.deps.clock, user.id, 'suspended');
    const claimed = await first.deps.stores.logoutDeliveries.claim('dying', clock.now(), clock.now() + DELIVERY_LEASE_MS, 50);
    assert.ok(claimed.some((d) => d.clientId === c.client.clientId && d.cause === 'account_unusable'));
    await first.close();

    receiver.answer(at, { status: 200 });
    // Behind one address, as instances are: the same BASE_URL, so the same issuer.
    const second = await startTestApp(database, { clock, env: { ...MANUAL, BASE_URL: first.baseUrl } });
    try {
      // Past the failed attempt's back-off (at most FIRST_RETRY_MS), well inside the lease.
      clock.advance(10_000);
      await deliver(second);
      assert.equal(receiver.tokens(at).filter((token) => decodeJwt(token).sid !== undefined).length, 2, 'the failed one, tried again by the new instance');
      const leased = (await rows(c.client.clientId, second)).find((r) => r.cause === 'account_unusable')!;
      assert.equal(leased.delivered_at, null, 'the claimed one waits for its lease to run out');
      clock.advance(DELIVERY_LEASE_MS);
      await deliver(second);
      const all = await rows(c.client.clientId, second);
      assert.deepEqual(all.map((r) => [r.cause, r.delivered_at !== null]), [['signed_out', true], ['account_unusable', true]]);
      const verified = await verifiedTokens(at, c, second, first.baseUrl);
      assert.deepEqual(verified.map((v) => v.payload.sid === undefined), [false, false, true]);
    } finally {
      await second.close();
    }
  });

  test('a logout not delivered within 24 hours is given up and logged, and the log names the app, not the token', async () => {
    const { c, at } = await appWithBackchannel();
    receiver.answer(at, { status: 500 });
    const { browser } = await signedInBrowser(t);
    await authorize(t, browser, c);
    await signOutAtSite(browser);
    const started = t.clock.now();
    let attempts = 0;
    for (;;) {
      await deliver();
      attempts += 1;
      const [row] = await rows(c.client.clientId);
      if (row!.abandoned_at !== null) break;
      assert.ok(attempts < 100, 'it gives up');
      t.clock.advance(row!.next_attempt_at - t.clock.now());
    }
    const [row] = await rows(c.client.clientId);
    assert.ok(row!.abandoned_at! - started <= DELIVERY_MAX_AGE_MS, 'not tried past a day');
    assert.ok(row!.abandoned_at! - started > DELIVERY_MAX_AGE_MS - 3600 * 1000, 'tried for most of a day, at most an hour apart at the end');
    assert.equal(row!.attempts, attempts);
    assert.ok(attempts > 10 && attempts < 60, `${attempts} attempts: backing off, not hammering`);
    const given = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.msg === 'back-channel logout given up' && line.client_id === c.client.clientId);
    assert.ok(given, 'logged');
    assert.equal(given.jti, row!.jti);
    receiver.tokens(at).forEach((token) => secrets.push(token));
  });

  test('with BACKCHANNEL_ALLOW_PRIVATE=0 no logout token goes to a private address: the attempt fails as refused', async () => {
    const app = await startTestApp(database, { clock: new TestClock(Date.now()), env: { ...MANUAL, BACKCHANNEL_ALLOW_PRIVATE: '0' } });
    try {
      const { c, at } = await appWithBackchannel(app);
      const user = await newUser(app);
      const browser = new Browser(app);
      await browser.signIn(user.username);
      await authorize(app, browser, c);
      await signOutAtSite(browser);
      assert.equal((await deliver(app)).retrying, 1);
      assert.deepEqual(receiver.received.filter((r) => r.path === at), [], 'nothing reached the address');
      const [row] = await rows(c.client.clientId, app);
      assert.match(row!.last_error!, /^refused: 127\.0\.0\.1, which is not a public address/);
    } finally {
      await app.close();
    }
  });

  test('a listening instance delivers by itself, without being asked', async () => {
    const app = await startTestApp(database, { clock: new TestClock(Date.now()), env: { LOGOUT_DELIVERY_INTERVAL: '1' } });
    try {
      const { c, at } = await appWithBackchannel(app);
      const user = await newUser(app);
      const browser = new Browser(app);
      await browser.signIn(user.username);
      await authorize(app, browser, c);
      await signOutAtSite(browser);
      assert.ok(await holdsWithin(15_000, async () => receiver.tokens(at).length === 1), 'delivered by the instance\'s own worker');
      receiver.tokens(at).forEach((token) => secrets.push(token));
    } finally {
      await app.close();
    }
  });

  test('logout tokens are never written to the logs', async () => {
    assert.ok(logLines.some((line) => line.includes('back-channel logout delivered')), 'deliveries are logged');
    assert.ok(logLines.some((line) => line.includes('back-channel logout failed; will retry')), 'failures are logged');
    assert.ok(secrets.length > 10, `${secrets.length} tokens seen`);
    for (const secret of secrets) {
      const signature = secret.split('.')[2]!;
      assert.ok(!logLines.some((line) => line.includes(signature)), 'no token in any log line');
    }
  });
});
