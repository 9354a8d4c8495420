/**
 * A member's nickname in the mails that greet them by it (a password reset link, the notice that
 * a change of address was asked): isolated (FSI … PDI, UAX #9) when it is right to left or holds
 * a direction control an older row may keep, as the security notices isolate it, so it cannot
 * reorder the greeting around it. Over real HTTP on every database.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { uniqueName } from '../staff/support.js';
import { Visitor, signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';
/** A nickname from before the rule: a right-to-left override that, bare, would run on over the greeting. */
const OLDER = 'Mira \u202eevil';

forEachDatabase('nicknames in mail', (database) => {
  let t: TestApp;
  before(async () => {
    // Mail is on, so the mails are queued; nothing delivers them (no interval, no server).
    t = await startTestApp(database, { env: { SMTP_URL: 'smtp://127.0.0.1:9', MAIL_DELIVERY_INTERVAL: '0' } });
  });
  after(() => t.close());

  async function memberWithAddress(nickname: string) {
    const { user, visitor } = await signedInMember(t, uniqueName('mailed'), PASSWORD);
    const address = `${user.username}@example.test`;
    await t.deps.stores.memberEmails.set(user.id, address, 'en', t.clock.now());
    assert.ok(await t.deps.stores.memberEmails.markVerified(user.id, address, t.clock.now()));
    assert.ok(await t.deps.stores.users.updateProfile(user.id, { nickname }, t.clock.now()));
    return { user, visitor, address };
  }

  const mailsTo = (address: string) => t.deps.database.db.selectFrom('mail_outbox').select(['kind', 'body_text']).where('recipient', '=', address).execute();

  test('a password reset mail isolates a nickname holding a direction control or a right-to-left letter', async () => {
    for (const nickname of [OLDER, 'مريم']) {
      const { user, address } = await memberWithAddress(nickname);
      assert.equal((await new Visitor(t.baseUrl).post('/password/forgot', { login: user.username })).status, 200);
      // The link is mailed by work the request leaves running.
      await t.deps.background.settled();
      const mails = await mailsTo(address);
      assert.equal(mails.length, 1, 'one reset mail');
      assert.ok(mails[0]!.body_text.includes(`\u2068${nickname}\u2069`), JSON.stringify(mails[0]!.body_text.slice(0, 60)));
    }
  });

  test('the notice that a change of address was asked isolates such a nickname', async () => {
    const { visitor, address } = await memberWithAddress(OLDER);
    const response = await visitor.post('/settings/email', { email: `${uniqueName('new')}@example.test` });
    assert.ok(response.status === 303 || response.status === 200, String(response.status));
    const notice = (await mailsTo(address)).find((mail) => mail.kind === 'noticeEmailChanged');
    assert.ok(notice, 'the notice was queued');
    assert.ok(notice.body_text.includes(`\u2068${OLDER}\u2069`), JSON.stringify(notice.body_text.slice(0, 60)));
  });
});
