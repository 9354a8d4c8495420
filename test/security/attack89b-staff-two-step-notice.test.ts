/**
 * attack89b: INTERFACE section 12 says a security notice goes to the member's verified address
 * when "two-step turned on or off" and when "a passkey added or removed". Staff resetting a
 * member's two-step verification in the console (`POST /admin/members/{id}/two-step/reset`,
 * INTERFACE section 14) turns it off and removes every passkey, yet the member is mailed nothing:
 * `makeStaffChange` writes the security-log line `staff.two_step_reset` straight into the table,
 * never through the security log's notice, and `NOTICE_OF` has no entry for it. A reset talked out
 * of staff by someone posing as the member (the usual way into an account with two-step on) is
 * then learned of only by a member who happens to read their security log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';
import { TestSmtpServer } from '../support/smtp.js';
import { person } from '../staff/support.js';
import { randomBytes } from 'node:crypto';

const REASON = 'the member lost their phone';

forEachDatabase('attack89b: staff removing a member\'s two-step verification', (database) => {
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

  test('the member is mailed a notice when staff turn their two-step verification off (INTERFACE section 12)', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: true });
    const email = `m${randomBytes(5).toString('hex')}@example.test`;
    assert.equal((await member.visitor.post('/settings/email', { email })).status, 200);
    await deliver();
    const link = /http:\/\/\S+\/email\/verify\?token=[A-Za-z0-9_-]+/.exec(smtp.to(email).at(-1)?.text ?? '')?.[0];
    assert.ok(link, 'a verification link was mailed');
    assert.equal((await member.visitor.get(link.slice(t.baseUrl.length))).status, 200);
    assert.ok((await t.deps.stores.memberEmails.find(member.user.id))?.verifiedAt, 'the address is verified');
    await deliver();
    const before = smtp.to(email).length;

    const done = await admin.visitor.post(`/admin/members/${member.user.id}/two-step/reset`, { reason: REASON, confirm: 'yes' });
    assert.equal(done.status, 303);
    assert.equal(await t.deps.stores.secondFactors.findTotp(member.user.id), undefined, 'two-step verification is off');
    await deliver();

    const mailed = smtp.to(email).slice(before);
    assert.equal(mailed.length, 1, 'one notice mail tells the member their two-step verification was turned off');
    assert.match(mailed[0]!.subject, /^The site's staff turned off two-step verification for your .+ account$/);
    assert.match(mailed[0]!.text, /If you did not, someone may have asked in your name/);
    assert.ok(!mailed[0]!.text.includes(REASON) && !mailed[0]!.text.includes(admin.user.username), 'never who or why, as the security log');
  });
});
