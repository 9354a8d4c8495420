/**
 * attack117: someone who reads a member's mailbox but has not their authenticator app tries codes
 * on a reset link's form. A wrong code after the password is written in the account's security
 * log; one on the reset form was not, so its owner never learned that their mailbox was read.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { beginTotpEnrolment, confirmTotpEnrolment } from '../../src/core/accounts/two-step.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import { AddressedVisitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery';

forEachDatabase('attack117: a wrong code on a reset link', (database) => {
  let t: TestAppWithSmtp;

  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  test('a wrong second-step code on a reset link\'s form is written in the account\'s security log, as one after the password is', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const home = new AddressedVisitor(t.baseUrl);
    await home.signIn(user.username, PASSWORD);
    const email = await verifiedAddress(t, home);
    const enrolment = (await beginTotpEnrolment(t.deps, user))!;
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment.secret, t.clock.now()));
    const intruder = new AddressedVisitor(t.baseUrl);
    assert.equal((await intruder.post('/password/forgot', { login: user.username })).status, 200);
    await deliverMail(t);
    const token = /\/password\/reset\?token=([A-Za-z0-9_-]+)/.exec(t.smtp.to(email).at(-1)?.text ?? '')?.[1];
    assert.ok(token);
    assert.equal((await intruder.post('/password/reset', { token, password: 'a brand new passphrase', code: '000000' })).status, 400);
    const logged = (await t.deps.stores.securityEvents.listForUser(user.id, 0, 200)).items
      .filter((event) => event.kind === 'sign_in.failed' && event.detail?.reason === 'wrong second-step code');
    assert.equal(logged.length, 1, 'the owner is told');
  });
});
