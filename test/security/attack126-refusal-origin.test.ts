/**
 * attack126: the reader of a verification mail who refuses it ("Not you?", docs/threat-model.md
 * T65) is a stranger to the account that typed the address. The account's security log, which its
 * holder reads on /settings/security, once kept the refuser's network address and browser: whoever
 * typed someone's address learnt where its owner was the moment they said "not me". The line now
 * says what happened and keeps no origin, as a leak report's does.
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
const READER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

/** A browser of its own address and user agent: the mailbox holder's. */
class Reader extends AddressedVisitor {
  override request(path: string, init: RequestInit = {}) {
    return super.request(path, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), 'user-agent': READER_AGENT } });
  }
}

forEachDatabase('attack126: a refused verification link', (database) => {
  let t: TestAppWithSmtp;
  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  test('the refuser of a verification link is not shown to the account that asked: its security log keeps no address or browser of theirs', async () => {
    const asker = await createAccount(t.deps.stores, t.clock, { username: `a${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const askerBrowser = new AddressedVisitor(t.baseUrl, '10.1.2.3');
    await askerBrowser.signIn(asker.username, PASSWORD);
    const victim = `v${randomBytes(5).toString('hex')}@example.test`;
    assert.equal((await askerBrowser.post('/settings/email', { email: victim })).status, 200);
    await deliverMail(t);
    const token = /\/email\/not-mine\?token=([A-Za-z0-9_-]+)/.exec(t.smtp.to(victim)[0]?.text ?? '')?.[1];
    assert.ok(token, 'the mail holds a "Not you?" link');

    const reader = new Reader(t.baseUrl, '10.201.202.203');
    assert.equal((await reader.get(`/email/not-mine?token=${token}`)).status, 200);
    assert.equal((await reader.post('/email/not-mine', { token })).status, 200);

    const events = (await t.deps.stores.securityEvents.listForUser(asker.id, 0, 50)).items.filter((e) => e.kind === 'email.refused');
    assert.equal(events.length, 1, 'the refusal is recorded');
    assert.deepEqual([events[0]!.address, events[0]!.device], ['', ''], 'with no origin of the refuser');
    const page = await askerBrowser.get('/settings/security');
    assert.equal(page.status, 200);
    assert.ok(page.text.includes('refused by whoever reads the address'), 'the asker reads that it was refused');
    assert.ok(!page.text.includes(reader.address), 'not the refuser\'s network address');
    assert.ok(!page.text.includes('Firefox'), 'nor their browser');
  });
});
