/**
 * A member whose account is not active (INTERFACE section 4: suspended, banned, deleted) is told
 * so, once they have shown they hold it: at sign-in after the right password, never after a wrong
 * one (no account-status oracle without the password), likewise after a passkey that verifies, and at the API by a token of theirs, whose
 * 401 says the account is not active rather than to authorize again (RFC 6750 3.1 `invalid_token`).
 * A revoked personal token, which no authorization makes, is likewise told to make a new one.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus, setPassword } from '../../src/core/accounts/accounts.js';
import { BEARER_REFUSALS } from '../../src/core/api/bearer.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { generateRecoveryCodes, hashRecoveryCode } from '../../src/core/accounts/recovery-codes.js';
import { SIGN_IN_FAILURES_PER_DEVICE } from '../../src/core/accounts/sign-in.js';
import { beginTotpEnrolment, confirmTotpEnrolment } from '../../src/core/accounts/two-step.js';
import type { UserStatus } from '../../src/core/accounts/ports.js';
import { get, newAccessToken, newPersonalToken } from '../api/fixtures.js';
import { Browser, PASSWORD, clientFields, freshCode, newUser, obtainTokens, signedInBrowser, tokenRequest } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { addPasskey, passkeyAlone } from '../support/passkey.js';
import { PASSWORD as MEMBER_PASSWORD, person } from '../staff/support.js';
import { Visitor } from './visitor.js';

const NOT_ACTIVE: readonly UserStatus[] = ['suspended', 'banned', 'deleted'];
const TOTP_STEP_MS = 30_000;

/** What each language's page says for each status after the right password, and for a wrong one. */
const TOLD: Record<string, { status: Record<string, string>; turnTo: string; wrong: string; shown: Record<'password' | 'passkey', string> }> = {
  en: {
    status: { suspended: 'This account is suspended', banned: 'This account is banned', deleted: 'This account was deleted' },
    turnTo: 'contact the staff of Community',
    wrong: 'That username and password do not match an account that can sign in.',
    shown: { password: 'Your password is right', passkey: 'Your passkey was verified' },
  },
  'zh-CN': {
    status: { suspended: '该账号已被暂停使用', banned: '该账号已被封禁', deleted: '该账号已被删除' },
    turnTo: '请联系社区的管理人员',
    wrong: '用户名或密码不正确，或该账号无法登录。',
    shown: { password: '你的密码是正确的', passkey: '你的通行密钥已验证通过' },
  },
  'zh-TW': {
    status: { suspended: '此帳號已暫停使用', banned: '此帳號已被停權', deleted: '此帳號已刪除' },
    turnTo: '請聯絡社群的管理人員',
    wrong: '使用者名稱或密碼不正確，或此帳號無法登入。',
    shown: { password: '你的密碼是正確的', passkey: '你的通行金鑰已通過驗證' },
  },
};

forEachDatabase('an account that is not active is told so', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('the right password of a suspended, banned or deleted account is told the account\'s status and to contact the staff, in the reader\'s language; a wrong password is told only that it is wrong', async () => {
    for (const status of NOT_ACTIVE) {
      const user = await newUser(t);
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, status);
      for (const [locale, told] of Object.entries(TOLD)) {
        const right = await new Browser(t, { 'accept-language': locale }).signIn(user.username, PASSWORD);
        assert.equal(right.status, 401, `${status} ${locale}: not signed in`);
        assert.equal(right.headers.get('location'), null);
        const rightPage = await right.text();
        assert.ok(rightPage.includes(told.status[status]!), `${status} ${locale}: the page names the status`);
        assert.ok(rightPage.includes(told.turnTo), `${status} ${locale}: the page says where to turn`);
        assert.ok(!rightPage.includes(told.wrong), `${status} ${locale}: not told the password is wrong`);

        const wrong = await new Browser(t, { 'accept-language': locale }).signIn(user.username, 'not the password');
        assert.equal(wrong.status, 401);
        const wrongPage = await wrong.text();
        assert.ok(wrongPage.includes(told.wrong), `${status} ${locale}: a wrong password is told it is wrong`);
        for (const said of [...Object.values(told.status), told.turnTo]) assert.ok(!wrongPage.includes(said), `${status} ${locale}: a wrong password learns nothing of the status`);
      }
    }
  });

  test('the page that tells an account\'s holder it is not active offers the way to appeal, naming the account, in place of "Forgot password?", in the reader\'s language; after a second step too', async () => {
    const appeal: Record<string, string> = { en: 'To appeal, contact the staff of Community and name your account, ', 'zh-CN': '如需申诉，请联系社区的管理人员，并写明你的账号 ', 'zh-TW': '如需申訴，請聯絡社群的管理人員，並寫明你的帳號 ' };
    const forgot = 'href="/password/forgot"';
    const user = await newUser(t);
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'banned');
    for (const [locale, words] of Object.entries(appeal)) {
      const page = await (await new Browser(t, { 'accept-language': locale }).signIn(user.username, PASSWORD)).text();
      assert.ok(page.includes(`${words}${user.username}`), `${locale}: the way to appeal, naming the account`);
      assert.ok(!page.includes(forgot), `${locale}: no "Forgot password?"`);
      const wrong = await (await new Browser(t, { 'accept-language': locale }).signIn(user.username, 'not the password')).text();
      assert.ok(wrong.includes(forgot) && !wrong.includes(words), `${locale}: a wrong password's page is every wrong password's`);
    }
    const { user: twoStep, secret } = await person(t, 'member', { twoStep: true });
    await setAccountStatus(t.deps.stores, t.deps.clock, twoStep.id, 'suspended');
    const holder = new Visitor(t.baseUrl);
    assert.equal((await holder.post('/login', { username: twoStep.username, password: MEMBER_PASSWORD, return_to: '/' })).location, '/login/second-step');
    const told = await holder.post('/login/second-step', { code: totpCode(secret!, t.clock.now()) });
    assert.ok(told.text.includes(`${appeal.en}${twoStep.username}`) && !told.text.includes(forgot), 'after the second step');
    t.clock.advance(TOTP_STEP_MS);
  });

  test('an account with two-step verification that is not active is told its status only after its second step: its right password alone leads to the second step, as an active account\'s does', async () => {
    const { user, secret } = await person(t, 'member', { twoStep: true });
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    const thief = new Visitor(t.baseUrl);
    const password = await thief.post('/login', { username: user.username, password: MEMBER_PASSWORD, return_to: '/' });
    assert.equal(password.status, 303, 'the password alone is not told the status');
    assert.equal(password.location, '/login/second-step');
    assert.ok(!password.text.includes(TOLD.en!.status.suspended!));
    const wrongCode = await thief.post('/login/second-step', { code: totpCode(secret!, t.clock.now() + 10 * TOTP_STEP_MS) });
    assert.equal(wrongCode.status, 401);
    assert.ok(!wrongCode.text.includes(TOLD.en!.status.suspended!), 'nor a wrong code');
    const holder = await thief.post('/login/second-step', { code: totpCode(secret!, t.clock.now()) });
    assert.equal(holder.status, 401, 'not signed in');
    assert.ok(holder.text.includes(TOLD.en!.status.suspended!) && holder.text.includes(TOLD.en!.turnTo), 'the second step passed: told the status');
    assert.equal((await thief.get('/settings/profile')).location?.startsWith('/login'), true, 'and no session');
    t.clock.advance(TOTP_STEP_MS);
  });

  test('a personal or app token of an account that is not active is 401 invalid_token saying the account is not active, not to authorize again', async () => {
    for (const status of NOT_ACTIVE) {
      const user = await newUser(t);
      const tokens = {
        personal: (await newPersonalToken(t.deps, user, ['profile:read'])).token,
        app: (await newAccessToken(t.deps, user, 'profile:read')).token,
      };
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, status);
      for (const [kind, token] of Object.entries(tokens)) {
        const response = await get(t.baseUrl, '/api/open/v1/me', { token });
        assert.equal(response.status, 401, `${status} ${kind}`);
        assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
        const body = await response.json() as { error: string; error_description: string };
        assert.equal(body.error, 'invalid_token');
        assert.match(body.error_description, /account is not active/, `${status} ${kind}: ${body.error_description}`);
        assert.doesNotMatch(body.error_description, /authorize again/i, `${status} ${kind}`);
      }
    }
  });

  test('an app is told of an account that is not active in one wording wherever it meets it: its code and its refresh token at the token endpoint, its access token at the API', async () => {
    const { c, user, fields } = await freshCode(t);
    const { browser: other, user: refreshed } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, other, c);
    for (const { id } of [user, refreshed]) await setAccountStatus(t.deps.stores, t.deps.clock, id, 'suspended');
    const told = async (response: Response, status: number, error: string, what: string) => {
      assert.equal(response.status, status, what);
      assert.deepEqual(await response.json(), { error, error_description: BEARER_REFUSALS.unusableAccount.description }, what);
    };
    await told(await tokenRequest(t, fields), 400, 'invalid_grant', 'the code');
    await told(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) }), 400, 'invalid_grant', 'the refresh token');
    await told(await get(t.baseUrl, '/api/open/v1/me', { token: tokens.access_token }), 401, 'invalid_token', 'the access token');
  });

  test('the developer docs and the OpenAPI description tell an app that authorizing again cannot help while the account is not active, in the words the API answers', async () => {
    const docs = await (await fetch(`${t.baseUrl}/docs`)).text();
    const told = /<p>When the user withdraws consent[^]*?<\/p>/.exec(docs)?.[0] ?? '';
    assert.ok(told.includes(BEARER_REFUSALS.unusableAccount.description), `the docs quote the API's description: ${told}`);
    const openapi = await (await fetch(`${t.baseUrl}/api/open/v1/openapi.json`)).json() as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> };
    for (const [path, operations] of Object.entries(openapi.paths)) {
      for (const operation of Object.values(operations)) {
        const description = operation.responses['401']?.description ?? '';
        assert.match(description, /not while the account is not active/, `${path}: ${description}`);
      }
    }
  });

  test('a token revoked or expired before the account left active is not told the account\'s status: an old token (an app the member withdrew, a leaked personal token) is no way to watch it', async () => {
    const user = await newUser(t);
    const withdrawn = await newAccessToken(t.deps, user, 'profile:read');
    await t.deps.stores.grants.revokeForUserAndClient(user.id, withdrawn.client.clientId, 'consent_withdrawn', t.clock.now());
    const leaked = await newPersonalToken(t.deps, user, ['profile:read']);
    await t.deps.stores.personalTokens.revoke(leaked.record.id, user.id, t.clock.now());
    const old = await newAccessToken(t.deps, user, 'profile:read');
    t.clock.advance((t.deps.settings.accessTokenTtlSeconds + 60) * 1000);
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'banned');
    for (const [kind, token, told] of [['withdrawn app', withdrawn.token, /was revoked/], ['leaked personal', leaked.token, /personal token was revoked/], ['expired app', old.token, /has expired/]] as const) {
      const response = await get(t.baseUrl, '/api/open/v1/me', { token });
      assert.equal(response.status, 401, kind);
      const body = await response.json() as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_token');
      assert.match(body.error_description, told, `${kind}: ${body.error_description}`);
      assert.doesNotMatch(body.error_description, /not active/, `${kind}: the status is not told`);
    }
  });

  test('a token in force when its account left active is told the account is not active, whatever is written to the account after: a new password, a ban after the suspension', async () => {
    const user = await newUser(t);
    const tokens = { personal: (await newPersonalToken(t.deps, user, ['profile:read'])).token, app: (await newAccessToken(t.deps, user, 'profile:read')).token };
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    t.clock.advance(60_000);
    await setPassword(t.deps.stores, t.deps.clock, user, 'another long password 8');
    t.clock.advance(60_000);
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'banned');
    for (const [kind, token] of Object.entries(tokens)) {
      const body = await (await get(t.baseUrl, '/api/open/v1/me', { token })).json() as { error_description: string };
      assert.equal(body.error_description, BEARER_REFUSALS.unusableAccount.description, kind);
    }
  });

  test('a revoked personal token is 401 invalid_token saying to make a new one, not to authorize again', async () => {
    const user = await newUser(t);
    const { token, record } = await newPersonalToken(t.deps, user, ['profile:read']);
    await t.deps.stores.personalTokens.revoke(record.id, user.id, t.deps.clock.now());
    const response = await get(t.baseUrl, '/api/open/v1/me', { token });
    assert.equal(response.status, 401);
    const body = await response.json() as { error: string; error_description: string };
    assert.equal(body.error, 'invalid_token');
    assert.match(body.error_description, /personal token was revoked.*make a new one under Settings > API tokens/);
    assert.doesNotMatch(body.error_description, /authorize again/i);
  });

  test('a passkey of a suspended account that verifies is told the account\'s status and to contact the staff; a forged one only that it could not be verified', async () => {
    const user = await newUser(t);
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).status, 303);
    const passkey = await addPasskey(t, browser);
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    const verified = await passkeyAlone(new Browser(t), passkey);
    assert.equal(verified.status, 401);
    const page = await verified.text();
    assert.ok(page.includes(TOLD.en!.status.suspended!) && page.includes(TOLD.en!.turnTo), 'the page names the status and where to turn');
    const forged = await (await passkeyAlone(new Browser(t), passkey, true)).text();
    assert.ok(forged.includes('That passkey could not be verified'), 'a forged passkey is told it could not be verified');
    assert.ok(!forged.includes(TOLD.en!.status.suspended!), 'and learns nothing of the status');
  });
  test('the page that tells an account\'s holder it is not active says what they showed: a passkey that verified is not told its password is right, in the reader\'s language', async () => {
    const user = await newUser(t);
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).status, 303);
    const passkey = await addPasskey(t, browser);
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'banned');
    for (const [locale, told] of Object.entries(TOLD)) {
      const byPasskey = await (await passkeyAlone(new Browser(t, { 'accept-language': locale }), passkey)).text();
      assert.ok(byPasskey.includes(told.status.banned!) && byPasskey.includes(told.shown.passkey), `${locale}: the passkey is named`);
      assert.ok(!byPasskey.includes(told.shown.password), `${locale}: no password was given, none is said to be right`);
      const byPassword = await (await new Browser(t, { 'accept-language': locale }).signIn(user.username, PASSWORD)).text();
      assert.ok(byPassword.includes(told.shown.password) && !byPassword.includes(told.shown.passkey), `${locale}: the password is named`);
    }
  });

  test('a recovery code that passes the second step of an account that is not active is not spent: its holder is told the status, and the code signs in once the account is active again', async () => {
    const { user } = await person(t, 'member', { twoStep: true });
    const [code] = generateRecoveryCodes(1);
    await t.deps.stores.secondFactors.replaceRecoveryCodes(user.id, [hashRecoveryCode(code!)], t.clock.now());
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    const secondStep = async () => {
      const holder = new Visitor(t.baseUrl);
      assert.equal((await holder.post('/login', { username: user.username, password: MEMBER_PASSWORD, return_to: '/' })).location, '/login/second-step');
      return holder.post('/login/second-step', { code: code! });
    };
    const told = await secondStep();
    assert.equal(told.status, 401, 'not signed in');
    assert.ok(told.text.includes(TOLD.en!.status.suspended!), 'told the status');
    assert.equal(await t.deps.stores.secondFactors.countUnusedRecoveryCodes(user.id), 1, 'the code is not spent');
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'active');
    const signedIn = await secondStep();
    assert.equal(signedIn.status, 303, 'the kept code signs in');
    assert.equal(await t.deps.stores.secondFactors.countUnusedRecoveryCodes(user.id), 0, 'and is spent then');
  });
  /**
   * What `secondStep` answers with account `userId` set to `status` just after the route read it,
   * as an operator's change landing between that read and the write that takes the code or the
   * passkey would be.
   */
  async function statusChangedAfterTheRead<T>(userId: number, status: UserStatus, secondStep: () => Promise<T>): Promise<T> {
    const users = t.deps.stores.users;
    const findById = users.findById;
    users.findById = async (id) => {
      const found = await findById.call(users, id);
      if (id === userId) {
        users.findById = findById;
        await setAccountStatus(t.deps.stores, t.deps.clock, userId, status);
      }
      return found;
    };
    try {
      return await secondStep();
    } finally {
      users.findById = findById;
    }
  }

  /**
   * The holder of a two-step account with one recovery code, past the password and waiting at
   * the second step, whose account is set to `status` just after the route read it.
   */
  async function statusChangedBeforeTheCode(status: UserStatus, from: UserStatus) {
    const { user } = await person(t, 'member', { twoStep: true });
    const [code] = generateRecoveryCodes(1);
    await t.deps.stores.secondFactors.replaceRecoveryCodes(user.id, [hashRecoveryCode(code!)], t.clock.now());
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, from);
    const holder = new Visitor(t.baseUrl);
    assert.equal((await holder.post('/login', { username: user.username, password: MEMBER_PASSWORD, return_to: '/' })).location, '/login/second-step');
    return { user, answer: await statusChangedAfterTheRead(user.id, status, () => holder.post('/login/second-step', { code: code! })) };
  }

  test('a recovery code spent at the second step signs in: the write that spends it found the account active, whatever was read before it', async () => {
    const { user, answer } = await statusChangedBeforeTheCode('active', 'suspended');
    assert.equal(await t.deps.stores.secondFactors.countUnusedRecoveryCodes(user.id), 0, 'the code was spent');
    assert.equal(answer.status, 303, 'the spent code signs in');
  });

  test('a recovery code kept at the second step tells the status the write that kept it found, not one read before it', async () => {
    const { user, answer } = await statusChangedBeforeTheCode('suspended', 'active');
    assert.equal(await t.deps.stores.secondFactors.countUnusedRecoveryCodes(user.id), 1, 'the code is kept');
    assert.equal(answer.status, 401);
    assert.ok(answer.text.includes(TOLD.en!.status.suspended!), 'told the account is suspended');
    assert.ok(!answer.text.includes(TOLD.en!.status.deleted!), 'not told it was deleted');
  });
  test('a TOTP code at the second step goes by the status the write that records its time step found, not one read before it: suspended since, told so with no session; active since, signed in', async () => {
    for (const [from, to] of [['active', 'suspended'], ['suspended', 'active']] as const) {
      const { user, secret } = await person(t, 'member', { twoStep: true });
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, from);
      const holder = new Visitor(t.baseUrl);
      assert.equal((await holder.post('/login', { username: user.username, password: MEMBER_PASSWORD, return_to: '/' })).location, '/login/second-step');
      const answer = await statusChangedAfterTheRead(user.id, to, () => holder.post('/login/second-step', { code: totpCode(secret!, t.clock.now()) }));
      if (to === 'suspended') {
        assert.equal(answer.status, 401, `${from} then ${to}: not signed in`);
        assert.ok(answer.text.includes(TOLD.en!.status.suspended!), `${from} then ${to}: told the account is suspended`);
        assert.equal((await holder.get('/settings/profile')).location?.startsWith('/login'), true, 'and no session');
      } else {
        assert.equal(answer.status, 303, `${from} then ${to}: the write found the account active`);
      }
    }
    t.clock.advance(TOTP_STEP_MS);
  });

  test('a passkey at the second step goes by the status the write that records its signature counter found, not one read before it: suspended since, told so with no session; active since, signed in', async () => {
    for (const [from, to] of [['active', 'suspended'], ['suspended', 'active']] as const) {
      const user = await newUser(t);
      const browser = new Browser(t);
      assert.equal((await browser.signIn(user.username)).status, 303);
      const passkey = await addPasskey(t, browser);
      const enrolment = (await beginTotpEnrolment(t.deps, user))!;
      await confirmTotpEnrolment(t.deps, user, totpCode(enrolment.secret, t.clock.now()));
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, from);
      const holder = new Browser(t);
      assert.equal((await holder.signIn(user.username)).headers.get('location'), '/login/second-step');
      const csrf = holder.cookies.get('svc_csrf')!;
      const options = await (await holder.postForm('/login/second-step/passkey/options', { _csrf: csrf })).json() as { challenge: string };
      const answer = await statusChangedAfterTheRead(user.id, to, () => holder.postForm('/login/second-step/passkey', { _csrf: csrf, credential: passkey.assert(options) }));
      if (to === 'suspended') {
        assert.equal(answer.status, 401, `${from} then ${to}: not signed in`);
        assert.ok((await answer.text()).includes(TOLD.en!.status.suspended!), `${from} then ${to}: told the account is suspended`);
        assert.equal((await holder.fetch('/settings/profile')).headers.get('location')?.startsWith('/login'), true, 'and no session');
      } else {
        assert.equal(answer.status, 303, `${from} then ${to}: the write found the account active`);
      }
    }
    t.clock.advance(TOTP_STEP_MS);
  });

  test('a right code asked again of a member whose account left active as the code was checked is no wrong guess: it counts toward no lock-out, and a recovery code is kept', async () => {
    const { user, visitor } = await person(t, 'member', { twoStep: true });
    const [code] = generateRecoveryCodes(1);
    await t.deps.stores.secondFactors.replaceRecoveryCodes(user.id, [hashRecoveryCode(code!)], t.clock.now());
    // The account leaves active just before the code's write and is active again after it, so
    // every attempt reaches the write with the same session.
    const { secondFactors, users } = t.deps.stores;
    const useRecoveryCode = secondFactors.useRecoveryCode;
    secondFactors.useRecoveryCode = async (...args) => {
      await users.setStatus(user.id, 'suspended', t.clock.now());
      try {
        return await useRecoveryCode.apply(secondFactors, args);
      } finally {
        await users.setStatus(user.id, 'active', t.clock.now());
      }
    };
    try {
      for (let attempt = 1; attempt <= SIGN_IN_FAILURES_PER_DEVICE + 1; attempt++) {
        const answer = await visitor.post('/settings/security', { action: 'recovery-codes', code: code! });
        assert.notEqual(answer.status, 429, `attempt ${attempt} is not throttled`);
        assert.ok(!answer.text.includes('That code is not right'), `attempt ${attempt} is not told the code is wrong`);
      }
    } finally {
      secondFactors.useRecoveryCode = useRecoveryCode;
    }
    assert.equal(await secondFactors.countUnusedRecoveryCodes(user.id), 1, 'the code is kept');
    assert.equal((await visitor.post('/settings/security', { action: 'recovery-codes', code: code! })).status, 200, 'and, the account active, it makes new codes');
  });

  test('the way to appeal links to APPEAL_CONTACT when the operator set it, in every language; unset, it names the staff and links nowhere', async () => {
    const hint = (page: string) => /<p class="hint">[^]*?<\/p>/.exec(page.slice(page.indexOf('role="alert"')))?.[0] ?? '';
    const banned = async (app: TestApp) => {
      const user = await newUser(app);
      await setAccountStatus(app.deps.stores, app.deps.clock, user.id, 'banned');
      return user;
    };
    const unlinked = await banned(t);
    assert.doesNotMatch(hint(await (await new Browser(t).signIn(unlinked.username, PASSWORD)).text()), /<a\b/, 'unset: no link');
    for (const contact of ['mailto:appeals@example.com', 'https://help.example.com/appeals?from=sign-in']) {
      const linked = await startTestApp(database, { env: { APPEAL_CONTACT: contact } });
      try {
        const user = await banned(linked);
        for (const [locale, told] of Object.entries(TOLD)) {
          const page = hint(await (await new Browser(linked, { 'accept-language': locale }).signIn(user.username, PASSWORD)).text());
          const href = contact.replace(/&/g, '&amp;');
          assert.ok(page.includes(`<a href="${href}">${told.turnTo.replace(/^[请請]/, '')}</a>`), `${contact} ${locale}: ${page}`);
          assert.ok(page.includes(user.username), `${locale}: the account is still named`);
        }
      } finally {
        await linked.close();
      }
    }
  });
});
