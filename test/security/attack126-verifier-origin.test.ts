/**
 * attack126 (left by its refusal fix, closed after it): a verification link mailed to an address
 * someone typed is opened by that address's holder, a stranger to the account. The account's
 * security log kept the opener's network address and browser, so whoever typed someone's address
 * learnt where its owner was the moment the owner opened the link. The line keeps the opener's
 * origin only when its browser is signed in as the account itself.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail } from '../support/member-mail.js';
import { AddressedVisitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery';

forEachDatabase('attack126: an opened verification link', (database) => {
  let t: TestAppWithSmtp;
  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  async function linkMailedBy(browser: AddressedVisitor): Promise<{ token: string; address: string }> {
    const address = `v${randomBytes(5).toString('hex')}@example.test`;
    assert.equal((await browser.post('/settings/email', { email: address })).status, 200);
    await deliverMail(t);
    const token = /\/email\/verify\?token=([A-Za-z0-9_-]+)/.exec(t.smtp.to(address)[0]?.text ?? '')?.[1];
    assert.ok(token, 'the mail holds its verification link');
    return { token, address };
  }

  async function verifiedEvents(userId: number) {
    return (await t.deps.stores.securityEvents.listForUser(userId, 0, 50)).items.filter((e) => e.kind === 'email.verified');
  }

  test('the opener of a verification link is shown to the account only when it is the account\'s own signed-in browser', async () => {
    const asker = await createAccount(t.deps.stores, t.clock, { username: `a${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const askerBrowser = new AddressedVisitor(t.baseUrl, '10.1.2.3');
    await askerBrowser.signIn(asker.username, PASSWORD);

    const stranger = await linkMailedBy(askerBrowser);
    const holder = new AddressedVisitor(t.baseUrl, '10.201.202.203');
    assert.equal((await holder.get(`/email/verify?token=${stranger.token}`)).status, 200);
    const [byStranger] = await verifiedEvents(asker.id);
    assert.deepEqual([byStranger?.address, byStranger?.device], ['', ''], 'no origin of a browser not signed in as the account');
    assert.ok(!(await askerBrowser.get('/settings/security')).text.includes(holder.address), 'the asker does not read the holder\'s address');

    const own = await linkMailedBy(askerBrowser);
    assert.equal((await askerBrowser.get(`/email/verify?token=${own.token}`)).status, 200);
    const events = await verifiedEvents(asker.id);
    assert.equal(events.length, 2);
    assert.ok(events.some((e) => e.address === askerBrowser.address), 'the account\'s own browser is written down');
  });
});
