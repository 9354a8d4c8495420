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
import { MAIL_MAX_AGE_MS } from '../../src/core/mail/outbox.js';
import { AUDIT_WINDOW_MS, runJanitor } from '../../src/janitor.js';
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
  const logLines: string[] = [];
  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' }, logLines });
  });
  after(async () => {
    await t.close();
  });

  const address = () => `m${randomBytes(5).toString('hex')}@example.test`;

  async function member(): Promise<AddressedVisitor> {
    return (await memberWithId()).visitor;
  }

  async function memberWithId(): Promise<{ visitor: AddressedVisitor; userId: number; username: string }> {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const visitor = new AddressedVisitor(t.baseUrl);
    await visitor.signIn(user.username, PASSWORD);
    return { visitor, userId: user.id, username: user.username };
  }

  /** A new address for the member signed in as `visitor`, whose verification mail its server refused (550 5.1.1) and which was given up. */
  async function refusedAddress(visitor: AddressedVisitor): Promise<string> {
    const to = address();
    t.smtp.refuse(to, 550, '5.1.1 no such user');
    await visitor.post('/settings/email', { email: to });
    await deliverMail(t);
    return to;
  }

  const outboxRows = (to: string) => t.deps.database.db.selectFrom('mail_outbox').selectAll().where('recipient', '=', to).orderBy('id').execute();

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
    const to = await refusedAddress(visitor);
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
    t.smtp.refuse(to, 554, '5.1.1 rejected');
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
    t.smtp.refuse(to, 451, '4.2.0 mailbox busy, try again later');
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

  test('a refusal is kept with the member\'s address: the e-mail settings still say so after the janitor deleted the outbox row, until a mail to the address is accepted', async () => {
    const { visitor, username } = await memberWithId();
    const to = await refusedAddress(visitor);
    t.clock.advance(AUDIT_WINDOW_MS + 86_400_000);
    await runJanitor(t.deps);
    assert.deepEqual(await outboxRows(to), [], 'the janitor deleted the row');
    await visitor.signIn(username, PASSWORD);
    assert.equal(undeliveredCode(await settings(visitor), to), '550', 'day 8: still said');
    t.smtp.accept(to);
    await visitor.post('/settings/email', { email: to });
    await deliverMail(t);
    assert.equal(undeliveredCode(await settings(visitor), to), undefined, 'a mail to it was accepted');
  });

  test('a refusal is forgotten when the member changes the address: saving it again later says nothing until a mail to it is refused again', async () => {
    const visitor = await member();
    const to = await refusedAddress(visitor);
    assert.equal(undeliveredCode(await settings(visitor), to), '550');
    await visitor.post('/settings/email', { email: address() });
    t.smtp.accept(to);
    await visitor.post('/settings/email', { email: to });
    assert.equal(undeliveredCode(await settings(visitor), to), undefined, 'changed since: nothing said while its new mail waits');
  });

  test('a refusal is forgotten when the address is verified', async () => {
    const { visitor, userId } = await memberWithId();
    const to = await refusedAddress(visitor);
    const key = (await t.deps.stores.memberEmails.find(userId))!.address.toLowerCase();
    assert.equal(await t.deps.stores.memberEmails.markVerified(userId, key, t.clock.now()), true);
    assert.equal(undeliveredCode(await settings(visitor), to), undefined);
    t.smtp.accept(to);
  });

  /** Ends any trouble of the relay a test before left: a mail it takes. */
  async function relayWorking(): Promise<void> {
    const to = address();
    await t.deps.stores.mailOutbox.enqueue({ to, userId: null, kind: 'test', subject: 'ok', text: 'ok', html: null, language: 'en' }, t.clock.now());
    await deliverMail(t);
    assert.equal(t.smtp.to(to).length, 1);
  }

  /** Sends or gives up every mail a test before left waiting: none is taken by the relay during the next test's day. */
  async function nothingWaiting(): Promise<void> {
    t.clock.advance(MAIL_MAX_AGE_MS);
    while ((await deliverMail(t)).claimed > 0);
  }

  /** Sends hour after hour until the mails to `addresses` are given up. */
  async function untilGivenUp(addresses: string[]): Promise<void> {
    for (let i = 0; i < 30 && (await Promise.all(addresses.map(outboxRows))).some(([row]) => row!.abandoned_at === null); i += 1) {
      t.clock.advance(3600 * 1000);
      await deliverMail(t);
    }
    for (const to of addresses) assert.ok((await outboxRows(to))[0]!.abandoned_at !== null, 'given up after a day');
  }

  test('a relay that refuses the site at RCPT (5.7.1 relay access denied, 5.7.x, 5.3.x, 5.5.x) is the site\'s problem: the member is not told, the mail is tried again, and the log warns without the address or the server\'s words', async () => {
    for (const [code, enhanced] of [[554, '5.7.1'], [550, '5.7.26'], [550, '5.3.5'], [501, '5.5.4']] as const) {
      await relayWorking();
      const visitor = await member();
      const to = address();
      const words = `<${to}>: Relay access denied ${randomBytes(4).toString('hex')}`;
      t.smtp.refuse(to, code, `${enhanced} ${words}`);
      await visitor.post('/settings/email', { email: to });
      const lines = logLines.length;
      await deliverMail(t);
      const [row] = await outboxRows(to);
      assert.deepEqual([row!.abandoned_at, row!.attempts], [null, 1], `${enhanced}: tried again`);
      const warned = logLines.slice(lines).filter((l) => l.includes('"the site\'s mail relay fails the site (SMTP_URL, MAIL_FROM, its rules); mail waits and is tried again"'));
      assert.equal(warned.length, 1, `${enhanced}: a warning for the operator`);
      assert.match(warned[0]!, new RegExp(`"reply_code":${code},"enhanced_code":"${enhanced.replaceAll('.', '\\.')}"`));
      for (const secret of [to, words]) assert.ok(!logLines.join('\n').includes(secret), `the log holds ${secret}`);
      for (let i = 0; i < 30 && (await outboxRows(to))[0]!.abandoned_at === null; i += 1) {
        t.clock.advance(3600 * 1000);
        await deliverMail(t);
      }
      assert.ok((await outboxRows(to))[0]!.abandoned_at !== null, `${enhanced}: given up after a day`);
      assert.equal(undeliveredCode(await settings(visitor), to), undefined, `${enhanced}: the member is not told their address was refused`);
      t.smtp.accept(to);
    }
  });

  test('a refusal of the site\'s sender or policy at DATA (550 5.7.60 and 5.7.1 not allowed to send as MAIL_FROM, 5.7.26 DMARC) is read as at MAIL FROM: the site\'s, tried again, so the mail arrives once the setting is fixed within the day, and the member is never told', async () => {
    for (const [code, enhanced] of [[550, '5.7.60'], [550, '5.7.1'], [550, '5.7.26']] as const) {
      await relayWorking();
      const visitor = await member();
      const to = address();
      t.smtp.refuse(to, code, `${enhanced} Client does not have permissions to send as this sender`, 'data');
      await visitor.post('/settings/email', { email: to });
      const lines = logLines.length;
      await deliverMail(t);
      const [row] = await outboxRows(to);
      assert.deepEqual([row!.abandoned_at, row!.attempts], [null, 1], `${enhanced}: tried again`);
      const warned = logLines.slice(lines).filter((l) => l.includes('"the site\'s mail relay fails the site (SMTP_URL, MAIL_FROM, its rules); mail waits and is tried again"'));
      assert.equal(warned.length, 1, `${enhanced}: a warning for the operator`);
      assert.match(warned[0]!, new RegExp(`"reply_code":${code},"enhanced_code":"${enhanced.replaceAll('.', '\\.')}"`));
      assert.equal(undeliveredCode(await settings(visitor), to), undefined, `${enhanced}: the member is not told their address was refused`);
      t.smtp.accept(to);
      t.clock.advance(3600 * 1000);
      await deliverMail(t);
      assert.equal(t.smtp.to(to).length, 1, `${enhanced}: the mail arrived once the relay took it`);
    }
  });

  test('a relay\'s own enhanced code with a detail no registry lists (554 5.2.252 SendAsDenied: the relay will not send as MAIL_FROM) is the site\'s, at DATA as at RCPT: tried again, and the member is not told their address was refused', async () => {
    for (const step of ['data', 'rcpt'] as const) {
      const visitor = await member();
      const to = address();
      t.smtp.refuse(to, 554, '5.2.252 SendAsDenied; site@example.test not allowed to send as site@example.test', step);
      await visitor.post('/settings/email', { email: to });
      await deliverMail(t);
      const [row] = await outboxRows(to);
      assert.deepEqual([row!.abandoned_at, row!.attempts], [null, 1], `${step}: tried again`);
      assert.equal(undeliveredCode(await settings(visitor), to), undefined, `${step}: the member is not told`);
      t.smtp.accept(to);
    }
  });

  test('a bare 554 at DATA (no enhanced code) is the message\'s or the site\'s, not the member\'s address: given up at once, and the member is not told', async () => {
    const visitor = await member();
    const to = address();
    t.smtp.refuse(to, 554, 'Transaction failed', 'data');
    await visitor.post('/settings/email', { email: to });
    await deliverMail(t);
    const [row] = await outboxRows(to);
    assert.ok(row!.abandoned_at !== null, 'given up at once');
    assert.deepEqual([row!.attempts, row!.reply_code], [1, null]);
    assert.equal(undeliveredCode(await settings(visitor), to), undefined);
    t.smtp.accept(to);
  });

  test('a bare permanent refusal at RCPT (no enhanced code) is the address\'s only once the relay refuses the same mail so again after taking another mail: then given up and the member told, never at the first refusal', async () => {
    const visitor = await member();
    const to = address();
    t.smtp.refuse(to, 550, 'mailbox unavailable');
    await visitor.post('/settings/email', { email: to });
    await deliverMail(t);
    assert.deepEqual([(await outboxRows(to))[0]!.abandoned_at, (await outboxRows(to))[0]!.attempts], [null, 1], 'tried again');
    assert.equal(undeliveredCode(await settings(visitor), to), undefined, 'not told at the first refusal');
    await relayWorking();
    t.clock.advance(10 * 60_000);
    await deliverMail(t);
    const [row] = await outboxRows(to);
    assert.ok(row!.abandoned_at !== null, 'given up at the second refusal');
    assert.deepEqual([row!.attempts, row!.reply_code], [2, 550]);
    assert.equal(undeliveredCode(await settings(visitor), to), '550');
    t.smtp.accept(to);
  });

  test('a relay that refuses every recipient alike at RCPT, by a bare 554 (its own policy: relaying denied) or by 550 5.1.0 ("other address status", which Postfix answers for an unlisted MAIL_FROM, checked at RCPT by default), and takes no other mail refuses no member\'s address: each mail is tried again for a day, then given up, and no member is told', async () => {
    for (const [code, words] of [[554, 'Relaying denied'], [550, '5.1.0 <site@example.test>: Sender address rejected: User unknown in virtual mailbox table']] as const) {
      await nothingWaiting();
      const members = await Promise.all([member(), member()]);
      const addresses = members.map(() => address());
      for (const [i, visitor] of members.entries()) {
        t.smtp.refuse(addresses[i]!, code, words);
        await visitor.post('/settings/email', { email: addresses[i]! });
      }
      await deliverMail(t);
      for (const to of addresses) assert.equal((await outboxRows(to))[0]!.abandoned_at, null, `${code}: not given up at the first refusal`);
      await untilGivenUp(addresses);
      for (const [i, visitor] of members.entries()) {
        const [row] = await outboxRows(addresses[i]!);
        assert.ok(row!.attempts > 2, `${code}: tried again`);
        assert.equal(row!.reply_code, null);
        assert.equal(undeliveredCode(await settings(visitor), addresses[i]!), undefined, `${code}: the member is not told`);
        t.smtp.accept(addresses[i]!);
      }
    }
  });

  test('a full mailbox (554 5.2.2 QuotaExceeded at DATA, which a relay answers for the site\'s own sending quota too) is never given up at once: tried again for a day, and given up without telling the member while the relay took no other mail', async () => {
    await nothingWaiting();
    const visitor = await member();
    const to = address();
    t.smtp.refuse(to, 554, '5.2.2 mailbox full; STOREDRV.Submission.Exception:QuotaExceededException', 'data');
    await visitor.post('/settings/email', { email: to });
    await deliverMail(t);
    assert.deepEqual([(await outboxRows(to))[0]!.abandoned_at, (await outboxRows(to))[0]!.attempts], [null, 1], 'tried again');
    await untilGivenUp([to]);
    const [row] = await outboxRows(to);
    assert.ok(row!.attempts > 2, 'tried again');
    assert.equal(row!.reply_code, null);
    assert.equal(undeliveredCode(await settings(visitor), to), undefined, 'the member is not told');
    t.smtp.accept(to);
  });

  test('an enhanced code whose class disagrees with the basic code (554 4.7.1, 550 4.2.2; RFC 3463 section 2) is ambiguous, read as for now: the mail is tried again, and the address is not refused for good', async () => {
    for (const [code, enhanced] of [[554, '4.7.1'], [550, '4.2.2']] as const) {
      const visitor = await member();
      const to = address();
      t.smtp.refuse(to, code, `${enhanced} try again later`);
      await visitor.post('/settings/email', { email: to });
      await deliverMail(t);
      const [row] = await outboxRows(to);
      assert.deepEqual([row!.abandoned_at, row!.attempts, row!.reply_code], [null, 1, null], `${code} ${enhanced}: tried again`);
      assert.equal(undeliveredCode(await settings(visitor), to), undefined, `${code} ${enhanced}: the member is not told`);
      t.smtp.accept(to);
    }
  });

  test('a relay with no enhanced codes that refuses the site at RCPT by a basic code about the syntax, the connection or the sign-in (530, 503, 421) is the site\'s problem: the mail is tried again, and the member is not told their address was refused', async () => {
    for (const code of [530, 503, 421]) {
      const visitor = await member();
      const to = address();
      t.smtp.refuse(to, code, 'Authentication required');
      await visitor.post('/settings/email', { email: to });
      await deliverMail(t);
      assert.deepEqual([(await outboxRows(to))[0]!.abandoned_at, (await outboxRows(to))[0]!.attempts], [null, 1], `${code}: tried again`);
      for (let i = 0; i < 30 && (await outboxRows(to))[0]!.abandoned_at === null; i += 1) {
        t.clock.advance(3600 * 1000);
        await deliverMail(t);
      }
      assert.ok((await outboxRows(to))[0]!.abandoned_at !== null, `${code}: given up after a day`);
      assert.equal(undeliveredCode(await settings(visitor), to), undefined, `${code}: the member is not told their address was refused`);
      t.smtp.accept(to);
    }
  });

  test('a message too large (552 at DATA, or 5.3.4) is given up at once, and the member is not told their address was refused', async () => {
    for (const [code, text] of [[552, 'message exceeds fixed maximum message size'], [554, '5.3.4 message too big for system']] as const) {
      const visitor = await member();
      const to = address();
      t.smtp.refuse(to, code, text, 'data');
      await visitor.post('/settings/email', { email: to });
      await deliverMail(t);
      const [row] = await outboxRows(to);
      assert.ok(row!.abandoned_at !== null, `${code} ${text}: given up at once`);
      assert.deepEqual([row!.attempts, row!.reply_code], [1, null]);
      assert.equal(undeliveredCode(await settings(visitor), to), undefined);
      t.smtp.accept(to);
    }
  });

  test('an address\'s key is folded in application code, alike on every database: a refusal of mail to ÄRGER@… is kept when the member saves ärger@… again', async () => {
    const visitor = await member();
    const local = `ärger${randomBytes(4).toString('hex')}`;
    const upper = `${local.toUpperCase()}@example.test`;
    t.smtp.refuse(upper, 550, '5.1.1 no such user');
    await visitor.post('/settings/email', { email: upper });
    await deliverMail(t);
    assert.equal(undeliveredCode(await settings(visitor), upper), '550');
    const lower = `${local}@example.test`;
    t.smtp.refuse(lower, 550, '5.1.1 no such user');
    assert.equal((await visitor.post('/settings/email', { email: lower })).status, 200);
    assert.equal(undeliveredCode(await settings(visitor), lower), '550', 'the same address: still said while its new mail waits');
    t.smtp.accept(upper);
    t.smtp.accept(lower);
  });
});
