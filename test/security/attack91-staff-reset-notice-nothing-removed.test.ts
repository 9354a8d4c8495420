/**
 * attack91: staff resetting a member's two-step verification mails the member
 * `noticeStaffTwoStepReset` (52bd372): "its authenticator app, recovery codes and passkeys were
 * removed, and your password alone now signs you in … If you did not [ask], someone may have asked
 * in your name: change your password". The mail goes whatever the reset removed: a reset of a
 * member who had no authenticator app, no recovery codes and no passkey (nothing was turned off)
 * mails them that it was, and the confirmation form sent twice (a double click, a second tab, a
 * second instance) mails the alarm twice, the second for a reset that removed nothing. INTERFACE
 * section 12 mails "two-step turned on or off, a passkey added or removed": a change that turned
 * nothing off and removed nothing is none of those, and its mail says what did not happen.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';
import { TestSmtpServer } from '../support/smtp.js';
import { type Person, person } from '../staff/support.js';

const REASON = 'the member lost their phone';

forEachDatabase('attack91: a staff reset that removed nothing mails no notice', (database) => {
  let t: TestApp;
  let smtp: TestSmtpServer;

  before(async () => {
    smtp = await TestSmtpServer.start();
    t = await startTestApp(database, { clock: new TestClock(Date.now()), env: { SMTP_URL: smtp.url, MAIL_DELIVERY_INTERVAL: '0' } });
  });
  after(async () => {
    await t.close();
    await smtp.stop();
  });

  const deliver = async () => {
    await t.deps.background.settled();
    return t.deps.mailDeliveries.runOnce();
  };

  /** Gives `who` a verified address; answers it. */
  async function verifiedAddress(who: Person): Promise<string> {
    const email = `m${randomBytes(5).toString('hex')}@example.test`;
    assert.equal((await who.visitor.post('/settings/email', { email })).status, 200);
    await deliver();
    const link = /http:\/\/\S+\/email\/verify\?token=[A-Za-z0-9_-]+/.exec(smtp.to(email).at(-1)?.text ?? '')?.[0];
    assert.ok(link, 'a verification link was mailed');
    assert.equal((await who.visitor.get(link.slice(t.baseUrl.length))).status, 200);
    await deliver();
    return email;
  }

  const noticesTo = (email: string, from: number) => smtp.to(email).slice(from).filter((m) => /turned off two-step verification/.test(m.subject));

  test('a member with no authenticator app, recovery code or passkey is not told that staff removed them', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    const email = await verifiedAddress(member);
    const before = smtp.to(email).length;

    const done = await admin.visitor.post(`/admin/members/${member.user.id}/two-step/reset`, { reason: REASON, confirm: 'yes' });
    assert.equal(done.status, 303, 'the reset is answered as made');
    await deliver();

    assert.deepEqual(noticesTo(email, before).map((m) => m.subject), [],
      'no mail says an authenticator app, recovery codes and passkeys were removed when the member had none');
  });

  test('the confirmation sent twice mails the member once: the second reset removed nothing', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: true });
    const email = await verifiedAddress(member);
    const before = smtp.to(email).length;

    for (let i = 0; i < 2; i++) {
      const done = await admin.visitor.post(`/admin/members/${member.user.id}/two-step/reset`, { reason: REASON, confirm: 'yes' });
      assert.equal(done.status, 303);
    }
    assert.equal(await t.deps.stores.secondFactors.findTotp(member.user.id), undefined, 'two-step verification is off');
    await deliver();

    assert.equal(noticesTo(email, before).length, 1, 'one notice for the one reset that turned two-step verification off');
  });
});
