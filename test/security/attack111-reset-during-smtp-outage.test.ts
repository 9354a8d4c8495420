/**
 * attack111: the SMTP server goes away, and a member who forgot their password asks for a link
 * again and again, told each time that it was sent. Once the server is back, the member must be
 * able to get one link that works, not a mail with a dead link for each ask and then, the hour's
 * mails used up, nothing at all behind the same "sent" page.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { RESET_LINK_MS, RESET_MAILS_PER_ACCOUNT, RESET_WINDOW_SECONDS } from '../../src/core/accounts/password-reset.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import { AddressedVisitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery';

forEachDatabase('attack111: a forgotten password while the SMTP server is away', (database) => {
  let t: TestAppWithSmtp;

  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  /** A member with a verified address, the reset mails that reach it, and the phone they ask from. */
  async function forgetfulMember() {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const home = new AddressedVisitor(t.baseUrl);
    await home.signIn(user.username, PASSWORD);
    const email = await verifiedAddress(t, home);
    const resetMails = () => t.smtp.to(email).filter((mail) => mail.text.includes('/password/reset?token='));
    return { user, resetMails, phone: new AddressedVisitor(t.baseUrl) };
  }

  test('asking again for a reset link while mail cannot be sent replaces the waiting mail: once the server is back, one mail arrives and its link works', async () => {
    const { user, resetMails, phone } = await forgetfulMember();
    await t.smtp.stop();
    try {
      for (let i = 0; i < RESET_MAILS_PER_ACCOUNT; i++) {
        assert.equal((await phone.post('/password/forgot', { login: user.username })).status, 200);
        await deliverMail(t);
        t.clock.advance(60_000);
      }
    } finally {
      await t.smtp.listen();
    }
    t.clock.advance(RESET_LINK_MS);
    assert.equal(resetMails().length, 0, 'nothing went out while the server was away');
    assert.equal((await phone.post('/password/forgot', { login: user.username })).status, 200, 'asked once more, the server back');
    await deliverMail(t);
    const arrived = resetMails();
    assert.equal(arrived.length, 1, 'one mail, not one for each ask');
    const token = /\/password\/reset\?token=([A-Za-z0-9_-]+)/.exec(arrived[0]!.text)![1]!;
    assert.equal((await phone.post('/password/reset', { token, password: 'a brand new passphrase' })).status, 200, 'its link works');
  });

  test('a reset mail still waiting from the hour before is replaced without taking back a count of this hour: the hour still sends at most its limit', async () => {
    const { user, resetMails, phone } = await forgetfulMember();
    const hour = RESET_WINDOW_SECONDS * 1000;
    t.clock.advance(hour - (t.clock.now() % hour) - 5_000);
    await t.smtp.stop();
    try {
      assert.equal((await phone.post('/password/forgot', { login: user.username })).status, 200, 'asked in the last seconds of an hour');
      await deliverMail(t);
    } finally {
      await t.smtp.listen();
    }
    t.clock.advance(10_000);
    for (let i = 0; i <= RESET_MAILS_PER_ACCOUNT; i++) {
      assert.equal((await phone.post('/password/forgot', { login: user.username })).status, 200);
      await deliverMail(t);
    }
    assert.equal(resetMails().length, RESET_MAILS_PER_ACCOUNT, 'the first ask of the hour replaced the waiting mail and still counted');
  });

  test('a reset mail the relay took whole and never answered may have arrived: it is not sent again, the next ask does not replace it, and it keeps its count, so the hour mails at most its limit', async () => {
    const { user, resetMails, phone } = await forgetfulMember();
    const email = (await t.deps.stores.memberEmails.find(user.id))!.address;
    const hour = RESET_WINDOW_SECONDS * 1000;
    t.clock.advance(hour - (t.clock.now() % hour) + 1_000);
    t.smtp.unanswer(email);
    try {
      assert.equal((await phone.post('/password/forgot', { login: user.username })).status, 200);
      await deliverMail(t);
    } finally {
      t.smtp.accept(email);
    }
    for (let i = 0; i < RESET_MAILS_PER_ACCOUNT; i++) {
      assert.equal((await phone.post('/password/forgot', { login: user.username })).status, 200);
      await deliverMail(t);
    }
    assert.equal(resetMails().length, RESET_MAILS_PER_ACCOUNT, 'the unanswered one arrived once, and counted: four more, not five');
    const rows = await t.deps.database.db.selectFrom('mail_outbox').select(['maybe_sent_at', 'last_error']).where('user_id', '=', user.id).where('kind', '=', 'passwordReset').orderBy('id').execute();
    assert.notEqual(rows[0]!.maybe_sent_at, null);
    assert.doesNotMatch(rows[0]!.last_error ?? '', /superseded/);
  });
});
