/**
 * TOTP secrets stored before KEYS_SECRET was set are sealed by the next start with it, as the
 * signing keys are (docs/operations.md, KEYS_SECRET), on each database.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openSecret, sealSecret } from '../../src/core/security/sealing.js';
import { TOTP_SEAL_LABEL, newTotpSecret, totpCode } from '../../src/core/security/totp.js';
import { sealStoredTotpSecrets } from '../../src/core/security/two-step.js';
import { Browser, PASSWORD, newUser, unique } from '../oauth/helpers.js';
import { startTestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';

const KEYS_SECRET = 'a test secret of at least thirty-two characters';
const STEP = 30_000;

forEachDatabase('TOTP secrets at start', (database) => {
  test('a TOTP secret stored before KEYS_SECRET is sealed by the next start with it, and its codes still sign in', async () => {
    const clock = new TestClock();
    const before = await startTestApp(database, { clock });
    const user = await newUser(before);
    const secret = newTotpSecret();
    const stores = before.deps.stores;
    assert.equal(await stores.secondFactors.startTotp(user.id, secret, clock.now()), true);
    assert.equal(await stores.secondFactors.confirmTotp(user.id, Math.floor(clock.now() / STEP), [], clock.now()), true);
    assert.equal((await stores.secondFactors.findTotp(user.id))?.secret, secret, 'stored plain without KEYS_SECRET');
    await before.close();

    clock.advance(STEP);
    const after = await startTestApp(database, { clock, env: { KEYS_SECRET } });
    try {
      const stored = (await after.deps.stores.secondFactors.findTotp(user.id))!.secret;
      assert.match(stored, /^enc:v1:/);
      assert.ok(!stored.includes(secret));
      assert.equal(openSecret(stored, KEYS_SECRET, TOTP_SEAL_LABEL), secret);
      assert.equal(await sealStoredTotpSecrets(after.deps.stores, KEYS_SECRET), 0, 'nothing left to seal');

      const browser = new Browser(after);
      const first = await browser.signIn(user.username, PASSWORD);
      assert.equal(first.headers.get('location'), '/login/second-step');
      const second = await browser.postForm('/login/second-step', { _csrf: browser.cookies.get('svc_csrf')!, code: totpCode(secret, clock.now()) });
      assert.equal(second.status, 303, 'the code of the sealed secret signs in');
    } finally {
      await after.close();
    }
  });

  test('a secret sealed under another KEYS_SECRET is left as it is at start, and its second step fails closed: no session', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const user = await newUser(app);
      const secret = newTotpSecret();
      const foreign = sealSecret(secret, 'another secret of at least thirty-two characters', TOTP_SEAL_LABEL);
      const factors = app.deps.stores.secondFactors;
      await factors.startTotp(user.id, foreign, app.clock.now());
      await factors.confirmTotp(user.id, Math.floor(app.clock.now() / STEP), [], app.clock.now());
      app.clock.advance(STEP);
      assert.equal(await sealStoredTotpSecrets(app.deps.stores, KEYS_SECRET), 0);
      assert.equal((await factors.findTotp(user.id))?.secret, foreign, 'not sealed twice, not replaced');
      const browser = new Browser(app);
      assert.equal((await browser.signIn(user.username, PASSWORD)).headers.get('location'), '/login/second-step');
      const second = await browser.postForm('/login/second-step', { _csrf: browser.cookies.get('svc_csrf')!, code: totpCode(secret, app.clock.now()) });
      assert.notEqual(second.status, 303);
      assert.equal(browser.cookies.get('svc_session'), undefined, 'no session');
      assert.ok(!app.audit.some((e) => e.audit === 'sign_in.succeeded' && e.userId === user.id));
    } finally {
      await app.close();
    }
  });

  test('two starts sealing at once seal each secret once, past one batch, and every one still opens to its own', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const { stores, clock } = app.deps;
      const plain = new Map<number, string>();
      for (let i = 0; i < 130; i++) {
        const user = await stores.users.create({ username: unique('sealed'), passwordHash: 'not a hash', bio: '', member: false, level: 1, xp: 0 }, clock.now());
        const secret = newTotpSecret();
        await stores.secondFactors.startTotp(user.id, secret, clock.now());
        plain.set(user.id, secret);
      }
      const [first, second] = await Promise.all([sealStoredTotpSecrets(stores, KEYS_SECRET), sealStoredTotpSecrets(stores, KEYS_SECRET)]);
      assert.equal(first + second, plain.size, 'each sealed by exactly one of them');
      for (const [userId, secret] of plain) {
        const stored = (await stores.secondFactors.findTotp(userId))!.secret;
        assert.equal(openSecret(stored, KEYS_SECRET, TOTP_SEAL_LABEL), secret);
      }
      assert.equal(await sealStoredTotpSecrets(stores, KEYS_SECRET), 0, 'a third start has nothing to do');
    } finally {
      await app.close();
    }
  });

  test('sealing at start replaces only the secret it read: one changed meanwhile is left to the next look', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const user = await newUser(app);
      const factors = app.deps.stores.secondFactors;
      await factors.startTotp(user.id, 'FIRSTSECRETAAAAA', app.clock.now());
      await factors.startTotp(user.id, 'SECONDSECRETBBBB', app.clock.now());
      assert.equal(await factors.replaceTotpSecret(user.id, 'FIRSTSECRETAAAAA', 'enc:v1:stale'), false);
      assert.equal((await factors.findTotp(user.id))?.secret, 'SECONDSECRETBBBB');
      const unsealed = await factors.listTotpWithoutPrefix('enc:v1:', 1000);
      assert.ok(unsealed.some((row) => row.userId === user.id && row.secret === 'SECONDSECRETBBBB'));
    } finally {
      await app.close();
    }
  });
});
