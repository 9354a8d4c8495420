/**
 * The audit trail of sign-in, attacked: every way a session begins writes one `sign_in.succeeded`,
 * every refused second step and wrong passkey leaves a trace for the operator and the account's
 * owner, passkeys are named by a digest of their credential id, and typed input cannot forge a
 * line. Over real HTTP on each database, with a software authenticator for passkeys.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { typedUsername } from '../../src/core/audit.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT } from '../../src/core/accounts/sign-in.js';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { deleteAccount } from '../../src/core/accounts/account-deletion.js';
import { Browser, PASSWORD, hiddenFields, newUser, unique } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { SoftwarePasskey, addPasskey as addPasskeyTo, passkeyAlone } from '../support/passkey.js';

const KEYS_SECRET = 'a test secret of at least thirty-two characters';
const STEP = 30_000;

type LogLine = Record<string, unknown>;

/** How the audit log names a passkey: a digest of its credential id, never the id or the key. */
const passkeyIdOf = (credentialId: string) => createHash('sha256').update(credentialId).digest('base64url').slice(0, 16);

forEachDatabase('the audit trail of sign-in', (database) => {
  let t: TestApp;
  const lines: string[] = [];
  before(async () => { t = await startTestApp(database, { env: { KEYS_SECRET }, logLines: lines }); });
  after(() => t.close());

  const csrf = (browser: Browser) => browser.cookies.get('svc_csrf')!;
  const auditOf = (userId: number) => lines.map((l) => JSON.parse(l) as LogLine).filter((l) => typeof l.audit === 'string' && l.userId === userId);
  const events = async (userId: number) => (await t.deps.stores.securityEvents.listForUser(userId, 0, 200)).items.reverse();

  async function signedIn() {
    const user = await newUser(t);
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).status, 303);
    return { user, browser };
  }

  async function enableTotp(browser: Browser): Promise<string> {
    const started = await (await browser.postForm('/settings/security', { _csrf: csrf(browser), action: 'totp-start' })).text();
    const secret = /id="totp-secret">([A-Z2-7 ]+)</.exec(started)![1]!.replace(/ /g, '');
    const confirmed = await browser.postForm('/settings/security', { _csrf: csrf(browser), action: 'totp-confirm', code: totpCode(secret, t.clock.now()) });
    assert.equal(confirmed.status, 200);
    t.clock.advance(STEP);
    return secret;
  }

  const addPasskey = (browser: Browser) => addPasskeyTo(t, browser);

  async function passkeySecondStep(browser: Browser, username: string, passkey: SoftwarePasskey, forge = false): Promise<Response> {
    assert.equal((await browser.signIn(username)).headers.get('location'), '/login/second-step');
    const options = await (await browser.postForm('/login/second-step/passkey/options', { _csrf: csrf(browser) })).json() as { challenge: string };
    return browser.postForm('/login/second-step/passkey', { _csrf: csrf(browser), credential: passkey.assert(options, forge) });
  }

  test('a sign-up starts a session, and is logged as a sign-in once, for the operator and the new account', async () => {
    const browser = new Browser(t);
    const page = await (await browser.fetch('/signup')).text();
    const username = unique('newcomer');
    const signedUp = await browser.postForm('/signup', [...hiddenFields(page).filter(([n]) => n === '_csrf'), ['username', username], ['password', PASSWORD], ['return_to', '/']]);
    assert.equal(signedUp.status, 303);
    const user = (await t.deps.stores.users.findByUsername(username))!;
    assert.equal((await browser.fetch('/settings/security')).status, 200, 'signed in');
    assert.deepEqual(auditOf(user.id).map((l) => [l.audit, l.method]), [['account.created', undefined], ['sign_in.succeeded', 'password']]);
    assert.deepEqual((await events(user.id)).map((e) => e.kind), ['sign_in.succeeded']);
  });

  test('a throttled second step is an audit event and, once a window, a line of the account log', async () => {
    const { user, browser } = await signedIn();
    await enableTotp(browser);
    const attacker = new Browser(t);
    assert.equal((await attacker.signIn(user.username)).headers.get('location'), '/login/second-step');
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) {
      assert.equal((await attacker.postForm('/login/second-step', { _csrf: csrf(attacker), code: '000000' })).status, 401);
    }
    for (let i = 0; i < 3; i++) {
      assert.equal((await attacker.postForm('/login/second-step', { _csrf: csrf(attacker), code: '000000' })).status, 429);
    }
    const failed = auditOf(user.id).filter((l) => l.audit === 'sign_in.failed');
    assert.deepEqual(failed.map((l) => l.reason), [...Array(SIGN_IN_FAILURES_PER_ACCOUNT).fill('invalid_second_factor'), 'throttled', 'throttled', 'throttled']);
    assert.equal(failed.at(-1)!.username, user.username);
    const logged = (await events(user.id)).filter((e) => e.kind === 'sign_in.failed');
    assert.equal(logged.length, SIGN_IN_FAILURES_PER_ACCOUNT + 1, 'the refusals after the limit are told to the owner once');
    assert.equal(logged.at(-1)!.detail.reason, 'too many wrong second-step codes');
  });

  test('passkeys are named in the audit log by a digest of their credential id: added, used, removed', async () => {
    const { user, browser } = await signedIn();
    const passkey = await addPasskey(browser);
    const passkeyId = passkeyIdOf(passkey.credentialId);
    const other = new Browser(t);
    assert.equal((await passkeyAlone(other, passkey)).status, 303, 'the passkey signs in alone');
    const removed = await browser.postForm('/settings/security', { _csrf: csrf(browser), action: 'passkey-remove', credential_id: passkey.credentialId });
    assert.equal(removed.status, 303);
    const audits = auditOf(user.id).filter((l) => l.audit !== 'sign_in.succeeded' || l.method === 'passkey');
    assert.deepEqual(audits.map((l) => [l.audit, l.passkeyId]), [['passkey.added', passkeyId], ['sign_in.succeeded', passkeyId], ['passkey.removed', passkeyId]]);
    assert.ok(!lines.join('\n').includes(passkey.credentialId), 'not the credential id itself');
  });

  test('a wrong passkey assertion, alone or as the second step, is a failed sign-in for the operator and the owner', async () => {
    const { user, browser } = await signedIn();
    await enableTotp(browser);
    const passkey = await addPasskey(browser);
    const passkeyId = passkeyIdOf(passkey.credentialId);

    const alone = new Browser(t);
    assert.equal((await passkeyAlone(alone, passkey, true)).status, 401);
    const second = new Browser(t);
    assert.equal((await passkeySecondStep(second, user.username, passkey, true)).status, 401);
    assert.equal((await passkeySecondStep(second, user.username, passkey)).status, 303, 'the real one still signs in');

    const failed = auditOf(user.id).filter((l) => l.audit === 'sign_in.failed');
    assert.deepEqual(failed.map((l) => [l.reason, l.passkeyId, l.username]), [
      ['invalid_passkey', passkeyId, user.username], ['invalid_passkey', passkeyId, user.username],
    ]);
    const succeeded = auditOf(user.id).filter((l) => l.audit === 'sign_in.succeeded').at(-1)!;
    assert.deepEqual([succeeded.method, succeeded.passkeyId], ['password_passkey', passkeyId]);
    const logged = (await events(user.id)).filter((e) => e.kind === 'sign_in.failed');
    assert.deepEqual(logged.map((e) => e.detail.reason), ['passkey not verified', 'passkey not verified']);
  });

  test('wrong passkeys are told to the owner 10 times a window, however many come; the operator sees each', async () => {
    const { user, browser } = await signedIn();
    const passkey = await addPasskey(browser);
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT + 3; i++) assert.equal((await passkeyAlone(new Browser(t), passkey, true)).status, 401);
    assert.equal(auditOf(user.id).filter((l) => l.reason === 'invalid_passkey').length, SIGN_IN_FAILURES_PER_ACCOUNT + 3);
    assert.equal((await events(user.id)).filter((e) => e.kind === 'sign_in.failed').length, SIGN_IN_FAILURES_PER_ACCOUNT);
  });

  test('a passkey no account holds is a failed sign-in of no account', async () => {
    const stranger = new SoftwarePasskey(t.baseUrl);
    const before = lines.length;
    assert.equal((await passkeyAlone(new Browser(t), stranger)).status, 401);
    const written = lines.slice(before).map((l) => JSON.parse(l) as LogLine).filter((l) => l.audit === 'sign_in.failed');
    assert.deepEqual(written.map((l) => [l.reason, l.userId, l.passkeyId, l.username]), [['invalid_passkey', undefined, undefined, '']]);
  });

  test('a wrong or throttled code asked again at /settings/security is an audit event, as a wrong password there is', async () => {
    const { user, browser } = await signedIn();
    await enableTotp(browser);
    // A browser holding the session guesses codes to turn two-step verification off.
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) {
      assert.equal((await browser.postForm('/settings/security', { _csrf: csrf(browser), action: 'totp-disable', code: '000000' })).status, 400);
    }
    assert.equal((await browser.postForm('/settings/security', { _csrf: csrf(browser), action: 'recovery-codes', code: '000000' })).status, 429);
    const failed = auditOf(user.id).filter((l) => l.audit === 'second_factor_confirm.failed');
    assert.deepEqual(failed.map((l) => l.reason), [...Array(SIGN_IN_FAILURES_PER_ACCOUNT).fill('wrong_code'), 'throttled']);
    assert.ok(failed.every((l) => typeof l.address === 'string' && !('code' in l)));
  });

  test('a sign-in whose security log entry cannot be written gives the browser no session', async () => {
    const user = await newUser(t);
    const { db } = t.deps.database;
    await sql`alter table security_events rename to security_events_away`.execute(db);
    let refused: Response;
    try {
      refused = await new Browser(t).signIn(user.username);
    } finally {
      await sql`alter table security_events_away rename to security_events`.execute(db);
    }
    assert.equal(refused.status, 500);
    assert.ok(!(refused.headers.getSetCookie?.() ?? []).some((c) => c.startsWith('svc_session=')), 'no session cookie');
    assert.ok(!auditOf(user.id).some((l) => l.audit === 'sign_in.succeeded'));
    assert.deepEqual(await t.deps.stores.sessions.listForUser(user.id, t.clock.now()), [], 'no session row either');
  });

  test('a second step passed for an account that is not active is the audit event the right password of one is: sign_in.failed, account_unusable, with the passkey shown', async () => {
    const { user, browser } = await signedIn();
    const secret = await enableTotp(browser);
    const passkey = await addPasskey(browser);
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    const unusable = () => auditOf(user.id).filter((l) => l.audit === 'sign_in.failed' && l.reason === 'account_unusable').map((l) => [l.username, l.passkeyId]);
    const byCode = new Browser(t);
    assert.equal((await byCode.signIn(user.username)).headers.get('location'), '/login/second-step');
    const afterPassword = unusable().length;
    assert.equal((await byCode.postForm('/login/second-step', { _csrf: csrf(byCode), code: totpCode(secret, t.clock.now()) })).status, 401);
    assert.deepEqual(unusable().slice(afterPassword), [[user.username, undefined]], 'the code');
    const afterCode = unusable().length;
    assert.equal((await passkeySecondStep(new Browser(t), user.username, passkey)).status, 401);
    assert.deepEqual(unusable().slice(afterCode), [[user.username, undefined], [user.username, passkeyIdOf(passkey.credentialId)]], 'the password, then the passkey');
    t.clock.advance(STEP);
  });

  test('a wrong password for a deleted account is an unknown username\'s: nothing is written to the account\'s log, and its audit line names no account', async () => {
    const { user } = await signedIn();
    const deleted = await deleteAccount(t.deps, user, { password: PASSWORD, code: '' }, { address: '192.0.2.1', deviceCookie: undefined });
    assert.equal(deleted.ok, true);
    const before = lines.length;
    assert.equal((await new Browser(t).signIn(user.username, 'not the password')).status, 401);
    assert.equal((await new Browser(t).signIn(unique('nobody'), 'not the password')).status, 401);
    const failed = lines.slice(before).map((l) => JSON.parse(l) as LogLine).filter((l) => l.audit === 'sign_in.failed');
    assert.deepEqual(failed.map((l) => [l.reason, 'userId' in l]), [['invalid_credentials', false], ['invalid_credentials', false]], 'the deleted account\'s line is an unknown name\'s');
    assert.deepEqual(await events(user.id), [], 'its log stays empty');
  });

  test('a wrong passkey for an account staff deleted writes nothing to its kept log, as a wrong password for it does; the operator still sees it, and a suspended account\'s owner is still told', async () => {
    const { user, browser } = await signedIn();
    const passkey = await addPasskey(browser);
    const before = (await events(user.id)).length;
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'deleted');
    assert.equal((await passkeyAlone(new Browser(t), passkey, true)).status, 401);
    assert.equal((await new Browser(t).signIn(user.username, 'not the password')).status, 401);
    assert.equal((await events(user.id)).length, before, 'no line joins the log staff kept');
    assert.deepEqual(auditOf(user.id).filter((l) => l.audit === 'sign_in.failed').map((l) => l.reason), ['invalid_passkey'], 'the passkey names the account to the operator');

    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    assert.equal((await passkeyAlone(new Browser(t), passkey, true)).status, 401);
    assert.deepEqual((await events(user.id)).slice(before).map((e) => [e.kind, e.detail.reason]), [['sign_in.failed', 'passkey not verified']]);
  });

  test('a typed username cannot forge an audit line: newlines and quotes stay inside its field', async () => {
    const forged = `x"}\n{"level":30,"audit":"sign_in.succeeded","userId":1,"msg":"audit"}\r\n`;
    const before = lines.length;
    assert.equal((await new Browser(t).signIn(forged, 'a guess')).status, 401);
    const written = lines.slice(before).join('');
    assert.equal(written.split('\n').filter((l) => l !== '').length, lines.length - before, 'one line each');
    const failed = lines.slice(before).map((l) => JSON.parse(l) as LogLine).filter((l) => l.audit !== undefined);
    assert.deepEqual(failed.map((l) => [l.audit, l.username]), [['sign_in.failed', typedUsername(forged)]]);
  });
});
