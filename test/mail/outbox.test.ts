/**
 * Mail as a real part (INTERFACE section 12, issue 32 item 4), on each database, with a real SMTP
 * server in the test process: a queued mail arrives as it was rendered; an SMTP outage loses
 * none; two senders never send one mail twice; a mail failing for a day is given up; the outbox
 * and the log never keep a sent mail's link. The sender is driven by hand (`runOnce`) and the
 * clock by the test.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { loadSettings } from '../../src/config/settings.js';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { MAIL_FIRST_RETRY_MS, MAIL_LEASE_MS, MAIL_MAX_AGE_MS, RelayWatch, sendDueMail } from '../../src/core/mail/outbox.js';
import type { NewOutgoingMail } from '../../src/core/mail/ports.js';
import { EmlFileTransport, SMTP_ATTEMPT_MS, SmtpTransport } from '../../src/mail/transports.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { purgeOptions } from '../support/stores.js';

/** A mail with a secret link in it, to a fresh address. */
function mail(overrides: Partial<NewOutgoingMail> = {}): NewOutgoingMail & { link: string } {
  const link = `http://127.0.0.1/password/reset?token=${randomBytes(16).toString('hex')}`;
  return {
    to: `m${randomBytes(4).toString('hex')}@example.test`,
    subject: 'Reset your password',
    text: `Open ${link} within 30 minutes.`,
    html: `<p>Open <a href="${link}">${link}</a> within 30 minutes.</p>`,
    language: 'en',
    userId: null,
    kind: 'test',
    link,
    ...overrides,
  };
}

/** What a scripted server does where a relay may misbehave (`scriptedSmtp`). */
interface Script {
  /** Its reply to every RCPT, a line of its own making (a reply code of ten digits, or none); `null`: it never answers. */
  rcpt?: string | null;
  /** `false`: it takes the connection and never says a word. */
  greets?: boolean;
  /**
   * Its reply to DATA: `354` at once; or trickled a byte at a time, never whole, so the message
   * never goes; or `354` and then the connection `closes` (a FIN) or `resets` (destroyed) at once,
   * none of the message read, as a relay that crashed or was restarted right after it.
   */
  data?: 'answers' | 'trickles' | 'closes' | 'resets';
  /**
   * What it does at the message's end, its final "." received: answers `250`; stays `silent`;
   * `drops` the connection; `breaks` off a reply, the connection dropped in its first line; or
   * `trickles` a reply a byte at a time, never whole, so the client's wait for silence never runs out.
   */
  end?: 'answers' | 'silent' | 'drops' | 'breaks' | 'trickles';
  /** `true`: it keeps its end of a connection open after the client closed its own, as a broken or hostile relay may. */
  holds?: boolean;
}

/** A byte every this long: far under a wait for silence of 500 ms. */
const TRICKLE_MS = 100;

/**
 * An SMTP server of the test's own making, for what `smtp-server` never does (`Script`), as a
 * broken, slow or hostile relay may; `received` counts the messages it got whole.
 */
async function scriptedSmtp({ rcpt = '250 ok', greets = true, data = 'answers', end = 'answers', holds = false }: Script): Promise<{ port: number; received: () => number; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let received = 0;
  const server = createServer({ allowHalfOpen: holds }, (socket) => {
    sockets.add(socket);
    const timers: NodeJS.Timeout[] = [];
    const trickle = () => timers.push(setInterval(() => socket.write('2'), TRICKLE_MS));
    socket.on('close', () => { sockets.delete(socket); for (const timer of timers) clearInterval(timer); });
    socket.on('error', () => {});
    if (!greets) return;
    socket.setEncoding('utf8');
    socket.write('220 scripted ESMTP\r\n');
    let buffer = '';
    let inData = false;
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const last = buffer.indexOf('\r\n.\r\n');
          if (last < 0) return;
          buffer = buffer.slice(last + 5);
          inData = false;
          received += 1;
          if (end === 'answers') socket.write('250 ok\r\n');
          else if (end === 'drops') socket.destroy();
          else if (end === 'breaks') { socket.write('25'); socket.destroy(); }
          else if (end === 'trickles') trickle();
          continue;
        }
        const lineEnd = buffer.indexOf('\r\n');
        if (lineEnd < 0) return;
        const command = buffer.slice(0, lineEnd).toUpperCase();
        buffer = buffer.slice(lineEnd + 2);
        if (command.startsWith('RCPT')) { if (rcpt !== null) socket.write(`${rcpt}\r\n`); }
        else if (command.startsWith('DATA')) {
          if (data === 'trickles') trickle();
          else if (data === 'closes') return void socket.end('354 go on\r\n');
          else if (data === 'resets') { socket.write('354 go on\r\n'); return void socket.destroy(); }
          else { socket.write('354 go on\r\n'); inData = true; }
        } else if (command.startsWith('QUIT')) socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    received: () => received,
    open: () => sockets.size,
    close: () => new Promise<void>((resolve) => { for (const socket of sockets) socket.destroy(); server.close(() => resolve()); }),
  };
}

forEachDatabase('mail outbox', (database) => {
  let t: TestAppWithSmtp;
  const logLines: string[] = [];

  before(async () => {
    t = await startAppWithSmtp(database, { env: { MAIL_FROM: 'Test Community <no-reply@example.test>' }, logLines });
  });
  after(async () => {
    await t.close();
  });

  const send = () => t.deps.mailDeliveries.runOnce();
  const options = purgeOptions({ auditWindowMs: 1000, batchSize: 100, grantLifetimeMs: 0, deliveryMaxAgeMs: 0, mailMaxAgeMs: MAIL_MAX_AGE_MS });
  const queue = (m: NewOutgoingMail) => t.deps.stores.mailOutbox.enqueue(m, t.clock.now());
  const row = (to: string) => t.deps.database.db.selectFrom('mail_outbox').selectAll().where('recipient', '=', to).executeTakeFirstOrThrow();
  /** Queues `m` with the SMTP server away and sends hour after hour until it is given up; its row then. */
  const givenUpWithServerAway = async (m: NewOutgoingMail) => {
    await t.smtp.stop();
    try {
      await queue(m);
      for (let i = 0; i < 100 && (await row(m.to)).abandoned_at === null; i += 1) {
        await send();
        t.clock.advance(3600 * 1000);
      }
    } finally {
      await t.smtp.listen();
    }
    return row(m.to);
  };

  test('a queued mail reaches the SMTP server as it was rendered, from MAIL_FROM', async () => {
    const m = mail();
    await queue(m);
    const pass = await send();
    assert.equal(pass.sent, 1);
    const [got, ...more] = t.smtp.to(m.to);
    assert.equal(more.length, 0);
    assert.equal(got!.subject, m.subject);
    assert.equal(got!.text.trim(), m.text);
    assert.match(got!.html ?? '', /<a href="http:\/\/127\.0\.0\.1\/password\/reset\?token=/);
    assert.equal(got!.from, '"Test Community" <no-reply@example.test>');
  });

  test('a sent mail keeps no body in the outbox, so its link is not stored once it is sent', async () => {
    const m = mail();
    await queue(m);
    await send();
    const stored = await row(m.to);
    assert.ok(stored.sent_at !== null);
    assert.deepEqual([stored.subject, stored.body_text, stored.body_html], ['', '', null]);
  });

  test('mail survives an SMTP outage: it stays in the outbox and arrives once the server is back', async () => {
    const m = mail();
    await t.smtp.stop();
    try {
      await queue(m);
      const failed = await send();
      assert.equal(failed.retrying, 1);
      const waiting = await row(m.to);
      assert.equal(waiting.sent_at, null);
      assert.ok(Number(waiting.next_attempt_at) > t.clock.now(), 'the next attempt is later');
      assert.ok(waiting.last_error);
      // Not due again before its back-off ends.
      assert.equal((await send()).claimed, 0);
    } finally {
      await t.smtp.listen();
    }
    t.clock.advance(MAIL_FIRST_RETRY_MS);
    assert.equal((await send()).sent, 1);
    assert.equal(t.smtp.to(m.to).length, 1);
    assert.equal((await send()).claimed, 0, 'sent once, never again');
  });

  test('two senders at once never send one mail twice', async () => {
    const mails = Array.from({ length: 8 }, () => mail());
    for (const m of mails) await queue(m);
    const passes = await Promise.all([send(), send(), send()]);
    assert.equal(passes.reduce((n, p) => n + p.sent, 0), 8);
    for (const m of mails) assert.equal(t.smtp.to(m.to).length, 1, m.to);
  });

  test('a mail failing for a day is given up, and the log never holds its address, subject or link', async () => {
    const m = mail({ subject: `Secret subject ${randomBytes(4).toString('hex')}` });
    const given = await givenUpWithServerAway(m);
    assert.ok(given.abandoned_at !== null);
    assert.ok(Number(given.abandoned_at) - Number(given.created_at) <= MAIL_MAX_AGE_MS + 3600 * 1000);
    assert.deepEqual([given.subject, given.body_text, given.body_html], ['', '', null]);
    assert.ok(logLines.some((l) => l.includes('"mail given up"') && l.includes(`"mail_id":${given.id}`)));
    const log = logLines.join('\n');
    for (const secret of [m.link, m.to, m.subject]) assert.ok(!log.includes(secret), `the log holds ${secret}`);
  });

  test('a mail its server refuses for good (a 5yz reply, RFC 5321 4.2.1) is given up at once with its reply code, and the log holds neither its address nor the server\'s words', async () => {
    const m = mail({ userId: null });
    const words = `no such user here ${randomBytes(4).toString('hex')}`;
    t.smtp.refuse(m.to, 550, `5.1.1 <${m.to}>: ${words}`);
    await queue(m);
    const pass = await send();
    assert.deepEqual([pass.abandoned, pass.retrying], [1, 0]);
    const given = await row(m.to);
    assert.ok(given.abandoned_at !== null, 'given up at the first refusal');
    assert.equal(given.attempts, 1);
    assert.equal(given.reply_code, 550);
    assert.deepEqual([given.subject, given.body_text, given.body_html], ['', '', null]);
    assert.ok(logLines.some((l) => l.includes('"mail given up"') && l.includes(`"mail_id":${given.id}`) && l.includes('"reply_code":550')));
    const kept = `${logLines.join('\n')}\n${given.last_error}`;
    for (const secret of [m.to, words, m.link]) assert.ok(!kept.includes(secret), `the log or the outbox holds ${secret}`);
    t.clock.advance(MAIL_MAX_AGE_MS);
    assert.equal((await send()).claimed, 0, 'never tried again');
  });

  test('a mail refused for now (4yz), or for a full mailbox (552), is tried again, and given up after a day with its last reply code', async () => {
    for (const code of [450, 552]) {
      const m = mail();
      t.smtp.refuse(m.to, code, code === 450 ? '4.2.0 mailbox busy, try again later' : '5.2.2 mailbox full');
      await queue(m);
      assert.equal((await send()).retrying, 1, `${code} is tried again`);
      assert.equal((await row(m.to)).reply_code, null, 'a mail still waiting keeps no reply code');
      // The relay takes other mail meanwhile: a full mailbox (x.2.2) is then the address's, not the relay's quota of the site.
      for (let i = 0; i < 100 && (await row(m.to)).abandoned_at === null; i += 1) {
        await queue(mail());
        t.clock.advance(3600 * 1000);
        await send();
      }
      const given = await row(m.to);
      assert.ok(given.abandoned_at !== null);
      assert.ok(Number(given.abandoned_at) - Number(given.created_at) >= MAIL_MAX_AGE_MS - 3600 * 1000, `${code}: tried for a day`);
      assert.equal(given.reply_code, code);
      t.smtp.accept(m.to);
    }
  });

  test('a mail given up with no reply (its server away for a day) keeps no reply code', async () => {
    const m = mail();
    const given = await givenUpWithServerAway(m);
    assert.ok(given.abandoned_at !== null);
    assert.equal(given.reply_code, null);
  });

  test('a server\'s reply is kept by its three-digit 4yz or 5yz code alone (RFC 5321 4.2): a reply of more digits or none carries no reply code, its mail is given up after a day like any other, and its words reach neither the log nor the outbox', async () => {
    const words = `words ${randomBytes(4).toString('hex')}`;
    const lines: string[] = [];
    const log = { info: (d: object, m: string) => lines.push(`${m} ${JSON.stringify(d)}`), warn: (d: object, m: string) => lines.push(`${m} ${JSON.stringify(d)}`), error: (d: object, m: string) => lines.push(`${m} ${JSON.stringify(d)}`) };
    for (const answer of [(to: string) => `9999999999 5.1.1 <${to}> ${words}`, (to: string) => `refused <${to}> ${words}`, (to: string) => `5 <${to}> ${words}`]) {
      const m = mail();
      const server = await scriptedSmtp({ rcpt: answer(m.to) });
      try {
        await queue(m);
        const transport = new SmtpTransport(`smtp://127.0.0.1:${server.port}`, 'no-reply@example.test');
        for (let i = 0; i < 100 && (await row(m.to)).abandoned_at === null; i += 1) {
          await sendDueMail({ stores: t.deps.stores, clock: t.clock, metrics: t.deps.metrics }, transport, log, new RelayWatch());
          t.clock.advance(3600 * 1000);
        }
      } finally {
        await server.close();
      }
      const given = await row(m.to);
      assert.ok(given.abandoned_at !== null, `${answer(m.to)}: given up`);
      assert.equal(given.reply_code, null, answer(m.to));
      const kept = `${lines.join('\n')}\n${given.last_error}`;
      for (const secret of [m.to, words]) assert.ok(!kept.includes(secret), `the log or the outbox holds ${secret}`);
    }
  });

  test('a server that refuses the site\'s own sender (a 5yz to MAIL FROM) refuses no recipient: the mail is tried again, with no reply code to tell its reader of', async () => {
    const server = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'], logger: false,
      onMailFrom: (_address, _session, callback) => callback(Object.assign(new Error('5.7.1 sender address rejected'), { responseCode: 553 })),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const m = mail();
      await queue(m);
      const transport = new SmtpTransport(`smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`, 'no-reply@example.test');
      const pass = await sendDueMail({ stores: t.deps.stores, clock: t.clock, metrics: t.deps.metrics }, transport, { info: () => {}, warn: () => {}, error: () => {} }, new RelayWatch());
      assert.deepEqual([pass.retrying, pass.abandoned], [1, 0], 'tried again, as a wrong SMTP password is');
      const waiting = await row(m.to);
      assert.deepEqual([waiting.abandoned_at, waiting.reply_code], [null, null]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('behind a relay that refuses the site, the log says so once as the trouble starts, at most once an hour while it lasts and once as it ends, never per attempt; mail_attempts_total counts every attempt', async () => {
    const said = (from: number, message: string) => logLines.slice(from).filter((l) => l.includes(`"msg":"${message}"`)).length;
    const siteRetries = async () => (await t.deps.metrics.mailAttempts.get()).values
      .filter((v) => v.labels.outcome === 'retrying' && v.labels.whose === 'site').reduce((n, v) => n + v.value, 0);
    // A mail the relay takes first, with any a test before left waiting: whatever trouble it left is over.
    t.clock.advance(MAIL_MAX_AGE_MS);
    await queue(mail());
    while ((await send()).claimed > 0);
    const counted = await siteRetries();
    const mails = Array.from({ length: 3 }, () => mail());
    for (const m of mails) {
      t.smtp.refuse(m.to, 554, '5.7.1 Relay access denied');
      await queue(m);
    }
    const lines = logLines.length;
    for (let i = 0; i < 6; i += 1) {
      await send();
      t.clock.advance(10 * 60_000);
    }
    const attempts = (await Promise.all(mails.map((m) => row(m.to)))).reduce((n, r) => n + r.attempts, 0);
    assert.ok(attempts >= 6, `${attempts} attempts`);
    assert.equal(said(lines, 'the site\'s mail relay fails the site (SMTP_URL, MAIL_FROM, its rules); mail waits and is tried again'), 1, 'said once as it starts');
    assert.equal(said(lines, 'the site\'s mail relay still fails the site; mail waits and is tried again'), 0, 'not again within the hour');
    assert.ok(!logLines.slice(lines).some((l) => l.includes('"mail_id"')), 'no line per attempt');
    assert.equal(await siteRetries() - counted, attempts, 'every attempt counted');
    t.clock.advance(3600 * 1000);
    await send();
    assert.equal(said(lines, 'the site\'s mail relay still fails the site; mail waits and is tried again'), 1, 'said again after an hour');
    for (const m of mails) t.smtp.accept(m.to);
    t.clock.advance(3600 * 1000);
    assert.equal((await send()).sent, 3);
    assert.equal(said(lines, 'the site\'s mail relay takes mail again'), 1, 'said once as it ends');
  });

  test('the janitor deletes sent and given-up mails after the audit window, never a waiting one', async () => {
    const sent = mail();
    await queue(sent);
    await send();
    await t.smtp.stop();
    const waiting = mail();
    try {
      await queue(waiting);
      await send();
    } finally {
      await t.smtp.listen();
    }
    const deleted = await t.deps.stores.housekeeping.purge(t.clock.now() + 2000, options);
    assert.ok(deleted.mail_outbox! >= 1);
    await assert.rejects(row(sent.to));
    assert.equal((await row(waiting.to)).sent_at, null, 'a waiting mail stays');
  });

  test('the janitor deletes a mail still pending past its maximum age and the audit window: no instance sent it', async () => {
    const unsent = mail();
    await queue(unsent);
    const queuedAt = t.clock.now();
    await t.deps.stores.housekeeping.purge(queuedAt + MAIL_MAX_AGE_MS + options.auditWindowMs, options);
    assert.equal((await row(unsent.to)).sent_at, null, 'it stays while it could still be sent');
    await t.deps.stores.housekeeping.purge(queuedAt + MAIL_MAX_AGE_MS + options.auditWindowMs + 1, options);
    await assert.rejects(row(unsent.to), 'its body, a link perhaps, is gone');
  });

  /** A new account with an address of its own, and a kind of mail no other test sends. */
  async function memberWithAddress() {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: 'correct horse battery' });
    const to = `m${randomBytes(4).toString('hex')}@example.test`;
    await t.deps.stores.memberEmails.set(user.id, to, 'en', t.clock.now());
    return { user, to, kind: `k${randomBytes(4).toString('hex')}` };
  }

  test('supersede gives up, once, the mails of a kind to an account still waiting after a failed attempt, and says which (address, when queued); one not tried yet is left', async () => {
    const store = t.deps.stores.mailOutbox;
    const { user, to, kind } = await memberWithAddress();
    const failedAt = t.clock.now();
    assert.ok(await store.enqueue(mail({ to, userId: user.id, kind }), failedAt));
    // Claimed and failed (tried again later), as the sender does.
    const claim = randomBytes(8).toString('hex');
    const claimed = (await store.claim(claim, failedAt, failedAt + 60_000, 100)).filter((row) => row.kind === kind);
    assert.equal(claimed.length, 1);
    assert.ok(await store.retryAt(claimed[0]!.id, claim, failedAt + MAIL_FIRST_RETRY_MS, 'relay away'));
    t.clock.advance(1000);
    assert.ok(await store.enqueue(mail({ to, userId: user.id, kind }), t.clock.now()), 'a newer mail, not tried yet');
    assert.deepEqual(await store.supersede(user.id, kind, t.clock.now()), [{ to, createdAt: failedAt }]);
    assert.deepEqual(await store.supersede(user.id, kind, t.clock.now()), [], 'superseded once');
    assert.deepEqual(await store.newest(user.id, kind), { to, state: 'waiting' }, 'the newer mail still goes out');
  });

  /** Sends or gives up every mail earlier tests left waiting, so a pass to a scripted relay claims the test's own only. */
  const drain = async () => {
    t.clock.advance(MAIL_MAX_AGE_MS + 3600 * 1000);
    for (let i = 0; i < 20 && (await send()).claimed > 0; i += 1);
  };

  /** A sender of its own, as another instance's, to a scripted relay: waits of 500 ms, and an attempt's deadline of 1.5 s. */
  const instance = (port: number) => {
    const transport = new SmtpTransport(`smtp://127.0.0.1:${port}`, 'no-reply@example.test', 500, 1500);
    const relay = new RelayWatch();
    return () => sendDueMail({ stores: t.deps.stores, clock: t.clock, metrics: t.deps.metrics }, transport, { info: () => {}, warn: (d, m) => logLines.push(`${m} ${JSON.stringify(d)}`), error: () => {} }, relay);
  };

  test('a mail whose whole message the relay took and never answered (silent, the connection dropped, before or in the middle of a reply, or a reply trickled past the deadline) may have arrived: kept as maybe sent in one write, its body forgotten, never sent again by any instance, and logged without its address', async () => {
    for (const end of ['silent', 'drops', 'breaks', 'trickles'] as const) {
      const server = await scriptedSmtp({ end });
      try {
        await drain();
        const m = mail();
        await queue(m);
        const [first, second] = [instance(server.port), instance(server.port)];
        // Two instances at once: the one that claims it holds it for the attempt, the other finds nothing.
        const [pass, other] = await Promise.all([first(), second()]);
        assert.deepEqual([pass.unanswered + other.unanswered, pass.retrying + other.retrying, pass.abandoned + other.abandoned], [1, 0, 0], end);
        const kept = await row(m.to);
        assert.notEqual(kept.maybe_sent_at, null, `${end}: may have been sent`);
        assert.equal(kept.sent_at, null, `${end}: never confirmed`);
        assert.deepEqual([kept.subject, kept.body_text, kept.body_html], ['', '', null], `${end}: out of the queue, its link forgotten`);
        assert.equal(kept.attempts, 1);
        // Its lease long over, a day on, and the relay answering again: no instance sends it again.
        t.clock.advance(MAIL_LEASE_MS + MAIL_FIRST_RETRY_MS);
        assert.equal((await first()).claimed + (await second()).claimed + (await send()).claimed, 0, `${end}: never claimed again`);
        assert.equal(server.received(), 1, `${end}: the relay got it once`);
        assert.equal(t.smtp.to(m.to).length, 0, `${end}: and no other relay got it`);
        assert.ok(logLines.some((l) => l.startsWith('mail may have been sent') && l.includes(`"mail_id":${kept.id}`)), end);
        assert.ok(!logLines.join('\n').includes(m.to), `${end}: the log holds no address`);
      } finally {
        await server.close();
      }
    }
  });

  test('a mail whose message never reached its end (the relay silent at RCPT, trickling its answer to DATA past the deadline, or gone right after its 354 with none of the message read) failed, and is tried again', async () => {
    for (const script of [{ rcpt: null }, { data: 'trickles' }, { data: 'closes' }, { data: 'resets' }] as const) {
      const server = await scriptedSmtp(script);
      try {
        await drain();
        const m = mail();
        await queue(m);
        const pass = await instance(server.port)();
        assert.deepEqual([pass.retrying, pass.unanswered], [1, 0], JSON.stringify(script));
        const waiting = await row(m.to);
        assert.deepEqual([waiting.maybe_sent_at, waiting.abandoned_at], [null, null]);
        assert.equal(server.received(), 0);
      } finally {
        await server.close();
      }
      t.clock.advance(MAIL_FIRST_RETRY_MS * 2);
      assert.equal((await send()).sent, 1, 'sent once the relay answers');
    }
  });

  test('a mail the relay holds unanswered is not superseded while it is tried, nor after: a newer mail of its kind goes out beside it, and it keeps its place (its count is not given back)', async () => {
    const store = t.deps.stores.mailOutbox;
    const { user, to, kind } = await memberWithAddress();
    const server = await scriptedSmtp({ end: 'silent' });
    try {
      await drain();
      assert.ok(await store.enqueue(mail({ to, userId: user.id, kind }), t.clock.now()));
      const attempt = instance(server.port)();
      while (server.received() === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      // The relay has the whole message and has not answered: the member asks again.
      t.clock.advance(1000);
      assert.ok(await store.enqueue(mail({ to, userId: user.id, kind }), t.clock.now()));
      assert.deepEqual(await store.supersede(user.id, kind, t.clock.now()), [], 'not while it is tried');
      assert.equal((await attempt).unanswered, 1);
      assert.deepEqual(await store.supersede(user.id, kind, t.clock.now()), [], 'nor once it may have been sent');
    } finally {
      await server.close();
    }
    assert.equal((await send()).sent, 1, 'the newer mail goes out');
    const rows = await t.deps.database.db.selectFrom('mail_outbox').select(['maybe_sent_at', 'sent_at', 'last_error']).where('user_id', '=', user.id).orderBy('id').execute();
    assert.notEqual(rows[0]!.maybe_sent_at, null);
    assert.doesNotMatch(rows[0]!.last_error ?? '', /superseded/);
    assert.notEqual(rows[1]!.sent_at, null);
  });
});

test('without SMTP_URL a loopback BASE_URL writes mail as .eml files under ./data/mail, and elsewhere mail is off', () => {
  assert.deepEqual(loadSettings({ BASE_URL: 'http://localhost:3000' }).mail, { kind: 'files', directory: './data/mail' });
  assert.deepEqual(loadSettings({ BASE_URL: 'https://id.example.com', DEMO: '0' }).mail, { kind: 'off' });
  assert.equal(loadSettings({ BASE_URL: 'https://id.example.com', DEMO: '0' }).mailFrom, 'Community <no-reply@id.example.com>');
});

test('SMTP_URL takes smtp:// or smtps:// with optional credentials, and an error never shows the password', () => {
  assert.equal(loadSettings({ SMTP_URL: 'smtps://user:pw@mail.example.com:465' }).mail.kind, 'smtp');
  for (const bad of ['http://mail.example.com', 'smtp://user:hunter2@mail.example.com/path', 'smtp://user:hunter2@mail.example.com?x=1']) {
    assert.throws(() => loadSettings({ SMTP_URL: bad }), (error: Error) => /SMTP_URL/.test(error.message) && !error.message.includes('hunter2'));
  }
  assert.throws(() => loadSettings({ MAIL_FROM: 'Community <no-reply@example.com>\r\nBcc: x@y.z' }), /MAIL_FROM/);
});

test('a server that refuses the site\'s own sign-in (535) refuses no mail: its reply is the site\'s step, so the mail is tried again, never given up at once', async () => {
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'], allowInsecureAuth: true, authOptional: false, logger: false,
    onAuth: (_auth, _session, callback) => callback(Object.assign(new Error('5.7.8 bad credentials'), { responseCode: 535 })),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  try {
    const port = (server.server.address() as AddressInfo).port;
    const outcome = await new SmtpTransport(`smtp://svc:wrong@127.0.0.1:${port}`, 'no-reply@example.test').send(1, mail());
    assert.equal(outcome.sent, false);
    assert.deepEqual((outcome as { reply: unknown }).reply, { step: 'site', code: 535, enhanced: '5.7.8' });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

// The test's own limit is under nodemailer's waits (30 s for a greeting, 10 minutes of silence):
// a transport that did not apply its own wait would still be waiting when it ends.
test('an SMTP server that goes quiet, before its greeting or in the middle of a mail, fails the attempt after the transport\'s wait, not nodemailer\'s, so it ends within the outbox\'s lease', { timeout: 20_000 }, async () => {
  for (const until of ['greeting', 'rcpt'] as const) {
    const server = await scriptedSmtp({ rcpt: null, greets: until === 'rcpt' });
    try {
      const outcome = await new SmtpTransport(`smtp://127.0.0.1:${server.port}`, 'no-reply@example.test', 500).send(1, mail());
      assert.equal(outcome.sent, false, until);
      assert.match((outcome as { error: string }).error, /^ETIMEDOUT: /, until);
      assert.equal((outcome as { reply: unknown }).reply, null, `${until}: no reply, so nobody's refusal`);
    } finally {
      await server.close();
    }
  }
});

test('an attempt ends by its deadline, whatever the relay trickles, before the outbox\'s lease, so no other instance takes the mail while it is tried', { timeout: 20_000 }, async () => {
  assert.ok(SMTP_ATTEMPT_MS < MAIL_LEASE_MS, 'the deadline is below the lease');
  for (const script of [{ data: 'trickles' }, { end: 'trickles' }] as const) {
    const server = await scriptedSmtp(script);
    try {
      const started = Date.now();
      const outcome = await new SmtpTransport(`smtp://127.0.0.1:${server.port}`, 'no-reply@example.test', 500, 1500).send(1, mail());
      const took = Date.now() - started;
      assert.ok(took >= 1500 && took < 3000, `${JSON.stringify(script)}: ended at the deadline, after ${took} ms`);
      // Before the data's end nothing was delivered (RFC 5321 3.8); after it, it may have been.
      assert.equal(outcome.sent, script.end === undefined ? false : 'unanswered', JSON.stringify(script));
    } finally {
      await server.close();
    }
  }
});

test('an attempt leaves no connection open behind it, even to a relay that keeps its end open and trickles on, so a broken relay cannot use up the site\'s sockets one attempt at a time', { timeout: 20_000 }, async () => {
  for (const script of [{ end: 'trickles', holds: true }, { data: 'trickles', holds: true }] as const) {
    const server = await scriptedSmtp(script);
    try {
      await Promise.all([1, 2, 3].map(() => new SmtpTransport(`smtp://127.0.0.1:${server.port}`, 'no-reply@example.test', 500, 1500).send(1, mail())));
      // The relay writes on, so it learns when the site's end of a connection is gone.
      const ended = Date.now();
      while (server.open() > 0 && Date.now() - ended < 3000) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(server.open(), 0, `${JSON.stringify(script)}: connections still open 3 s after their attempts ended`);
    } finally {
      await server.close();
    }
  }
});

test('an .eml file holds the whole message a mail program opens', async () => {
  const directory = join(mkdtempSync(join(tmpdir(), 'svc-mail-')), 'mail');
  const transport = new EmlFileTransport(directory, 'Community <no-reply@localhost>');
  const m = mail({ subject: '重设密码' });
  assert.deepEqual(await transport.send(7, m), { sent: true });
  assert.deepEqual(readdirSync(directory), ['00000007.eml']);
  const parsed = await simpleParser(readFileSync(join(directory, '00000007.eml')));
  assert.equal(parsed.subject, '重设密码');
  assert.equal(parsed.text?.trim(), m.text);
});

test('an .eml file is never written through a link planted at its name, nor, run as root, in another user\'s directory', async () => {
  const directory = join(mkdtempSync(join(tmpdir(), 'svc-mail-')), 'mail');
  const transport = new EmlFileTransport(directory, 'Community <no-reply@localhost>');
  mkdirSync(directory, { mode: 0o700 });
  const elsewhere = join(dirname(directory), 'elsewhere');
  writeFileSync(elsewhere, 'kept\n', { mode: 0o644 });
  symlinkSync(elsewhere, join(directory, '00000007.eml'));
  assert.deepEqual(await transport.send(7, mail({})), { sent: true });
  assert.equal(readFileSync(elsewhere, 'utf8'), 'kept\n');
  assert.ok(lstatSync(join(directory, '00000007.eml')).isFile(), 'the link replaced by the mail');
  if (process.getuid?.() !== 0) return;
  chownSync(directory, 65534, 65534);
  const refused = await transport.send(8, mail({}));
  assert.equal(refused.sent, false);
  assert.match(String((refused as { error: unknown }).error), /is user 65534's, so a command run as root does not open it/);
  assert.equal(existsSync(join(directory, '00000008.eml')), false);
});
