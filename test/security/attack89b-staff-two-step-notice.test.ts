/**
 * attack89b: INTERFACE section 12 says a security notice goes to the member's verified address
 * when "two-step turned on or off" and when "a passkey added or removed". Staff resetting a
 * member's two-step verification in the console (`POST /admin/members/{id}/two-step/reset`,
 * INTERFACE section 14) turns it off and removes every passkey, yet the member is mailed nothing:
 * `makeStaffChange` writes the security-log line `staff.two_step_reset` straight into the table,
 * never through the security log's notice, and `NOTICE_OF` has no entry for it. A reset talked out
 * of staff by someone posing as the member (the usual way into an account with two-step on) is
 * then learned of only by a member who happens to read their security log.
 *
 * attack91: and only a reset that turned something off: a member who had no authenticator app,
 * recovery code or passkey, or a confirmation sent twice (a double click, a second tab, a second
 * instance), would have been mailed that they were removed, which did not happen.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import { person } from '../staff/support.js';

const REASON = 'the member lost their phone';

forEachDatabase('attack89b, attack91: staff removing a member\'s two-step verification', (database) => {
  let t: TestAppWithSmtp;

  before(async () => {
    t = await startAppWithSmtp(database);
  });
  after(async () => {
    await t.close();
  });

  const deliver = () => deliverMail(t);

  const noticesTo = (email: string, from: number) => t.smtp.to(email).slice(from).filter((m) => /turned off two-step verification/.test(m.subject));

  test('the member is mailed a notice when staff turn their two-step verification off (INTERFACE section 12)', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: true });
    const email = await verifiedAddress(t, member.visitor);
    const before = t.smtp.to(email).length;

    const done = await admin.visitor.post(`/admin/members/${member.user.id}/two-step/reset`, { reason: REASON, confirm: 'yes' });
    assert.equal(done.status, 303);
    assert.equal(await t.deps.stores.secondFactors.findTotp(member.user.id), undefined, 'two-step verification is off');
    await deliver();

    const mailed = t.smtp.to(email).slice(before);
    assert.equal(mailed.length, 1, 'one notice mail tells the member their two-step verification was turned off');
    assert.match(mailed[0]!.subject, /^The site's staff turned off two-step verification for your .+ account$/);
    assert.match(mailed[0]!.text, /If you did not, someone may have asked in your name/);
    assert.ok(!mailed[0]!.text.includes(REASON) && !mailed[0]!.text.includes(admin.user.username), 'never who or why, as the security log');
  });

  test('a member with no authenticator app, recovery code or passkey is not told that staff removed them', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    const email = await verifiedAddress(t, member.visitor);
    const before = t.smtp.to(email).length;

    const done = await admin.visitor.post(`/admin/members/${member.user.id}/two-step/reset`, { reason: REASON, confirm: 'yes' });
    assert.equal(done.status, 303, 'the reset is answered as made');
    await deliver();

    assert.deepEqual(noticesTo(email, before).map((m) => m.subject), [],
      'no mail says an authenticator app, recovery codes and passkeys were removed when the member had none');
  });

  test('the confirmation sent twice mails the member once: the second reset removed nothing', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: true });
    const email = await verifiedAddress(t, member.visitor);
    const before = t.smtp.to(email).length;

    for (let i = 0; i < 2; i++) {
      const done = await admin.visitor.post(`/admin/members/${member.user.id}/two-step/reset`, { reason: REASON, confirm: 'yes' });
      assert.equal(done.status, 303);
    }
    assert.equal(await t.deps.stores.secondFactors.findTotp(member.user.id), undefined, 'two-step verification is off');
    await deliver();

    assert.equal(noticesTo(email, before).length, 1, 'one notice for the one reset that turned two-step verification off');
  });
});
