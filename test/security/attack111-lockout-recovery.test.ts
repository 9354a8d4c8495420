/**
 * attack111: someone who knows only a member's username (every profile shows it) fails its
 * password from elsewhere, 10 times each 15 minutes, which locks the account for every browser
 * without its device cookie (INTERFACE section 4). A member on a new phone then recovers the
 * account by mail: the reset must get them back in, not leave them behind the same lock.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT, SIGN_IN_WINDOW_SECONDS } from '../../src/core/accounts/sign-in.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { beginTotpEnrolment, confirmTotpEnrolment } from '../../src/core/accounts/two-step.js';
import type { User } from '../../src/core/accounts/ports.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { mailedResetToken, verifiedAddress } from '../support/member-mail.js';
import { AddressedVisitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';

forEachDatabase('attack111: a locked account recovered by mail', (database) => {
  let t: TestAppWithSmtp;

  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  /** A member with a verified address, whose account an attacker elsewhere has locked. */
  async function lockedMember(): Promise<{ user: User; email: string }> {
    // The counters' windows are the clock's quarter hours: start at one's beginning, so that the
    // lock holds for minutes whatever the real time (a run a minute before :00 was told seconds).
    t.clock.advance(SIGN_IN_WINDOW_SECONDS * 1000 - (t.clock.now() % (SIGN_IN_WINDOW_SECONDS * 1000)) + 1000);
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const home = new AddressedVisitor(t.baseUrl);
    await home.signIn(user.username, PASSWORD);
    const email = await verifiedAddress(t, home);
    const attacker = new AddressedVisitor(t.baseUrl);
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) {
      assert.equal((await attacker.post('/login', { username: user.username, password: `guess ${i}`, return_to: '/' })).status, 401);
    }
    const refused = await new AddressedVisitor(t.baseUrl).post('/login', { username: user.username, password: PASSWORD, return_to: '/' });
    assert.equal(refused.status, 429, 'locked for a browser without the device cookie');
    return { user, email };
  }

  test('a browser that reset the password of a locked account signs in with it: the reset gives it the account\'s device cookie', async () => {
    const { user, email } = await lockedMember();
    const phone = new AddressedVisitor(t.baseUrl);
    const token = await mailedResetToken(t, phone, user.username, email);
    assert.equal((await phone.post('/password/reset', { token, password: NEW_PASSWORD })).status, 200);
    const signedIn = await phone.post('/login', { username: user.username, password: NEW_PASSWORD, return_to: '/' });
    assert.equal(signedIn.status, 303, 'the owner is back in');
    const stranger = await new AddressedVisitor(t.baseUrl).post('/login', { username: user.username, password: NEW_PASSWORD, return_to: '/' });
    assert.equal(stranger.status, 429, 'the lock still holds for every other browser');
  });

  test('the second step of a reset is not refused by failures piled on the account\'s password elsewhere, and is counted on its own', async () => {
    const { user, email } = await lockedMember();
    const enrolment = (await beginTotpEnrolment(t.deps, user))!;
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment.secret, t.clock.now()));
    const phone = new AddressedVisitor(t.baseUrl);
    const token = await mailedResetToken(t, phone, user.username, email);
    assert.equal((await phone.post('/password/reset', { token, password: NEW_PASSWORD, code: '000000' })).status, 400, 'a wrong code is wrong, not throttled');
    t.clock.advance(30_000);
    assert.equal((await phone.post('/password/reset', { token, password: NEW_PASSWORD, code: totpCode(enrolment.secret, t.clock.now()) })).status, 200);
    // Its code counted apart: ten wrong codes through links still end in 429.
    const next = await mailedResetToken(t, new AddressedVisitor(t.baseUrl), user.username, email);
    const statuses = [];
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) {
      statuses.push((await new AddressedVisitor(t.baseUrl).post('/password/reset', { token: next, password: NEW_PASSWORD, code: '000000' })).status);
    }
    assert.deepEqual(statuses, [...Array(SIGN_IN_FAILURES_PER_ACCOUNT - 1).fill(400), 429], 'the one wrong code before and these nine make ten');
  });

  test('a member refused for too many failed sign-ins is told, in Chinese, the ways in that no lock holds back: a passkey, or a reset by mail', async () => {
    const { user } = await lockedMember();
    const phone = new AddressedVisitor(t.baseUrl);
    phone.cookies.set('lang', 'zh-CN');
    const refused = await phone.post('/login', { username: user.username, password: PASSWORD, return_to: '/' });
    assert.equal(refused.status, 429);
    const alert = /<p class="alert" role="alert" id="form-error">([^<]*)<\/p>/.exec(refused.text)?.[1] ?? '';
    assert.match(alert, /分钟后重试/, 'when to try again');
    assert.match(alert, /通行密钥/, 'a passkey still signs in');
    assert.match(alert, /“忘记密码？”重置密码/, 'a reset by mail lets this browser in');
    assert.doesNotMatch(alert, /。 /, 'Chinese sentences follow one another without a space');
  });
});
