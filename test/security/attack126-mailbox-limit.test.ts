/**
 * attack126: the verification mails' per-address limit (`VERIFY_MAILS_PER_ADDRESS`, T65) counted
 * by the address as typed, lower-cased. One mailbox has many spellings: a subaddress after `+`
 * (RFC 5233), a domain with a final dot, Gmail's dots. One account, within its own hourly limit,
 * mailed a stranger's inbox three times a spelling, as many spellings as it liked. The limit now
 * counts the mailbox, and a "Not you?" pass is the mailbox's: its holder, who followed the link of
 * any spelling, may save any other.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { VERIFY_MAILS_PER_ADDRESS } from '../../src/core/accounts/email.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { fullWidth } from '../support/full-width.js';
import { deliverMail } from '../support/member-mail.js';
import { AddressedVisitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery';

forEachDatabase('attack126: the verification mails of one mailbox', (database) => {
  let t: TestAppWithSmtp;
  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  async function member(): Promise<AddressedVisitor> {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const visitor = new AddressedVisitor(t.baseUrl);
    await visitor.signIn(user.username, PASSWORD);
    return visitor;
  }

  test('the per-address limit of verification mails counts the mailbox, whatever subaddress, case, final dot or Gmail dots spell it', async () => {
    assert.equal(VERIFY_MAILS_PER_ADDRESS, 3, 'the spellings below are one more than the limit');
    const name = `v${randomBytes(5).toString('hex')}`;
    const plain = await member();
    for (const spelling of [`${name}+1@example.test`, `${name.toUpperCase()}+2@EXAMPLE.test`, `${name}@example.test.`]) {
      assert.equal((await plain.post('/settings/email', { email: spelling })).status, 200, spelling);
    }
    assert.equal((await plain.post('/settings/email', { email: `${name}+4@example.test` })).status, 429, 'a fourth spelling of the mailbox is one mail too many');

    const gmail = await member();
    for (const spelling of [`${name.slice(0, 2)}.${name.slice(2)}@gmail.com`, `${name.slice(0, 4)}.${name.slice(4)}@gmail.com`, `${name}+x@googlemail.com`]) {
      assert.equal((await gmail.post('/settings/email', { email: spelling })).status, 200, spelling);
    }
    assert.equal((await gmail.post('/settings/email', { email: `${name}@gmail.com` })).status, 429, 'Gmail reads no dots and one domain for two');
  });

  test('the per-address limit counts a spelling in full-width characters or with a Chinese full stop as the mailbox it reads as', async () => {
    const name = `f${randomBytes(5).toString('hex')}`;
    const visitor = await member();
    for (const spelling of [`${name}@example.test`, `${name}@\uff45xample.test`, fullWidth(`${name}@example.test`)]) {
      assert.equal((await visitor.post('/settings/email', { email: spelling })).status, 200, spelling);
    }
    assert.equal((await visitor.post('/settings/email', { email: `${name}@example\u3002test` })).status, 429, 'a fourth spelling of the mailbox is one mail too many');
  });

  test('a "Not you?" pass is the mailbox\'s: a link mailed to one spelling lets its browser save another past the limit', async () => {
    const name = `p${randomBytes(5).toString('hex')}`;
    const tagged = `${name}+shop@example.test`;
    const other = await member();
    assert.equal((await other.post('/settings/email', { email: tagged })).status, 200);
    for (let i = 0; i < VERIFY_MAILS_PER_ADDRESS; i += 1) await other.post('/settings/email', { email: `${name}@example.test` });
    await deliverMail(t);
    const token = /\/email\/not-mine\?token=([A-Za-z0-9_-]+)/.exec(t.smtp.to(tagged)[0]?.text ?? '')?.[1];
    assert.ok(token, 'the mail holds a "Not you?" link');

    const owner = await member();
    assert.equal((await owner.post('/settings/email', { email: `${name}@example.test` })).status, 429, 'the mailbox\'s day is used up');
    assert.equal((await owner.post('/email/not-mine', { token })).status, 200);
    assert.equal((await owner.post('/settings/email', { email: `${name}@example.test` })).status, 200, 'the browser that refused a mail of the mailbox saves it');
    assert.equal((await (await member()).post('/settings/email', { email: `${name}@example.test` })).status, 429, 'no other browser');
  });

  test('the per-address limit counts a Unicode domain and its punycode form as one mailbox', async () => {
    const name = `i${randomBytes(5).toString('hex')}`;
    const visitor = await member();
    for (const spelling of [`${name}@例子.test`, `${name}@xn--fsqu00a.test`, `${name}+1@例子.test`]) {
      assert.equal((await visitor.post('/settings/email', { email: spelling })).status, 200, spelling);
    }
    assert.equal((await visitor.post('/settings/email', { email: `${name}@XN--FSQU00A.test` })).status, 429, 'a fourth spelling of the mailbox is one mail too many');
  });

  test('the per-address limit counts a domain by IDNA only as mail reaches it: a spelling IDNA maps (a % escape, a variation selector) mails another domain, and uses up nothing of the mailbox it reads as', async () => {
    const name = `e${randomBytes(5).toString('hex')}`;
    const mailbox = `${name}@example.test`;
    const stranger = await member();
    for (const spelling of [`${name}@ex%61mple.test`, `${name}@exampl%65.test`, `${name}@exa\ufe0fmple.test`]) {
      assert.equal((await stranger.post('/settings/email', { email: spelling })).status, 200, spelling);
    }
    await deliverMail(t);
    assert.equal(t.smtp.to(mailbox).length, 0, 'no mail, so no "Not you?" link, reached the mailbox');
    assert.equal((await (await member()).post('/settings/email', { email: mailbox })).status, 200, 'its owner adds it');
  });
});
