/**
 * A line a request causes carries that request's id (`reqId`), as Fastify's own lines of it do,
 * so an operator finds the request of an audit event or of a failure after its answer: the audit
 * lines its answer writes (at the site, the token endpoint), and the failure of work it started and
 * did not wait for (`BackgroundTasks`). Lines no request causes (timers, start-up) carry none
 * (docs/operations.md, "Logging").
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { BackgroundTasks } from '../../src/core/background.js';
import type { Log } from '../../src/core/log.js';
import type { RateLimiter } from '../../src/core/rate-limiter.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase, temporarySqliteDatabase } from '../support/databases.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import { Visitor } from '../site/visitor.js';
import { Browser, newClient, obtainTokens, signedInBrowser } from '../oauth/helpers.js';

type Line = { msg?: string; reqId?: string; audit?: string; req?: { method?: string; url?: string }; task?: string };

const PASSWORD = 'a long enough pass phrase';

/** The id of the one request to `method` `path` among `lines` (Fastify's "incoming request" line). */
function requestIdOf(lines: readonly Line[], method: string, path: string): string[] {
  return lines.filter((l) => l.msg === 'incoming request' && l.req?.method === method && l.req.url?.split('?')[0] === path).map((l) => l.reqId!);
}

/** The lines written to `logLines` while `act` ran. */
async function linesDuring(logLines: readonly string[], act: () => Promise<void>): Promise<Line[]> {
  const from = logLines.length;
  await act();
  return logLines.slice(from).map((line) => JSON.parse(line) as Line);
}

/** The token of the `link` in the mail sent to a new mailbox a new member, signed in, asked for. */
async function mailedLinkToken(t: TestAppWithSmtp, link: 'verify' | 'not-mine'): Promise<string> {
  const asker = await createAccount(t.deps.stores, t.clock, { username: `a${randomBytes(5).toString('hex')}`, password: PASSWORD });
  const browser = new Visitor(t.baseUrl);
  await browser.signIn(asker.username, PASSWORD);
  const mailbox = `v${randomBytes(5).toString('hex')}@example.test`;
  assert.equal((await browser.post('/settings/email', { email: mailbox })).status, 200);
  await deliverMail(t);
  const token = new RegExp(`/email/${link}\\?token=([A-Za-z0-9_-]+)`).exec(t.smtp.to(mailbox)[0]?.text ?? '')?.[1];
  assert.ok(token, `the mail holds a /email/${link} link`);
  return token;
}

test('a request\'s failure after its answer (a background task) is logged with the request\'s log, so with its id; a task no request gave a log to, with the server\'s', async () => {
  const server: string[] = [];
  const request: string[] = [];
  const to = (lines: string[]): Log => ({ info: () => {}, error: () => {}, warn: (_details, message) => { lines.push(message); } });
  const tasks = new BackgroundTasks();
  tasks.reportTo(to(server));
  tasks.run('mail', () => Promise.reject(new Error('no')), Promise.resolve(), to(request));
  tasks.run('sweep', () => Promise.reject(new Error('no')), Promise.resolve());
  await tasks.settled();
  assert.deepEqual({ server, request }, { server: ['sweep failed'], request: ['mail failed'] });
});

describe('the lines of requests over HTTP', () => {
  const logLines: string[] = [];
  let t: TestAppWithSmtp;
  before(async () => { t = await startAppWithSmtp(temporarySqliteDatabase(), { logLines }); });
  after(() => t.close());

  test('an audit line written while answering a request carries that request\'s id (reqId): at the site and at the token endpoint', async () => {
    const { browser } = await signedInBrowser(t);
    const lines = await linesDuring(logLines, async () => {
      const stranger = new Browser(t);
      assert.equal((await stranger.signIn('nobody-at-all', 'not the password')).status, 401);
      await obtainTokens(t, browser, await newClient(t), { scope: 'profile:read' });
    });
    const failed = lines.filter((l) => l.audit === 'sign_in.failed');
    assert.equal(failed.length, 1);
    assert.ok(failed[0]!.reqId, `the audit line carries a reqId: ${JSON.stringify(failed[0])}`);
    assert.ok(requestIdOf(lines, 'POST', '/login').includes(failed[0]!.reqId!), 'the reqId of the sign-in\'s request');
    const issued = lines.filter((l) => l.audit === 'token.issued');
    assert.equal(issued.length, 1);
    assert.deepEqual([issued[0]!.reqId], requestIdOf(lines, 'POST', '/api/oauth/token'), 'the reqId of the token request');
  });

  test('a forgotten-password mail that fails after the answer is logged with the reqId of the request that asked for it', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const member = new Visitor(t.baseUrl);
    await member.signIn(user.username, PASSWORD);
    await verifiedAddress(t, member);
    // The per-account count is the mail's first step, after the answer has gone.
    const limiter = t.deps.limiter as { hit: RateLimiter['hit'] };
    const hit = limiter.hit.bind(limiter);
    limiter.hit = async (...args) => {
      if (String(args[0]).startsWith('reset:account:')) throw new Error('the limiter is gone');
      return hit(...args);
    };
    try {
      const lines = await linesDuring(logLines, async () => {
        const stranger = new Visitor(t.baseUrl);
        assert.equal((await stranger.post('/password/forgot', { login: user.username })).status, 200);
        await t.deps.background.settled();
      });
      const failed = lines.filter((l) => l.msg === 'password reset mail failed');
      assert.equal(failed.length, 1);
      assert.deepEqual([failed[0]!.reqId], requestIdOf(lines, 'POST', '/password/forgot'));
    } finally {
      limiter.hit = hit;
    }
  });
});

forEachDatabase('the lines of a security-log event told with no origin', (database) => {
  const logLines: string[] = [];
  let t: TestAppWithSmtp;
  before(async () => { t = await startAppWithSmtp(database, { logLines }); });
  after(() => t.close());

  test('the error line of a security-log line that could not be written carries the reqId of the request that made the change, for an event told with no origin too (a refused verification link)', async () => {
    const token = await mailedLinkToken(t, 'not-mine');
    const reader = new Visitor(t.baseUrl);
    assert.equal((await reader.get(`/email/not-mine?token=${token}`)).status, 200);
    const store = t.deps.stores.securityEvents;
    const insert = store.insertUnlessDeleted.bind(store);
    store.insertUnlessDeleted = async () => { throw new Error('the security log is full'); };
    try {
      const lines = await linesDuring(logLines, async () => {
        assert.equal((await reader.post('/email/not-mine', { token })).status, 200);
      });
      const failed = lines.filter((l) => l.msg?.startsWith('a change to an account was made, but its security-log line'));
      assert.equal(failed.length, 1, 'the failure is logged');
      assert.deepEqual([failed[0]!.reqId], requestIdOf(lines, 'POST', '/email/not-mine'), 'with the reqId of the refusal\'s request');
    } finally {
      store.insertUnlessDeleted = insert;
    }
  });

  test('the audit line of a verification link opened by a browser not signed in to the account carries that request\'s reqId, though its security-log line keeps no origin of the opener (attack126)', async () => {
    const token = await mailedLinkToken(t, 'verify');
    const lines = await linesDuring(logLines, async () => {
      assert.equal((await new Visitor(t.baseUrl).get(`/email/verify?token=${token}`)).status, 200);
    });
    const verified = lines.filter((l) => l.audit === 'account.email_verified');
    assert.equal(verified.length, 1, 'the verification is audited');
    assert.deepEqual([verified[0]!.reqId], requestIdOf(lines, 'GET', '/email/verify'), 'with the reqId of the link\'s request');
  });
});
