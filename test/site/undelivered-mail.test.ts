/**
 * Mail its server refused (RFC 5321 4.2.1), as the member meets it, over real HTTP on each
 * database with a real SMTP server in the test process: the e-mail settings say, in the member's
 * language, that mail to the address could not be delivered, with the server's reply code and
 * never its words, and what to do; saving the address again sends a new mail, whose delivery
 * clears the message. A refusal for good counts at once, a day of refusals for now counts too.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import { AddressedVisitor, type PageResponse } from './visitor.js';

const PASSWORD = 'correct horse battery';

/** The words each language says it with, and that the server's reply code is named. */
const UNDELIVERED: Record<string, RegExp> = {
  en: /could not be delivered: its mail server did not accept it \(reply code (\d{3})\)/,
  'zh-CN': /的邮件未能送达：对方的邮件服务器没有接收（响应代码 (\d{3})）/,
  'zh-TW': /的郵件無法送達：對方的郵件伺服器沒有接收（回應代碼 (\d{3})）/,
};

forEachDatabase('mail its server refused, on the e-mail settings', (database) => {
  let t: TestAppWithSmtp;
  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  const address = () => `m${randomBytes(5).toString('hex')}@example.test`;

  async function member(): Promise<AddressedVisitor> {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const visitor = new AddressedVisitor(t.baseUrl);
    await visitor.signIn(user.username, PASSWORD);
    return visitor;
  }

  const settings = (visitor: AddressedVisitor, language = 'en'): Promise<PageResponse> =>
    visitor.request('/settings/email', { headers: { 'accept-language': language } });

  /** The reply code the page names for `to`, if it says mail to it was not delivered. */
  function undeliveredCode(page: PageResponse, to: string, language = 'en'): string | undefined {
    const alert = [...page.text.matchAll(/<p class="alert" role="alert">([^<]*)<\/p>/g)].map((m) => m[1]!).find((words) => words.includes(to));
    return alert === undefined ? undefined : UNDELIVERED[language]!.exec(alert)?.[1];
  }

  test('an address whose verification mail its server refused for good says so on the e-mail settings, in the member\'s language, with the reply code and never the server\'s words', async () => {
    const visitor = await member();
    const to = address();
    const words = `mailbox unavailable ${randomBytes(4).toString('hex')}`;
    t.smtp.refuse(to, 550, `5.1.1 ${words}`);
    assert.equal((await visitor.post('/settings/email', { email: to })).status, 200);
    assert.equal(undeliveredCode(await settings(visitor), to), undefined, 'nothing said while the mail waits');
    await deliverMail(t);
    for (const language of ['en', 'zh-CN', 'zh-TW']) {
      const page = await settings(visitor, language);
      assert.equal(page.status, 200);
      assert.equal(undeliveredCode(page, to, language), '550', language);
      assert.ok(!page.text.includes(words), 'the server\'s words are not shown');
    }
  });

  test('saving the address again sends a new mail, and its delivery clears the message', async () => {
    const visitor = await member();
    const to = address();
    t.smtp.refuse(to, 550, '5.1.1 no such user');
    await visitor.post('/settings/email', { email: to });
    await deliverMail(t);
    assert.equal(undeliveredCode(await settings(visitor), to), '550');
    t.smtp.accept(to);
    assert.equal((await visitor.post('/settings/email', { email: to })).status, 200, 'sent again');
    assert.equal(undeliveredCode(await settings(visitor), to), '550', 'said until the new mail is sent');
    await deliverMail(t);
    assert.equal(t.smtp.to(to).length, 1, 'the new mail arrived');
    assert.equal(undeliveredCode(await settings(visitor), to), undefined, 'cleared once it is sent');
  });

  test('a verified address whose notice its server refused says so, and saving it again sends it a new link that clears the message', async () => {
    const visitor = await member();
    const to = await verifiedAddress(t, visitor);
    t.smtp.refuse(to, 554, '5.7.1 rejected by policy');
    // A change of address mails the verified one a notice, which its server now refuses.
    const other = address();
    assert.equal((await visitor.post('/settings/email', { email: other })).status, 200);
    await deliverMail(t);
    assert.equal(undeliveredCode(await settings(visitor), to), '554');
    assert.equal(undeliveredCode(await settings(visitor), other), undefined, 'the other address got its mail');
    t.smtp.accept(to);
    const before = t.smtp.to(to).length;
    assert.equal((await visitor.post('/settings/email', { email: to })).status, 200);
    await deliverMail(t);
    assert.equal(t.smtp.to(to).length, before + 1, 'a new mail went to the verified address');
    assert.match(t.smtp.to(to).at(-1)!.text, /\/email\/verify\?token=/);
    assert.equal(undeliveredCode(await settings(visitor), to), undefined);
  });

  test('saving the verified address again for a new link drops the change waiting, and the page says so, as keeping the address does', async () => {
    const visitor = await member();
    const to = await verifiedAddress(t, visitor);
    t.smtp.refuse(to, 550, '5.1.1 no such user');
    const other = address();
    assert.equal((await visitor.post('/settings/email', { email: other })).status, 200);
    await deliverMail(t);
    assert.equal(undeliveredCode(await settings(visitor), to), '550');
    t.smtp.accept(to);
    const again = await visitor.post('/settings/email', { email: to });
    assert.equal(again.status, 200);
    assert.ok(!again.text.includes(`value="${other}"`), 'the change is no longer waiting');
    assert.match(again.text, new RegExp(`The change to ${other.replace('.', '\\.')} is cancelled`));
  });

  test('a verification mail refused for now (4yz) for a day and given up says so too, with its last reply code', async () => {
    const visitor = await member();
    const to = address();
    t.smtp.refuse(to, 451, '4.3.0 try again later');
    await visitor.post('/settings/email', { email: to });
    await deliverMail(t);
    assert.equal(undeliveredCode(await settings(visitor), to), undefined, 'not while it is tried again');
    for (let i = 0; i < 30; i += 1) {
      t.clock.advance(3600 * 1000);
      await deliverMail(t);
    }
    assert.equal(undeliveredCode(await settings(visitor), to), '451');
    t.smtp.accept(to);
  });
});
