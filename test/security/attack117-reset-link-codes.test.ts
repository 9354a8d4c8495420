/**
 * attack117: someone reads a member's mailbox but has not their authenticator app, and tries
 * second-step codes on a reset link's form. Those codes count on the account's one code counter
 * (attack111 had counted them apart, ten more a window), and each wrong one is written in the
 * account's security log, as one after the password is.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import type { User } from '../../src/core/accounts/ports.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT } from '../../src/core/accounts/sign-in.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { beginTotpEnrolment, confirmTotpEnrolment } from '../../src/core/accounts/two-step.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { mailedResetToken, verifiedAddress } from '../support/member-mail.js';
import { AddressedVisitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';

forEachDatabase('attack117: second-step codes on a reset link', (database) => {
  let t: TestAppWithSmtp;

  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  /** A member with a verified address and two-step verification on. */
  async function memberWithTwoStep(): Promise<{ user: User; email: string }> {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const home = new AddressedVisitor(t.baseUrl);
    await home.signIn(user.username, PASSWORD);
    const email = await verifiedAddress(t, home);
    const enrolment = (await beginTotpEnrolment(t.deps, user))!;
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment.secret, t.clock.now()));
    return { user, email };
  }

  test('the second-step codes of an account are counted on one counter wherever they are tried: ten wrong after the password leave none for a reset link', async () => {
    const { user, email } = await memberWithTwoStep();
    const attacker = new AddressedVisitor(t.baseUrl);
    assert.equal((await attacker.post('/login', { username: user.username, password: PASSWORD, return_to: '/' })).status, 303, 'the password is known');
    const statuses = [];
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) statuses.push((await attacker.post('/login/second-step', { code: String(100000 + i) })).status);
    assert.deepEqual(statuses, Array(SIGN_IN_FAILURES_PER_ACCOUNT).fill(401), 'ten wrong codes after the password');
    const token = await mailedResetToken(t, attacker, user.username, email);
    const onReset = await attacker.post('/password/reset', { token, password: NEW_PASSWORD, code: '999999' });
    assert.equal(onReset.status, 429, 'an eleventh code on the reset form is refused, not tried');
  });

  test('a wrong second-step code on a reset link\'s form is written in the account\'s security log, as one after the password is', async () => {
    const { user, email } = await memberWithTwoStep();
    const intruder = new AddressedVisitor(t.baseUrl);
    const token = await mailedResetToken(t, intruder, user.username, email);
    assert.equal((await intruder.post('/password/reset', { token, password: NEW_PASSWORD, code: '000000' })).status, 400);
    const logged = (await t.deps.stores.securityEvents.listForUser(user.id, 0, 200)).items
      .filter((event) => event.kind === 'sign_in.failed' && event.detail?.reason === 'wrong second-step code');
    assert.equal(logged.length, 1, 'the owner is told');
  });
});
