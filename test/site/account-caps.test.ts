/**
 * The caps on what one account may add (docs/site.md, "What one account may hold"): passkeys,
 * live personal tokens, and the active apps a member registers on the developer pages. Each is
 * counted holding the account's row in the insert's transaction, so racing adds at the cap land
 * no further than it, on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { MAX_PASSKEYS } from '../../src/core/accounts/passkeys.js';
import type { User } from '../../src/core/accounts/ports.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { MAX_PERSONAL_TOKENS, PERSONAL_TOKENS_PER_DAY } from '../../src/core/credentials/personal-tokens.js';
import { APP_REGISTRATIONS_PER_DAY, MAX_APPS_PER_OWNER, registerClient } from '../../src/core/oauth/clients.js';
import type { Client } from '../../src/core/oauth/ports.js';
import { days } from '../../src/core/time.js';
import { runJanitor } from '../../src/janitor.js';
import { type Person, person } from '../staff/support.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { SoftwarePasskey, addPasskey } from '../support/passkey.js';
import { Browser, PASSWORD, newUser } from '../oauth/helpers.js';

const csrf = (browser: Browser) => browser.cookies.get('svc_csrf')!;
/** The page's text with its markup's entities read back. */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const text = async (response: Response) => (await response.text()).replace(/&#39;|&#x27;/g, '\'').replace(/&quot;/g, '"').replace(/&amp;/g, '&');

forEachDatabase('account caps', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  async function signedIn(user?: User, headers: Record<string, string> = {}): Promise<{ user: User; browser: Browser }> {
    const member = user ?? await newUser(t);
    const browser = new Browser(t, headers);
    assert.equal((await browser.signIn(member.username)).status, 303);
    await browser.fetch('/settings/security');
    return { user: member, browser };
  }

  // ---- Seeding through the stores, to reach a cap quickly --------------------------------------

  async function seedPasskeys(user: User, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      await t.deps.stores.passkeys.insert({
        credentialId: randomBytes(16).toString('base64url'), userId: user.id, name: `seeded ${i}`,
        publicKey: randomBytes(16).toString('base64url'), counter: 0, transports: [], backedUp: false,
      }, t.clock.now());
    }
  }

  /**
   * Tokens made `createdAt` (by default two days ago, outside the day's window, so only the live
   * cap judges them), lasting until `expiresAt`, revoked when `revoked`.
   */
  async function seedTokens(user: User, count: number, options: { expiresAt?: number | null; createdAt?: number; revoked?: boolean } = {}): Promise<void> {
    const { expiresAt = t.clock.now() + days(30), createdAt = t.clock.now() - days(2), revoked = false } = options;
    for (let i = 0; i < count; i++) {
      const token = await t.deps.stores.personalTokens.insert({ userId: user.id, name: `seeded ${i}`, tokenHash: hashSecret(randomBytes(24).toString('hex')), scope: 'profile:read', expiresAt }, createdAt);
      if (revoked) assert.equal(await t.deps.stores.personalTokens.revoke(token.id, user.id, createdAt), true);
    }
  }

  /** Apps the member registered `createdAt` (by default two days ago, outside the day's window), deactivated when `deactivated`. */
  async function seedApps(user: User, count: number, options: { createdAt?: number; deactivated?: boolean } = {}): Promise<Client[]> {
    const { createdAt = t.clock.now() - days(2), deactivated = false } = options;
    const apps: Client[] = [];
    for (let i = 0; i < count; i++) {
      const app = await t.deps.stores.clients.create({
        clientId: randomBytes(16).toString('hex'), name: `Seeded ${i}`, description: '', homepageUrl: '', ownerId: user.id, type: 'public',
        redirectUris: ['https://seeded.example/cb'], allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256', memberRegistered: true,
      }, createdAt);
      apps.push(deactivated ? (await t.deps.stores.clients.setStatus(app.clientId, 'deactivated', createdAt))! : app);
    }
    return apps;
  }

  // ---- Passkeys --------------------------------------------------------------------------------

  const passkeyOptions = (browser: Browser) => browser.postForm('/settings/security/passkeys/options', { _csrf: csrf(browser), name: 'Phone' });
  const sendPasskey = (browser: Browser, credential: string) =>
    browser.postForm('/settings/security', { _csrf: csrf(browser), action: 'passkey-add', name: 'Phone', credential });

  test(`passkeys: an account has at most ${MAX_PASSKEYS}; past it the options are refused before the device's prompt (400, field passkey), and removing one makes room`, async () => {
    const { user, browser } = await signedIn();
    await seedPasskeys(user, MAX_PASSKEYS - 1);
    await addPasskey(t, browser, { name: 'The last one' });
    assert.equal((await t.deps.stores.passkeys.listForUser(user.id)).length, MAX_PASSKEYS);

    const refused = await passkeyOptions(browser);
    assert.equal(refused.status, 400);
    const body = await refused.json() as { error: string; error_description: string; field: string; challenge?: string };
    assert.equal(body.field, 'passkey', 'not the name: public/webauthn.js says it in the status line');
    assert.equal(body.challenge, undefined, 'no options, so no prompt and no passkey left on the device');
    assert.match(body.error_description, new RegExp(`You have ${MAX_PASSKEYS} passkeys, the most an account can have\\. Remove one before adding another\\.`));
    const page = await text(await browser.fetch('/settings/security'));
    assert.match(page, /the most an account can have\. Remove one before adding another\./, 'the page says so too');

    const [first] = await t.deps.stores.passkeys.listForUser(user.id);
    assert.equal((await browser.postForm('/settings/security', { _csrf: csrf(browser), action: 'passkey-remove', credential_id: first!.credentialId })).status, 303);
    assert.equal((await passkeyOptions(browser)).status, 200, 'room again');
    assert.match(await text(await browser.fetch('/settings/security')), new RegExp(`An account can have up to ${MAX_PASSKEYS} passkeys\\.`));
  });

  test('passkeys: a registration that reaches the form past the cap is refused as a form problem (400), and the browser is asked to forget the passkey its device made', async () => {
    const { user, browser } = await signedIn();
    await seedPasskeys(user, MAX_PASSKEYS - 1);
    const options = await (await passkeyOptions(browser)).json() as { challenge: string };
    // Another device of the account takes the last place while this one's prompt is open.
    await seedPasskeys(user, 1);
    const passkey = new SoftwarePasskey(t.baseUrl);
    const refused = await sendPasskey(browser, passkey.register(options));
    assert.equal(refused.status, 400);
    const page = await text(refused);
    assert.match(page, /Remove one before adding another\./);
    assert.match(page, new RegExp(`data-unknown-credential="${passkey.credentialId}"`), 'signalUnknownCredential: no orphan passkey stays offered');
    assert.equal((await t.deps.stores.passkeys.listForUser(user.id)).length, MAX_PASSKEYS);
    assert.equal(await t.deps.stores.passkeys.find(passkey.credentialId), undefined);
  });

  test('passkeys: registrations racing for the last places land no further than the cap', async () => {
    const { user, browser } = await signedIn();
    await seedPasskeys(user, MAX_PASSKEYS - 2);
    const ceremonies = [];
    for (let i = 0; i < 5; i++) {
      const options = await (await passkeyOptions(browser)).json() as { challenge: string };
      ceremonies.push(new SoftwarePasskey(t.baseUrl).register(options));
    }
    const statuses = (await Promise.all(ceremonies.map((credential) => sendPasskey(browser, credential)))).map((r) => r.status).sort();
    assert.deepEqual(statuses, [303, 303, 400, 400, 400]);
    assert.equal((await t.deps.stores.passkeys.listForUser(user.id)).length, MAX_PASSKEYS);
  });

  // ---- Personal tokens -------------------------------------------------------------------------

  const tokenForm = (browser: Browser, password = PASSWORD) =>
    browser.postForm('/settings/tokens', { _csrf: csrf(browser), name: 'script', scopes: 'profile:read', expires_in_days: '30', password });
  const liveTokens = async (user: User) => (await t.deps.stores.personalTokens.listForUser(user.id)).filter((k) => k.revokedAt === null && (k.expiresAt === null || k.expiresAt > t.clock.now()));

  test(`personal tokens: an account holds at most ${MAX_PERSONAL_TOKENS} live ones; revoked and expired ones do not count; past the cap the form says so (400) before it tries the password`, async () => {
    const { user, browser } = await signedIn();
    await seedTokens(user, 3, { expiresAt: t.clock.now() - 1 });
    await seedTokens(user, MAX_PERSONAL_TOKENS - 1);
    assert.equal((await tokenForm(browser)).status, 303, 'expired ones leave room');
    assert.equal((await liveTokens(user)).length, MAX_PERSONAL_TOKENS);

    const refused = await tokenForm(browser, 'not my password');
    assert.equal(refused.status, 400);
    const page = await text(refused);
    assert.match(page, new RegExp(`You have ${MAX_PERSONAL_TOKENS} live tokens, the most an account can have\\. Revoke one before creating another\\.`));
    assert.doesNotMatch(page, /password is not right/, 'a form that cannot make a token costs no password attempt');

    const [oldest] = await liveTokens(user);
    assert.equal((await browser.postForm('/settings/tokens/revoke', { _csrf: csrf(browser), token_id: String(oldest!.id), confirm: 'yes' })).status, 303);
    assert.equal((await tokenForm(browser)).status, 303, 'a revoked one leaves room');
    assert.equal((await tokenForm(browser)).status, 400);
    assert.equal((await liveTokens(user)).length, MAX_PERSONAL_TOKENS);
  });

  test('personal tokens: creations racing for the last places land no further than the cap', async () => {
    const user = await newUser(t);
    await seedTokens(user, MAX_PERSONAL_TOKENS - 2);
    const browsers = await Promise.all([1, 2, 3, 4, 5].map(async () => (await signedIn(user)).browser));
    const statuses = (await Promise.all(browsers.map((b) => tokenForm(b)))).map((r) => r.status).sort();
    assert.deepEqual(statuses, [303, 303, 400, 400, 400]);
    assert.equal((await liveTokens(user)).length, MAX_PERSONAL_TOKENS);
  });

  const createdToday = async (user: User) => (await t.deps.stores.personalTokens.listForUser(user.id)).filter((k) => k.createdAt > t.clock.now() - days(1)).length;

  test(`personal tokens: an account creates at most ${PERSONAL_TOKENS_PER_DAY} in any 24 hours, revoked ones included; past it the form says how long to wait (400) before it tries the password, and the janitor keeps every row it counts`, async () => {
    const { user, browser } = await signedIn();
    // All revoked, so none is live: one made 23 hours and 58 minutes ago, the rest an hour ago.
    await seedTokens(user, 1, { createdAt: t.clock.now() - days(1) + 2 * MINUTE, revoked: true });
    await seedTokens(user, PERSONAL_TOKENS_PER_DAY - 1, { createdAt: t.clock.now() - HOUR, revoked: true });
    assert.equal((await liveTokens(user)).length, 0);

    const refused = await tokenForm(browser, 'not my password');
    assert.equal(refused.status, 400);
    const page = await text(refused);
    assert.match(page, new RegExp(`You have created ${PERSONAL_TOKENS_PER_DAY} tokens in the last 24 hours, the most an account can create in a day\\. Try again in 2 minutes\\.`));
    assert.doesNotMatch(page, /password is not right/, 'a form that cannot make a token costs no password attempt');
    assert.doesNotMatch(page, /Revoke one before creating another/, 'revoking makes no room in the day');

    // Revoked rows are deleted only past the audit window, so none the day counts is gone.
    await runJanitor(t.deps);
    assert.equal((await tokenForm(browser)).status, 400, 'still counted after the janitor');
    t.clock.advance(2 * MINUTE - 1);
    assert.match(await text(await tokenForm(browser)), /Try again in 1 second\./, 'not before the oldest leaves the day');
    t.clock.advance(1);
    assert.equal((await tokenForm(browser)).status, 303, 'the oldest left the day: one more');
    assert.equal((await tokenForm(browser)).status, 400, 'and only one');
    assert.equal(await createdToday(user), PERSONAL_TOKENS_PER_DAY);
  });

  test('personal tokens: creations racing for the day\'s last places land no further than its limit', async () => {
    const user = await newUser(t);
    await seedTokens(user, PERSONAL_TOKENS_PER_DAY - 2, { createdAt: t.clock.now() - HOUR, revoked: true });
    const browsers = await Promise.all([1, 2, 3, 4, 5].map(async () => (await signedIn(user)).browser));
    const statuses = (await Promise.all(browsers.map((b) => tokenForm(b)))).map((r) => r.status).sort();
    assert.deepEqual(statuses, [303, 303, 400, 400, 400]);
    assert.equal(await createdToday(user), PERSONAL_TOKENS_PER_DAY);
  });

  // ---- Apps a member registers -----------------------------------------------------------------

  const registerForm = (browser: Browser, name = 'My app') => browser.postForm('/settings/developers', {
    _csrf: csrf(browser), name, description: '', homepage: '', redirect_uris: 'https://mine.example/cb', type: 'confidential',
  });
  const activeApps = async (user: User) => (await t.deps.stores.clients.listByOwner(user.id)).filter((c) => c.status === 'active');

  test(`apps: a member registers at most ${MAX_APPS_PER_OWNER} active apps on the developer pages; deactivated ones do not count; past the cap the form says so (400)`, async () => {
    const { user, browser } = await signedIn();
    await seedApps(user, MAX_APPS_PER_OWNER);
    const [first] = await activeApps(user);
    assert.equal((await browser.postForm(`/settings/developers/${first!.clientId}/deactivate`, { _csrf: csrf(browser), confirm: 'yes' })).status, 303);
    assert.equal((await registerForm(browser)).status, 303, 'a deactivated one leaves room');
    assert.equal((await activeApps(user)).length, MAX_APPS_PER_OWNER);

    const refused = await registerForm(browser, 'One too many');
    assert.equal(refused.status, 400);
    const page = await text(refused);
    assert.match(page, new RegExp(`You have ${MAX_APPS_PER_OWNER} active applications, the most one account can register\\. Deactivate one you no longer use before registering another\\.`));
    assert.match(page, /value="One too many"/, 'the form keeps what was typed');
    assert.equal((await activeApps(user)).length, MAX_APPS_PER_OWNER);
  });

  test('apps: the cap is on apps a member registers; the operator\'s and those that register themselves are not counted against it', async () => {
    const { user, browser } = await signedIn();
    await seedApps(user, MAX_APPS_PER_OWNER);
    // `svc client create --owner`: the operator answers for it.
    await registerClient(t.deps.stores, t.deps.clock, { name: 'Operator\'s', type: 'public', redirectUris: ['https://operator.example/cb'], ownerId: user.id });
    // RFC 7591: no owner at all.
    await registerClient(t.deps.stores, t.deps.clock, { name: 'Itself', type: 'public', redirectUris: ['https://itself.example/cb'], selfRegistered: true });
    assert.equal((await activeApps(user)).length, MAX_APPS_PER_OWNER + 1);
    assert.equal((await registerForm(browser)).status, 400, 'the member still cannot add one');
  });

  test('apps: registrations racing for the last places land no further than the cap', async () => {
    const { user, browser } = await signedIn();
    await seedApps(user, MAX_APPS_PER_OWNER - 2);
    const statuses = (await Promise.all([1, 2, 3, 4, 5].map((i) => registerForm(browser, `Racer ${i}`)))).map((r) => r.status).sort();
    assert.deepEqual(statuses, [303, 303, 400, 400, 400]);
    assert.equal((await activeApps(user)).length, MAX_APPS_PER_OWNER);
  });

  const registeredToday = async (user: User) => (await t.deps.stores.clients.listByOwner(user.id)).filter((c) => c.memberRegistered && c.createdAt > t.clock.now() - days(1)).length;

  test(`apps: a member registers at most ${APP_REGISTRATIONS_PER_DAY} in any 24 hours, deactivated ones included; past it the form says how long to wait (400); the operator's are not counted`, async () => {
    const { user, browser } = await signedIn();
    // All deactivated, so none is active: one registered 23 hours and 55 minutes ago, the rest an hour ago.
    await seedApps(user, 1, { createdAt: t.clock.now() - days(1) + 5 * MINUTE, deactivated: true });
    await seedApps(user, APP_REGISTRATIONS_PER_DAY - 2, { createdAt: t.clock.now() - HOUR, deactivated: true });
    assert.equal((await registerForm(browser)).status, 303, 'the day\'s last place');

    const refused = await registerForm(browser, 'One too many');
    assert.equal(refused.status, 400);
    const page = await text(refused);
    assert.match(page, new RegExp(`You have registered ${APP_REGISTRATIONS_PER_DAY} applications in the last 24 hours, the most one account can register in a day\\. Try again in 5 minutes\\.`));
    assert.match(page, /value="One too many"/, 'the form keeps what was typed');
    // `svc client create --owner`: the operator answers for it, and it takes no place of the member's day.
    await registerClient(t.deps.stores, t.deps.clock, { name: 'Operator\'s', type: 'public', redirectUris: ['https://operator.example/cb'], ownerId: user.id });
    assert.equal(await registeredToday(user), APP_REGISTRATIONS_PER_DAY);

    t.clock.advance(5 * MINUTE);
    assert.equal((await registerForm(browser)).status, 303, 'the oldest left the day: one more');
    assert.equal((await registerForm(browser)).status, 400, 'and only one');
  });

  test('apps: registrations racing for the day\'s last places land no further than its limit', async () => {
    const { user, browser } = await signedIn();
    await seedApps(user, APP_REGISTRATIONS_PER_DAY - 2, { createdAt: t.clock.now() - HOUR, deactivated: true });
    const statuses = (await Promise.all([1, 2, 3, 4, 5].map((i) => registerForm(browser, `Racer ${i}`)))).map((r) => r.status).sort();
    assert.deepEqual(statuses, [303, 303, 400, 400, 400]);
    assert.equal(await registeredToday(user), APP_REGISTRATIONS_PER_DAY);
  });

  // ---- Staff reactivating a member's app -------------------------------------------------------

  const REASON = 'the owner asked for it back';
  const appStatus = (staff: Awaited<ReturnType<typeof person>>, client: Client, fields: Record<string, string>) =>
    staff.visitor.post(`/admin/apps/${client.clientId}/status`, fields);

  test(`apps: staff reactivate a member's app only while its owner has fewer than ${MAX_APPS_PER_OWNER} active ones: refused with 409 before a reason is asked, saying so and what makes room; the operator's app is not held to it`, async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const owner = await newUser(t);
    const active = await seedApps(owner, MAX_APPS_PER_OWNER);
    const [asleep] = await seedApps(owner, 1, { deactivated: true });

    const early = await appStatus(moderator, asleep!, { status: 'active' });
    assert.equal(early.status, 409);
    const said = early.text.replace(/&#39;|&#x27;/g, '\'');
    assert.match(said, new RegExp(`${owner.username} already has ${MAX_APPS_PER_OWNER} active apps, the most one account can register, so .{0,2}Seeded 0.{0,2} cannot be made active again\\. Ask them to deactivate one they no longer use, or deactivate one of theirs here, then reactivate this one\\.`));
    assert.doesNotMatch(early.text, /name="reason"/, 'no reason asked for a change that cannot be made');
    const confirmed = await appStatus(moderator, asleep!, { status: 'active', reason: REASON, confirm: 'yes' });
    assert.equal(confirmed.status, 409);
    assert.equal((await t.deps.stores.clients.findById(asleep!.clientId))?.status, 'deactivated');
    assert.deepEqual(await t.deps.stores.staffLog.list({ limit: 5, target: { kind: 'app', id: asleep!.clientId } }), [], 'nothing done, nothing logged');

    assert.equal((await appStatus(moderator, active[0]!, { status: 'deactivated', reason: REASON, confirm: 'yes' })).status, 303);
    assert.equal((await appStatus(moderator, asleep!, { status: 'active', reason: REASON, confirm: 'yes' })).status, 303, 'room again');
    assert.equal((await activeApps(owner)).length, MAX_APPS_PER_OWNER);

    // `svc client create --owner`: its registration was not held to the cap, and neither is its reactivation.
    const { client: operators } = await registerClient(t.deps.stores, t.deps.clock, { name: 'Operator\'s', type: 'public', redirectUris: ['https://operator.example/cb'], ownerId: owner.id });
    assert.equal((await appStatus(moderator, operators, { status: 'deactivated', reason: REASON, confirm: 'yes' })).status, 303);
    assert.equal((await appStatus(moderator, operators, { status: 'active', reason: REASON, confirm: 'yes' })).status, 303);
    assert.equal((await activeApps(owner)).length, MAX_APPS_PER_OWNER + 1);
  });

  test('apps: staff reactivations and the owner\'s registrations racing for the last place: only one lands', async () => {
    // A staff member each: one's changes wait for each other on their role's row (`holdsRole`).
    // Made one after another: each enrolment's code is the test clock's step, which the next moves on.
    const moderators: Person[] = [];
    for (let i = 0; i < 5; i += 1) moderators.push(await person(t, 'moderator', { twoStep: true }));
    const { user: owner, browser } = await signedIn();
    await seedApps(owner, MAX_APPS_PER_OWNER - 1);
    const asleep = await seedApps(owner, moderators.length, { deactivated: true });
    const statuses = (await Promise.all([
      ...asleep.map((client, i) => appStatus(moderators[i]!, client, { status: 'active', reason: REASON, confirm: 'yes' })),
      registerForm(browser, 'Racer 1'), registerForm(browser, 'Racer 2'),
    ])).map((r) => r.status);
    assert.equal(statuses.filter((status) => status === 303).length, 1, statuses.join(' '));
    assert.ok(statuses.slice(0, asleep.length).every((status) => status === 303 || status === 409), 'staff are told the owner has no room');
    assert.ok(statuses.slice(asleep.length).every((status) => status === 303 || status === 400), 'the owner is told on the form');
    assert.equal((await activeApps(owner)).length, MAX_APPS_PER_OWNER);
  });

  // ---- The day is a rolling 24 hours -----------------------------------------------------------

  test('the day is the last 24 hours, not a calendar day: neither midnight in UTC+8, the community\'s, nor in UTC frees a place', async () => {
    for (const offset of [8 * HOUR, 0]) {
      // One minute past the next midnight at that offset; everything made one minute before it.
      const midnight = Math.ceil((t.clock.now() + offset) / days(1)) * days(1) - offset;
      t.clock.advance(midnight + MINUTE - t.clock.now());
      const { user, browser } = await signedIn();
      await seedTokens(user, PERSONAL_TOKENS_PER_DAY, { createdAt: midnight - MINUTE, revoked: true });
      await seedApps(user, APP_REGISTRATIONS_PER_DAY, { createdAt: midnight - MINUTE, deactivated: true });
      for (const refused of [await tokenForm(browser), await registerForm(browser)]) {
        assert.equal(refused.status, 400, `UTC+${offset / HOUR}`);
        assert.match(await text(refused), /in the last 24 hours, .* Try again in 23 hours and 58 minutes\./, `UTC+${offset / HOUR}`);
      }
    }
  });

  // ---- Words -----------------------------------------------------------------------------------

  test('the caps are shown on each page in the page\'s language, Simplified and Traditional Chinese as written there', async () => {
    const expected: Record<string, [RegExp, RegExp, RegExp]> = {
      'zh-CN': [/每个账号最多可以添加 20 个通行密钥。/, /同一时间最多可以有 100 个有效令牌，已撤销和已过期的不计在内。/, /每个账号最多可以有 100 个在用的应用，已停用的不计在内。/],
      'zh-TW': [/每個帳號最多可以新增 20 個通行金鑰。/, /同一時間最多可以有 100 個有效權杖，已撤銷和已過期的不計算在內。/, /每個帳號最多可以有 100 個使用中的應用程式，已停用的不計算在內。/],
    };
    for (const [language, [passkeys, tokens, apps]] of Object.entries(expected)) {
      const { user, browser } = await signedIn(undefined, { 'accept-language': language });
      assert.match(await text(await browser.fetch('/settings/security')), passkeys, language);
      assert.match(await text(await browser.fetch('/settings/tokens')), tokens, language);
      assert.match(await text(await browser.fetch('/settings/developers')), apps, language);
      assert.match(await text(await browser.fetch('/settings/tokens')), language === 'zh-CN' ? /24 小时内最多可以创建 100 个令牌，已撤销的也计在内。/ : /24 小時內最多可以建立 100 個權杖，已撤銷的也計算在內。/, language);
      assert.match(await text(await browser.fetch('/settings/developers')), language === 'zh-CN' ? /24 小时内最多可以注册 20 个应用，已停用的也计在内。/ : /24 小時內最多可以註冊 20 個應用程式，已停用的也計算在內。/, language);
      await seedPasskeys(user, MAX_PASSKEYS);
      const refused = await (await passkeyOptions(browser)).json() as { error_description: string };
      assert.match(refused.error_description, language === 'zh-CN' ? /请先移除一个，再添加新的。/ : /請先移除一個，再新增。/, language);
    }
  });
});
