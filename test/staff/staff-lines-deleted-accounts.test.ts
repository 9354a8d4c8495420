/**
 * Staff changes and deleted accounts: a staff change writes its line in a member's security log
 * (and mails its notice) only while the account is not deleted. The member's own deletion erased
 * that log for good; an account staff deleted keeps its log as it was, and is told nothing more,
 * as its sign-in failures are not (src/core/staff/staff.ts, `toldToAccountsNotDeleted`).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import { PASSWORD, person } from './support.js';

forEachDatabase('staff changes on a deleted account', (database) => {
  let t: TestAppWithSmtp;
  before(async () => { t = await startAppWithSmtp(database); });
  after(() => t.close());

  const kinds = async (userId: number) => (await t.deps.stores.securityEvents.listForUser(userId, 0, 50)).items.map((e) => e.kind);

  test('no staff change writes a line into the log the member\'s own deletion erased; each is still made and in the staff log', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: false });
    assert.equal((await member.visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD })).status, 303);
    assert.deepEqual(await kinds(member.user.id), [], 'the deletion erased the log');
    const id = member.user.id;
    assert.equal((await admin.visitor.post(`/admin/members/${id}/sessions/revoke`, { reason: 'cleaning up', confirm: 'yes' })).status, 303);
    assert.equal((await admin.visitor.post(`/admin/members/${id}/two-step/reset`, { reason: 'cleaning up', confirm: 'yes' })).status, 303);
    assert.equal((await admin.visitor.post(`/admin/members/${id}/role`, { role: 'moderator', reason: 'cleaning up', confirm: 'yes' })).status, 303);
    assert.deepEqual(await kinds(id), [], 'no line joins the erased log');
    const logged = (await t.deps.stores.staffLog.list({ limit: 10, target: { kind: 'member', id: String(id) } })).map((e) => e.action);
    assert.equal(logged.length, 3, `each change is in the staff log (${logged.join(', ')})`);
  });

  test('an account staff deleted keeps its log as it was and is mailed no notice of a later staff change; a suspended one is', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const member = await person(t, 'member', { twoStep: true });
    const email = await verifiedAddress(t, member.visitor);
    await setAccountStatus(t.deps.stores, t.deps.clock, member.user.id, 'deleted');
    const before = await kinds(member.user.id);
    const mails = t.smtp.to(email).length;
    assert.equal((await admin.visitor.post(`/admin/members/${member.user.id}/two-step/reset`, { reason: 'cleaning up', confirm: 'yes' })).status, 303);
    await deliverMail(t);
    assert.deepEqual(t.smtp.to(email).slice(mails).map((m) => m.subject), [], 'no notice mailed');
    assert.deepEqual(await kinds(member.user.id), before, 'no new line in the kept log');

    await setAccountStatus(t.deps.stores, t.deps.clock, member.user.id, 'suspended');
    assert.equal((await admin.visitor.post(`/admin/members/${member.user.id}/role`, { role: 'moderator', reason: 'trusted', confirm: 'yes' })).status, 303);
    assert.deepEqual((await kinds(member.user.id)).slice(0, 1), ['staff.role_changed'], 'a suspended member is still told');
  });
});
