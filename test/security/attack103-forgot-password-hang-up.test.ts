/**
 * attack103 F5: a request never leaves the process waiting. A forgotten-password request mails its
 * link once its answer has gone (`answered`: the response's 'close' event, INTERFACE section 12's
 * equal timing). A client that hung up before the handler got there had fired that event already,
 * so the wait never ended: the link was never mailed, the task stayed in `BackgroundTasks` for the
 * process's life (with its request and reply), and a stop waited for it until the 10 s grace ran
 * out and exited 1, "requests still in flight 10 s after the signal were cut off" with none in
 * flight (seen on the server `npm start` runs: five such requests, then SIGTERM).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAccount } from '../../src/core/accounts/accounts.js';
import type { RateLimiter } from '../../src/core/rate-limiter.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import { Visitor } from '../site/visitor.js';

const PASSWORD = 'a long enough pass phrase';

forEachDatabase('attack103 F5: a forgotten-password request whose client hung up', (database) => {
  let t: TestAppWithSmtp;
  before(async () => {
    t = await startAppWithSmtp(database);
  });
  after(async () => {
    await t.close();
  });

  test('its link is still mailed, and nothing is left waiting for an answer that will never go', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const member = new Visitor(t.baseUrl);
    await member.signIn(user.username, PASSWORD);
    const email = await verifiedAddress(t, member);
    const mailsBefore = t.smtp.to(email).length;

    const stranger = new Visitor(t.baseUrl);
    const csrf = await stranger.csrf();
    const body = `_csrf=${csrf}&login=${user.username}`;
    // The handler is held at its first limiter step until the client has hung up, so the
    // connection is gone (its 'close' fired) before the handler hands the mail on.
    let hungUp!: () => void;
    const gone = new Promise<void>((resolve) => { hungUp = resolve; });
    const limiter = t.deps.limiter as { hit: RateLimiter['hit'] };
    const hit = limiter.hit.bind(limiter);
    limiter.hit = async (...args) => {
      if (String(args[0]).startsWith('reset:address:')) await gone;
      return hit(...args);
    };
    try {
      const { port } = new URL(t.baseUrl);
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => {});
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(`POST /password/forgot HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: svc_csrf=${csrf}\r\n`
        + `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      await sleep(200);
      socket.resetAndDestroy();
      await sleep(200);
      hungUp();
      // The handler goes on to its answer, which no one reads, and hands the mail on.
      await sleep(500);
      const settled = await Promise.race([deliverMail(t).then(() => 'settled'), sleep(5000).then(() => 'still waiting')]);
      assert.equal(settled, 'settled', 'the background work of the request ended');
      assert.equal(t.smtp.to(email).length, mailsBefore + 1, 'the reset link was mailed');
      assert.match(t.smtp.to(email).at(-1)!.text, /\/password\/reset\?token=/);
    } finally {
      limiter.hit = hit;
    }
  });
});
