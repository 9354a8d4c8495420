/**
 * attack117: a reset mail still waiting in the outbox is replaced by a newer one and its count
 * given back (attack111, for an SMTP server that is away). Replacing one the outbox has not tried
 * yet let anyone who asks for the member's link faster than the outbox sends (every 2 s) keep every
 * mail from going out, the count never spent.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { RESET_MAILS_PER_ACCOUNT } from '../../src/core/accounts/password-reset.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import { AddressedVisitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery';

forEachDatabase('attack117: reset mails asked for faster than the outbox sends', (database) => {
  let t: TestAppWithSmtp;

  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  test('a reset mail the outbox has not tried yet is not replaced: asks between two of its passes leave each its mail, within the hour\'s count', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const home = new AddressedVisitor(t.baseUrl);
    await home.signIn(user.username, PASSWORD);
    const email = await verifiedAddress(t, home);
    for (let i = 0; i < 2 * RESET_MAILS_PER_ACCOUNT; i++) {
      assert.equal((await new AddressedVisitor(t.baseUrl).post('/password/forgot', { login: user.username })).status, 200);
      await t.deps.background.settled();
    }
    await deliverMail(t);
    const arrived = t.smtp.to(email).filter((mail) => mail.text.includes('/password/reset?token='));
    assert.equal(arrived.length, RESET_MAILS_PER_ACCOUNT, 'the member gets the mails the hour allows, and no more');
  });
});
