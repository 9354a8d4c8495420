/**
 * The limits of verification mails as a member meets them on `/settings/email` (INTERFACE section
 * 12; docs/site.md, "Verification mails: limits, and 'Not you?'"): a save one limit refuses mails
 * nothing and uses up no other limit.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import type { User } from '../../src/core/accounts/ports.js';
import { VERIFY_MAILS_PER_ACCOUNT, VERIFY_MAILS_PER_ADDRESS } from '../../src/core/accounts/email.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { MAIL_FIRST_RETRY_MS } from '../../src/core/mail/outbox.js';
import { formatSiteTime, machineTime } from '../../src/core/site-time.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail } from '../support/member-mail.js';
import { AddressedVisitor, Visitor } from './visitor.js';

const PASSWORD = 'correct horse battery';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

forEachDatabase('the limits of verification mails', (database) => {
  let t: TestAppWithSmtp;
  before(async () => { t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } }); });
  after(() => t.close());

  const address = () => `m${randomBytes(5).toString('hex')}@example.test`;

  async function member(): Promise<{ user: User; visitor: AddressedVisitor }> {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const visitor = new AddressedVisitor(t.baseUrl);
    await visitor.signIn(user.username, PASSWORD);
    return { user, visitor };
  }

  /** Moves the clock to `msBeforeEnd` before the end of a day's window (they start at UTC midnights). */
  const beforeEndOfDay = (msBeforeEnd: number) => t.clock.advance(2 * DAY_MS - (t.clock.now() % DAY_MS) - msBeforeEnd);

  /** Moves the clock to the start of the next hour, so an hourly window holds the whole test. */
  const startOfAnHour = () => t.clock.advance(HOUR_MS - (t.clock.now() % HOUR_MS));

  /**
   * Saves `email` `saves` times, each save answered 200 and its mail tried at once, while the
   * address's server refuses its mail as `refusal` says: by default a bare 554 at DATA, which the
   * outbox gives up at once for the site's own reasons (its message or its relay, not the address).
   * The address is accepted again after.
   */
  function saveWhileRefused(visitor: AddressedVisitor, email: string, saves: number, refusal: Parameters<typeof t.smtp.refuse> = [email, 554, 'Transaction failed', 'data']): Promise<void> {
    return saveWhileRelay(() => t.smtp.refuse(...refusal), visitor, email, saves);
  }

  /** Saves `email` `saves` times, each save answered 200 and its mail tried at once, while the relay answers as `relay` set it to; the address is accepted again after. */
  async function saveWhileRelay(relay: () => void, visitor: AddressedVisitor, email: string, saves: number): Promise<void> {
    relay();
    try {
      for (let i = 0; i < saves; i += 1) {
        assert.equal((await visitor.post('/settings/email', { email })).status, 200);
        await deliverMail(t);
      }
    } finally {
      t.smtp.accept(email);
    }
  }

  test('an address not yet verified is offered a new link by saving it again, with the number one address may be mailed a day', async () => {
    const { visitor } = await member();
    const email = address();
    const saved = await visitor.post('/settings/email', { email });
    assert.match(saved.text.replace(/\s+/g, ' '), new RegExp(`Save it again to get a new link, at most ${VERIFY_MAILS_PER_ADDRESS} a day to one address\\.`));
  });

  test('a save the address\'s daily limit refuses is not counted against the account\'s hourly limit: the member can still save another address', async () => {
    startOfAnHour();
    const { visitor } = await member();
    const email = address();
    for (let i = 0; i < VERIFY_MAILS_PER_ADDRESS; i += 1) assert.equal((await visitor.post('/settings/email', { email })).status, 200, `save ${i + 1}`);
    // Saved again, as the page offers, until the account's own limit would be reached if these counted.
    for (let i = VERIFY_MAILS_PER_ADDRESS; i < VERIFY_MAILS_PER_ACCOUNT; i += 1) assert.equal((await visitor.post('/settings/email', { email })).status, 429, `save ${i + 1}`);
    const other = address();
    const saved = await visitor.post('/settings/email', { email: other });
    assert.equal(saved.status, 200, 'the refused saves mailed nothing and used up none of the account\'s mails');
    await deliverMail(t);
    assert.equal(t.smtp.to(email).length, VERIFY_MAILS_PER_ADDRESS);
    assert.equal(t.smtp.to(other).length, 1);
    // The account's limit itself still holds: its mails are the ones sent.
    for (let i = VERIFY_MAILS_PER_ADDRESS + 1; i < VERIFY_MAILS_PER_ACCOUNT; i += 1) assert.equal((await visitor.post('/settings/email', { email: address() })).status, 200);
    assert.equal((await visitor.post('/settings/email', { email: address() })).status, 429, 'the sixth mail of the hour');
  });

  test('a save the account\'s hourly limit refuses is not counted either: the limit counts the mails sent, so racing saves cannot leave it full with mails to spare', async () => {
    startOfAnHour();
    const { user, visitor } = await member();
    for (let i = 0; i < VERIFY_MAILS_PER_ACCOUNT; i += 1) assert.equal((await visitor.post('/settings/email', { email: address() })).status, 200);
    assert.equal((await visitor.post('/settings/email', { email: address() })).status, 429, 'the sixth mail of the hour');
    const counter = await t.deps.limiter.peek(`verify-mail:account:${user.id}`, VERIFY_MAILS_PER_ACCOUNT, 3600, t.clock.now());
    assert.equal(counter.remaining, 0);
    assert.ok(counter.allowed, 'counted five, the mails sent: the refused sixth was taken back');
  });

  test('a save the address\'s daily limit refuses does not send the member to a link whose mail the address\'s server refused', async () => {
    const { visitor } = await member();
    const email = address();
    await saveWhileRefused(visitor, email, VERIFY_MAILS_PER_ADDRESS, [email, 550, '5.1.1 no such user']);
    const refused = await visitor.post('/settings/email', { email });
    assert.equal(refused.status, 429);
    assert.match(refused.text, /could not be delivered/, 'the page says the mail did not arrive');
    assert.doesNotMatch(refused.text, /id="last-link"/, 'and does not say to open it');
  });

  test('a save the address\'s daily limit refuses says the wait in hours and minutes, in the page\'s language, not "601 minutes"', async () => {
    beforeEndOfDay(36_060_000);
    const { visitor } = await member();
    visitor.cookies.set('lang', 'zh-CN');
    const email = address();
    for (let i = 0; i < VERIFY_MAILS_PER_ADDRESS; i += 1) assert.equal((await visitor.post('/settings/email', { email })).status, 200);
    const refused = await visitor.post('/settings/email', { email });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '36060');
    assert.match(refused.text, /请求过于频繁。请在 10 小时 1 分钟后重试。/);
    assert.doesNotMatch(refused.text, /601 分钟/);
    visitor.cookies.set('lang', 'en');
    assert.match((await visitor.post('/settings/email', { email })).text, /Too many requests\. Try again in 10 hours and 1 minute\./);
  });

  test('a member whose own saves used up the address\'s mails is told the last link mailed still works and until when, not sent to "Not you?", which would take the address off their account', async () => {
    const { user, visitor } = await member();
    const email = address();
    for (let i = 0; i < VERIFY_MAILS_PER_ADDRESS; i += 1) assert.equal((await visitor.post('/settings/email', { email })).status, 200);
    await deliverMail(t);
    const refused = await visitor.post('/settings/email', { email });
    assert.equal(refused.status, 429);
    const link = await t.deps.database.db.selectFrom('email_links').select(['expires_at', 'token_hash']).where('user_id', '=', user.id).where('used_at', 'is', null).executeTakeFirstOrThrow();
    const ends = Number(link.expires_at);
    const notice = /<p class="notice" id="last-link">([^]*?)<\/p>/.exec(refused.text)?.[1]?.replace(/<[^>]*>/g, '');
    assert.equal(notice, `The last link we mailed to ${email} still works, until ${formatSiteTime(ends, 'Asia/Shanghai')}: open that mail and follow its link to verify the address; you need no new one. Its “Not you?” link is for someone who did not ask, and would take the address off your account.`);
    assert.ok(refused.text.includes(`<time datetime="${machineTime(ends)}">`), 'the end as a time, with its instant');
    assert.doesNotMatch(refused.text, /follow its (&quot;|")Not you\?(&quot;|") link: then this address can be saved again/, 'no way out that takes the address off the account');
    visitor.cookies.set('lang', 'zh-CN');
    assert.match((await visitor.post('/settings/email', { email })).text, /我们最近发送到 \S+ 的验证链接仍然有效，有效期至 <time/);
    // What the page says is so: the link of the last mail (the three may arrive in any order) verifies the address.
    const tokens = t.smtp.to(email).map((mail) => /\/email\/verify\?token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] ?? '');
    assert.equal(tokens.length, VERIFY_MAILS_PER_ADDRESS);
    const last = tokens.find((token) => hashSecret(token) === link.token_hash);
    assert.ok(last, 'the link that still works was mailed');
    assert.equal((await new Visitor(t.baseUrl).get(`/email/verify?token=${last}`)).status, 200);
    assert.ok((await t.deps.stores.memberEmails.find(user.id))?.verifiedAt, 'verified by the link the page said still works');
  });

  /** The notice about the last link on a refused save's page, as read. */
  const lastLinkNotice = (page: string) => /<p class="notice" id="last-link">([^]*?)<\/p>/.exec(page)?.[1]?.replace(/<[^>]*>/g, '');

  test('the last link is said to still work only once its mail was handed to the mail server: while it waits in the outbox (not tried yet, or the relay down) the page says it has not gone out yet, and sends no one to "Not you?"', async () => {
    beforeEndOfDay(12 * HOUR_MS);
    const { visitor } = await member();
    const email = address();
    for (let i = 0; i < VERIFY_MAILS_PER_ADDRESS; i += 1) assert.equal((await visitor.post('/settings/email', { email })).status, 200);
    const waiting = `The mail with the last link for ${email} has not gone out yet: it is waiting to be sent. When it arrives, follow its link to verify the address; you need no new one.`;
    const queued = await visitor.post('/settings/email', { email });
    assert.equal(queued.status, 429);
    assert.equal(lastLinkNotice(queued.text), waiting, 'not tried yet');
    assert.doesNotMatch(queued.text, /still works/);
    assert.doesNotMatch(queued.text, /follow its (&quot;|")Not you\?(&quot;|") link: then this address can be saved again/, 'no way out that takes the address off the account');
    for (const [language, words] of [['zh-CN', /发往 \S+ 的最新验证邮件尚未发出/], ['zh-TW', /寄往 \S+ 的最新驗證郵件尚未寄出/]] as const) {
      visitor.cookies.set('lang', language);
      assert.match(lastLinkNotice((await visitor.post('/settings/email', { email })).text) ?? '', words, language);
    }
    visitor.cookies.set('lang', 'en');
    await t.smtp.stop();
    try {
      await deliverMail(t);
      const relayDown = await visitor.post('/settings/email', { email });
      assert.equal(lastLinkNotice(relayDown.text), waiting, 'tried while the relay was down, and waiting to be tried again');
    } finally {
      await t.smtp.listen();
    }
    // Past the first retry's wait (at most MAIL_FIRST_RETRY_MS), within the sign-in's recent minutes.
    t.clock.advance(MAIL_FIRST_RETRY_MS);
    await deliverMail(t);
    assert.equal(t.smtp.to(email).length, VERIFY_MAILS_PER_ADDRESS, 'sent once the relay was back');
    const back = await visitor.post('/settings/email', { email });
    assert.equal(back.status, 429);
    assert.match(lastLinkNotice(back.text) ?? '', /^The last link we mailed to \S+ still works, until /, 'and then said to still work');
  });

  test('a last mail the outbox gave up for the site\'s own reasons (a bare 554 at DATA: its message or its relay, not the address) is said to be lost, with no link coming, and no one is sent to the "Not you?" link of a mail that never arrived', async () => {
    const { visitor } = await member();
    const email = address();
    await saveWhileRefused(visitor, email, VERIFY_MAILS_PER_ADDRESS);
    const [last] = await t.deps.database.db.selectFrom('mail_outbox').select(['abandoned_at', 'reply_code']).where('recipient', '=', email).orderBy('id', 'desc').limit(1).execute();
    assert.ok(last?.abandoned_at !== null && last?.reply_code === null, 'given up at once, no refusal of the address kept');
    const refused = await visitor.post('/settings/email', { email });
    assert.equal(refused.status, 429);
    assert.equal(lastLinkNotice(refused.text), `The last mail with a link for ${email} could not be sent: no link is on its way. Save the address again once the wait above is over, and a new link will be mailed.`);
    assert.doesNotMatch(refused.text, /still works|waiting to be sent/, 'no link said to work or to be on its way');
    assert.doesNotMatch(refused.text, /Not you\?/, 'no way out through a mail that never arrived');
    assert.doesNotMatch(refused.text, /could not be delivered/, 'nor that the address refused it: the site gave it up');
    for (const [language, words] of [['zh-CN', /发往 \S+ 的最新验证邮件未能发出，不会有链接送达。/], ['zh-TW', /寄往 \S+ 的最新驗證郵件未能寄出，不會有連結送達。/]] as const) {
      visitor.cookies.set('lang', language);
      assert.match(lastLinkNotice((await visitor.post('/settings/email', { email })).text) ?? '', words, language);
    }
  });
  /** The lines above the form that say where the address stands, as read. */
  const statusLines = (page: string) => [...page.matchAll(/<p (?:id="email-(?:status|pending)"|class="alert" role="alert")>([^]*?)<\/p>/g)].map((m) => m[1]!.replace(/<[^>]*>/g, '')).join(' ');

  test('a save a limit refused says one thing: the lines above the form neither tell the member to open a link that may not be coming nor to save the address again, which was just refused', async () => {
    const { visitor } = await member();
    const email = address();
    await saveWhileRefused(visitor, email, VERIFY_MAILS_PER_ADDRESS);
    const refused = await visitor.post('/settings/email', { email });
    assert.equal(refused.status, 429);
    assert.match(lastLinkNotice(refused.text) ?? '', /could not be sent/);
    assert.equal(statusLines(refused.text), `${email} is not verified yet.`);
    assert.doesNotMatch(refused.text, /open the link we mailed|Save it again/);
    for (const [language, words, not] of [['zh-CN', `${email} 尚未验证。`, /请打开我们发送|再次保存/], ['zh-TW', `${email} 尚未驗證。`, /請開啟我們寄到|再次儲存/]] as const) {
      visitor.cookies.set('lang', language);
      const lines = statusLines((await visitor.post('/settings/email', { email })).text);
      assert.equal(lines, words, language);
      assert.doesNotMatch(lines, not, language);
    }
    visitor.cookies.set('lang', 'en');
    // The page without a refusal still offers a new link by saving again.
    assert.match(statusLines((await visitor.get('/settings/email')).text), /Save it again to get a new link/);
  });

  /** A member whose first address, `first`, is verified by its link. */
  async function memberWithVerifiedAddress(): Promise<{ visitor: AddressedVisitor; first: string }> {
    const { visitor } = await member();
    const first = address();
    assert.equal((await visitor.post('/settings/email', { email: first })).status, 200);
    await deliverMail(t);
    const token = /\/email\/verify\?token=([A-Za-z0-9_-]+)/.exec(t.smtp.to(first)[0]?.text ?? '')?.[1];
    assert.equal((await visitor.get(`/email/verify?token=${token}`)).status, 200, 'the first address verified');
    return { visitor, first };
  }

  test('a change waiting for its link, refused by a limit, is said to wait, with no "open the link we mailed there"; an address whose server refused its mail is not told to save it again either', async () => {
    const { visitor, first } = await memberWithVerifiedAddress();
    const next = address();
    await saveWhileRefused(visitor, next, VERIFY_MAILS_PER_ADDRESS, [next, 550, '5.1.1 no such user']);
    const refused = await visitor.post('/settings/email', { email: next });
    assert.equal(refused.status, 429);
    const lines = statusLines(refused.text);
    assert.match(lines, new RegExp(`You asked to change it to ${next.replace('.', '\\.')}, which is not verified yet\\. Until then ${first.replace('.', '\\.')} stays your address`));
    assert.match(lines, /could not be delivered/);
    assert.doesNotMatch(lines, /open the link we mailed|Save it again/);
    visitor.cookies.set('lang', 'zh-TW');
    assert.match(statusLines((await visitor.post('/settings/email', { email: next })).text), /你已申請改為 \S+，該地址尚未驗證。/);
  });
  test('a verification mail still waiting after the relay failed it is superseded by the next link\'s mail, and gives the mailbox\'s day its count back: the member receives one mail, whose link works, and the outage used up none of their saves', async () => {
    beforeEndOfDay(12 * HOUR_MS);
    const { user, visitor } = await member();
    const email = address();
    const saves = VERIFY_MAILS_PER_ADDRESS + 1;
    await t.smtp.stop();
    try {
      for (let i = 0; i < saves; i += 1) {
        assert.equal((await visitor.post('/settings/email', { email })).status, 200, `save ${i + 1}, the relay down`);
        if (i < saves - 1) await deliverMail(t);
      }
    } finally {
      await t.smtp.listen();
    }
    const rows = await t.deps.database.db.selectFrom('mail_outbox').select(['abandoned_at', 'last_error', 'body_text']).where('user_id', '=', user.id).where('kind', '=', 'verifyEmail').orderBy('id').execute();
    assert.equal(rows.length, saves);
    for (const row of rows.slice(0, -1)) {
      assert.notEqual(row.abandoned_at, null, 'each mail that failed is given up once a newer link is mailed');
      assert.equal(row.last_error, 'superseded by a newer mail');
      assert.equal(row.body_text, '', 'and keeps no dead link');
    }
    const counter = await t.deps.limiter.peek(`verify-mail:address:${hashSecret(email)}`, VERIFY_MAILS_PER_ADDRESS, 86_400, t.clock.now());
    assert.equal(counter.remaining, VERIFY_MAILS_PER_ADDRESS - 1, 'the mailbox counts the one mail that may reach it');
    await deliverMail(t);
    const mails = t.smtp.to(email);
    assert.equal(mails.length, 1, 'one mail, not one per save');
    const token = /\/email\/verify\?token=([A-Za-z0-9_-]+)/.exec(mails[0]?.text ?? '')?.[1];
    assert.equal((await new Visitor(t.baseUrl).get(`/email/verify?token=${token}`)).status, 200, 'its link works');
  });

  test('a mail the outbox gave up for the site\'s own reasons at once is not superseded, and keeps its count: the day\'s limit still holds', async () => {
    beforeEndOfDay(12 * HOUR_MS);
    const { visitor } = await member();
    const email = address();
    await saveWhileRefused(visitor, email, VERIFY_MAILS_PER_ADDRESS);
    assert.equal((await visitor.post('/settings/email', { email })).status, 429, 'see docs/site.md: a give-up is not taken back');
  });
  test('an address whose last verification mail the outbox gave up for the site\'s own reasons is not said to have a link to open: the page says no link is coming and that saving it again mails one', async () => {
    const { visitor } = await member();
    const email = address();
    await saveWhileRefused(visitor, email, 1);
    const page = await visitor.get('/settings/email');
    assert.equal(statusLines(page.text), `${email} is not verified yet, and the last mail with its link could not be sent: no link is on its way. Save it again to get a new link, at most ${VERIFY_MAILS_PER_ADDRESS} a day to one address.`);
    for (const [language, words] of [['zh-CN', `${email} 尚未验证，且最新的验证邮件未能发出，不会有链接送达。`], ['zh-TW', `${email} 尚未驗證，且最新的驗證郵件未能寄出，不會有連結送達。`]] as const) {
      visitor.cookies.set('lang', language);
      assert.ok(statusLines((await visitor.get('/settings/email')).text).startsWith(words), language);
    }
    visitor.cookies.set('lang', 'en');
    // Saved again, as it says: a new mail is on its way, and the page says to open it.
    assert.equal((await visitor.post('/settings/email', { email })).status, 200);
    assert.match(statusLines((await visitor.get('/settings/email')).text), /is not verified yet: open the link we mailed to it\./);
    await deliverMail(t);
    assert.equal(t.smtp.to(email).length, 1);
  });

  test('a change whose last verification mail the outbox gave up for the site\'s own reasons is not said to have a link to open there', async () => {
    const { visitor } = await memberWithVerifiedAddress();
    const next = address();
    await saveWhileRefused(visitor, next, 1);
    const lines = statusLines((await visitor.get('/settings/email')).text);
    assert.ok(lines.includes(`You asked to change it to ${next}, but the last mail with its link could not be sent: no link is on its way.`), lines);
    assert.doesNotMatch(lines, /open the link we mailed/);
    visitor.cookies.set('lang', 'zh-CN');
    assert.match(statusLines((await visitor.get('/settings/email')).text), /你已申请改为 \S+，但最新的验证邮件未能发出，不会有链接送达。/);
  });

  /** Saves `email` `saves` times, each mail tried at once and taken whole by the relay, which drops the connection without answering its end. */
  function saveUnanswered(visitor: AddressedVisitor, email: string, saves: number): Promise<void> {
    return saveWhileRelay(() => t.smtp.unanswer(email), visitor, email, saves);
  }

  test('a verification mail whose end the relay never answered may have arrived: the page says to look in the inbox and the spam folder, and that saving again mails a new link, in the member\'s language; it is never sent again, and keeps its count', async () => {
    beforeEndOfDay(12 * HOUR_MS);
    const { user, visitor } = await member();
    const email = address();
    await saveUnanswered(visitor, email, VERIFY_MAILS_PER_ADDRESS);
    const rows = await t.deps.database.db.selectFrom('mail_outbox').select(['maybe_sent_at', 'last_error']).where('user_id', '=', user.id).where('kind', '=', 'verifyEmail').execute();
    assert.equal(rows.length, VERIFY_MAILS_PER_ADDRESS);
    for (const row of rows) {
      assert.notEqual(row.maybe_sent_at, null, 'each may have been sent');
      assert.doesNotMatch(row.last_error ?? '', /superseded/, 'and none was superseded by the next save');
    }
    assert.equal(statusLines((await visitor.get('/settings/email')).text), `${email} is not verified yet. The last mail with its link may have arrived, though the mail server never confirmed it: look for it in the inbox and the spam folder. If it is not there, save the address again to get a new link, at most ${VERIFY_MAILS_PER_ADDRESS} a day to one address.`);
    for (const [language, words] of [['zh-CN', `${email} 尚未验证。最新的验证邮件可能已经送达，但邮件服务器没有确认：请在收件箱和垃圾邮件中查找。`], ['zh-TW', `${email} 尚未驗證。最新的驗證郵件可能已經送達，但郵件伺服器沒有確認：請在收件匣和垃圾郵件中尋找。`]] as const) {
      visitor.cookies.set('lang', language);
      assert.ok(statusLines((await visitor.get('/settings/email')).text).startsWith(words), language);
    }
    visitor.cookies.set('lang', 'en');
    // The relay answers again: none of them is sent a second time.
    t.clock.advance(MAIL_FIRST_RETRY_MS * 2);
    await deliverMail(t);
    assert.equal(t.smtp.to(email).length, VERIFY_MAILS_PER_ADDRESS, 'each reached the mailbox once');
    // They may all be in the mailbox: the day's limit counts them, and the save past it says the last may have arrived.
    const refused = await visitor.post('/settings/email', { email });
    assert.equal(refused.status, 429, 'no count was given back');
    assert.equal(lastLinkNotice(refused.text), `The last mail with a link for ${email} may have arrived, though the mail server never confirmed it: look for it in the inbox and the spam folder, and follow its link to verify the address. If it is not there, save the address again once the wait above is over, and a new link will be mailed.`);
    visitor.cookies.set('lang', 'zh-CN');
    assert.match(lastLinkNotice((await visitor.post('/settings/email', { email })).text) ?? '', /^发往 \S+ 的最新验证邮件可能已经送达，但邮件服务器没有确认/);
    // And it had: the last one's link verifies the address.
    const token = /\/email\/verify\?token=([A-Za-z0-9_-]+)/.exec(t.smtp.to(email).at(-1)?.text ?? '')?.[1];
    assert.equal((await new Visitor(t.baseUrl).get(`/email/verify?token=${token}`)).status, 200);
    assert.ok((await t.deps.stores.memberEmails.find(user.id))?.verifiedAt, 'verified by the mail the relay never confirmed');
  });

  test('a change whose last verification mail may have arrived says so there, not "open the link we mailed there" nor that it could not be sent', async () => {
    const { visitor } = await memberWithVerifiedAddress();
    const next = address();
    await saveUnanswered(visitor, next, 1);
    const lines = statusLines((await visitor.get('/settings/email')).text);
    assert.ok(lines.includes(`You asked to change it to ${next}. The last mail with its link may have arrived there, though the mail server never confirmed it: look for it in the inbox and the spam folder.`), lines);
    assert.doesNotMatch(lines, /open the link we mailed|could not be sent/);
    visitor.cookies.set('lang', 'zh-TW');
    assert.match(statusLines((await visitor.get('/settings/email')).text), /你已申請改為 \S+。最新的驗證郵件可能已經送達該地址，但郵件伺服器沒有確認/);
  });
});
