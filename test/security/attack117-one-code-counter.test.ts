/**
 * attack117: someone holds a member's password and mailbox but not their authenticator app. A
 * reset link's second-step code counts apart from the account's sign-in counter (attack111), so
 * the ten codes a window after the password must not become ten more on the reset form.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT } from '../../src/core/accounts/sign-in.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { beginTotpEnrolment, confirmTotpEnrolment } from '../../src/core/accounts/two-step.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import { AddressedVisitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery';

forEachDatabase('attack117: second-step codes tried on every way in', (database) => {
  let t: TestAppWithSmtp;

  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  test('the second-step codes of an account are counted on one counter wherever they are tried: ten wrong after the password leave none for a reset link', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const home = new AddressedVisitor(t.baseUrl);
    await home.signIn(user.username, PASSWORD);
    const email = await verifiedAddress(t, home);
    const enrolment = (await beginTotpEnrolment(t.deps, user))!;
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment.secret, t.clock.now()));

    const attacker = new AddressedVisitor(t.baseUrl);
    assert.equal((await attacker.post('/login', { username: user.username, password: PASSWORD, return_to: '/' })).status, 303, 'the password is known');
    const statuses = [];
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) statuses.push((await attacker.post('/login/second-step', { code: String(100000 + i) })).status);
    assert.deepEqual(statuses, Array(SIGN_IN_FAILURES_PER_ACCOUNT).fill(401), 'ten wrong codes after the password');

    assert.equal((await attacker.post('/password/forgot', { login: user.username })).status, 200);
    await deliverMail(t);
    const token = /\/password\/reset\?token=([A-Za-z0-9_-]+)/.exec(t.smtp.to(email).at(-1)?.text ?? '')?.[1];
    assert.ok(token, 'the mailbox is read too');
    const onReset = await attacker.post('/password/reset', { token, password: 'a brand new passphrase', code: '999999' });
    assert.equal(onReset.status, 429, 'an eleventh code on the reset form is refused, not tried');
  });
});
