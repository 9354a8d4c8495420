/**
 * Two submissions of one sign-in's second step at once, each with a valid code of its own: one
 * finishes the sign-in, and only its code is spent (a recovery code used, a TOTP step recorded);
 * the other spends nothing and gets the ordinary refusal. Over real HTTP on each database.
 *
 * The limiter is the real one, answering after a few milliseconds as one across a network
 * (Redis) does: on SQLite with counters in memory a second step otherwise runs from start to end
 * without waiting on anything, so two requests never overlap, as they do under load.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { User } from '../../src/core/accounts/ports.js';
import type { RateLimiter } from '../../src/core/rate-limiter.js';
import { generateRecoveryCodes, hashRecoveryCode } from '../../src/core/accounts/recovery-codes.js';
import { newTotpSecret, totpCode } from '../../src/core/accounts/totp.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { Browser, newUser } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const STEP = 30_000;
const ROUNDS = 4;

/** The memory limiter, answering `delayMs` later. */
function distantLimiter(delayMs: number): RateLimiter {
  const near = new MemoryRateLimiter();
  const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), delayMs));
  return {
    hit: async (...args) => later(await near.hit(...args)),
    peek: async (...args) => later(await near.peek(...args)),
    refund: async (key, windowSeconds, now) => later(await near.refund(key, windowSeconds, now)),
  };
}

forEachDatabase('second steps racing', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { limiter: distantLimiter(5) }); });
  after(() => t.close());

  const csrf = (browser: Browser) => browser.cookies.get('svc_csrf')!;

  /** A user with an authenticator app on (its code of the current step spent) and recovery codes. */
  async function withTwoStep(): Promise<{ user: User; secret: string; codes: string[] }> {
    const user = await newUser(t);
    const secret = newTotpSecret();
    const codes = generateRecoveryCodes();
    const factors = t.deps.stores.secondFactors;
    assert.equal(await factors.startTotp(user.id, secret, t.clock.now()), true);
    assert.equal(await factors.confirmTotp(user.id, Math.floor(t.clock.now() / STEP), codes.map(hashRecoveryCode), t.clock.now()), true);
    return { user, secret, codes };
  }

  /** A new browser past the password, waiting for its second step. */
  async function pending(user: User): Promise<Browser> {
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).headers.get('location'), '/login/second-step');
    return browser;
  }

  /** The pending sign-in's second step submitted twice at once, one code each; both answers, in order. */
  async function race(browser: Browser, codes: [string, string]): Promise<[Response, Response]> {
    const [a, b] = await Promise.all(codes.map((code) => browser.postForm('/login/second-step', { _csrf: csrf(browser), code })));
    return [a!, b!];
  }

  /** One answer is the sign-in (303), the other the ordinary refusal of a finished one; the winner's index. */
  async function oneWins(answers: [Response, Response], round: number): Promise<number> {
    assert.deepEqual(answers.map((a) => a.status).sort(), [303, 401], `round ${round}: one finishes the sign-in`);
    const winner = answers.findIndex((a) => a.status === 303);
    assert.match(await answers[1 - winner]!.text(), /took too long or was already finished/, `round ${round}: the other gets the ordinary refusal`);
    return winner;
  }

  test('two second steps racing with two different recovery codes: one signs in, and only its code is spent', async () => {
    const { user, codes } = await withTwoStep();
    // Several rounds: each must end the same way, whichever submission wins.
    for (let round = 0; round < ROUNDS; round++) {
      const pair: [string, string] = [codes[2 * round]!, codes[2 * round + 1]!];
      const winner = await oneWins(await race(await pending(user), pair), round);
      assert.equal(await t.deps.stores.secondFactors.countUnusedRecoveryCodes(user.id), codes.length - (2 * round + 1), `round ${round}: only the winner's code is spent`);
      // The loser's code is not spent: it signs in on its own.
      const alone = await pending(user);
      assert.equal((await alone.postForm('/login/second-step', { _csrf: csrf(alone), code: pair[1 - winner]! })).status, 303, `round ${round}: the loser's code still signs in`);
    }
  });

  test('two second steps racing with two valid TOTP codes: one signs in, and only its time step is recorded', async () => {
    const { user, secret } = await withTwoStep();
    for (let round = 0; round < ROUNDS; round++) {
      // Two steps on from the last round, so the previous step's code and the current one's are
      // both unused and both accepted (RFC 6238 5.2: one step of drift either side).
      t.clock.advance(2 * STEP);
      const current = Math.floor(t.clock.now() / STEP);
      // Each submission carries the later step in turn.
      const steps = round % 2 === 0 ? [current - 1, current] : [current, current - 1];
      const winner = await oneWins(await race(await pending(user), [totpCode(secret, steps[0]! * STEP), totpCode(secret, steps[1]! * STEP)]), round);
      assert.equal((await t.deps.stores.secondFactors.findTotp(user.id))?.lastStep, steps[winner], `round ${round}: the winner's step alone is recorded`);
      // No one is locked out: when the winner's step was the earlier, the current code still signs in.
      if (steps[winner] === current - 1) {
        const alone = await pending(user);
        assert.equal((await alone.postForm('/login/second-step', { _csrf: csrf(alone), code: totpCode(secret, t.clock.now()) })).status, 303, `round ${round}: the current code still signs in`);
      }
    }
  });
});
