/**
 * Secrets at rest (README "Settings", KEYS_SECRET; docs/operations.md): with KEYS_SECRET every
 * secret the database holds in a form the service reads back (signing keys, TOTP seeds, server
 * HMAC secrets) is stored sealed, bound to its row, and what was stored plain is sealed at start;
 * a database of sealed values refuses a start without the secret; without it, a start off a
 * loopback BASE_URL warns once. Real starts and real HTTP, on each database.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { openSecret } from '../../src/core/credentials/sealing.js';
import { newTotpSecret, totpCode } from '../../src/core/accounts/totp.js';
import { totpPlace } from '../../src/core/accounts/two-step.js';
import { openDatabase } from '../../src/storage/database.js';
import { Browser, PASSWORD, newUser } from '../oauth/helpers.js';
import { startTestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { type TestDatabase, forEachDatabase } from '../support/databases.js';
import { freePort } from '../support/instances.js';
import { run } from '../support/processes.js';

const KEYS_SECRET = 'a test secret of at least thirty-two characters';
const OTHER_KEYS_SECRET = 'another secret of at least thirty-two characters';
const STEP = 30_000;

/** The raw rows, read apart from any app. */
async function raw<T>(database: TestDatabase, read: (db: ReturnType<typeof openDatabase>['db']) => Promise<T>): Promise<T> {
  const handle = openDatabase(database.target);
  try {
    return await read(handle.db);
  } finally {
    await handle.close();
  }
}

/** The service as `npm start` runs it, on `database` with `env`. */
function startService(database: TestDatabase, env: Record<string, string>, port: number) {
  return run(process.execPath, ['--import', 'tsx', 'src/main.ts'], { DATABASE_URL: database.url, PORT: String(port), DEMO: '0', LOG_LEVEL: 'warn', ...env });
}

forEachDatabase('TOTP seeds written with KEYS_SECRET', (database) => {
  test('with KEYS_SECRET a TOTP seed enrolled over HTTP is stored sealed for its account: the row holds no seed, and moved to another account it does not open', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const user = await newUser(app);
      const other = await newUser(app);
      const browser = new Browser(app);
      assert.equal((await browser.signIn(user.username)).status, 303);
      const started = await (await browser.postForm('/settings/security', { _csrf: browser.cookies.get('svc_csrf')!, action: 'totp-start' })).text();
      const seed = /id="totp-secret">([A-Z2-7 ]+)</.exec(started)![1]!.replace(/ /g, '');
      const stored = await raw(database, async (db) => (await db.selectFrom('totp_credentials').select('secret').where('user_id', '=', user.id).executeTakeFirstOrThrow()).secret);
      assert.match(stored, /^enc:v2:/);
      assert.ok(!stored.includes(seed), 'no seed in the row');
      assert.deepEqual(openSecret(stored, KEYS_SECRET, totpPlace(user.id)), { ok: true, plain: seed });
      assert.deepEqual(openSecret(stored, KEYS_SECRET, totpPlace(other.id)), { ok: false, reason: 'keys_secret_differs' }, 'bound to its row');
    } finally {
      await app.close();
    }
  });

});

forEachDatabase('secrets stored before KEYS_SECRET', (database) => {
  test('a start with KEYS_SECRET seals the TOTP seeds and server HMAC secrets stored plain, and two-step sign-in still works', async () => {
    const clock = new TestClock();
    const plain = await startTestApp(database, { clock });
    const user = await newUser(plain);
    const seed = newTotpSecret();
    try {
      await plain.deps.stores.secondFactors.startTotp(user.id, seed, clock.now());
      await plain.deps.stores.secondFactors.confirmTotp(user.id, Math.floor(clock.now() / STEP), [], clock.now());
      // A sign-in makes the device cookies' HMAC secret.
      assert.equal((await new Browser(plain).signIn(user.username)).headers.get('location'), '/login/second-step');
    } finally {
      await plain.close();
    }
    const before = await raw(database, (db) => db.selectFrom('server_secrets').select(['name', 'value']).execute());
    assert.ok(before.some((row) => row.name === 'device-cookie-hmac'));
    for (const row of before) assert.doesNotMatch(row.value, /^enc:/, 'stored plain without KEYS_SECRET');

    clock.advance(STEP);
    const sealed = await startTestApp(database, { clock, env: { KEYS_SECRET } });
    try {
      const after = await raw(database, (db) => db.selectFrom('server_secrets').select(['name', 'value']).execute());
      assert.equal(after.length, before.length);
      for (const row of after) {
        assert.match(row.value, /^enc:v2:/, `${row.name} sealed`);
        const was = before.find((b) => b.name === row.name)!.value;
        assert.deepEqual(openSecret(row.value, KEYS_SECRET, { column: 'server_secrets.value', row: row.name }), { ok: true, plain: was }, 'the same secret');
      }
      const stored = await raw(database, async (db) => (await db.selectFrom('totp_credentials').select('secret').where('user_id', '=', user.id).executeTakeFirstOrThrow()).secret);
      assert.match(stored, /^enc:v2:/);
      assert.ok(!stored.includes(seed));

      const browser = new Browser(sealed);
      assert.equal((await browser.signIn(user.username, PASSWORD)).headers.get('location'), '/login/second-step');
      const second = await browser.postForm('/login/second-step', { _csrf: browser.cookies.get('svc_csrf')!, code: totpCode(seed, clock.now()) });
      assert.equal(second.status, 303, 'the sealed seed still makes the codes');
      assert.ok(browser.cookies.get('svc_session'));
    } finally {
      await sealed.close();
    }
  });

});

forEachDatabase('a database of sealed secrets', (database) => {
  test('a start without KEYS_SECRET, or with another, on a database whose TOTP seeds or server secrets are sealed is refused with one line', async () => {
    // Sealed by a start with the secret; the signing keys put back in plaintext, so only the
    // other secrets can stop the start.
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const user = await newUser(app);
      const browser = new Browser(app);
      assert.equal((await browser.signIn(user.username)).status, 303);
      await browser.postForm('/settings/security', { _csrf: browser.cookies.get('svc_csrf')!, action: 'totp-start' });
      const keys = await app.deps.database.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).execute();
      for (const key of keys) {
        const opened = openSecret(key.private_jwk, KEYS_SECRET, { column: 'signing_keys.private_jwk', row: key.kid });
        assert.ok(opened.ok);
        await app.deps.stores.sealedColumns.replace('signing_keys.private_jwk', key.kid, key.private_jwk, opened.plain);
      }
    } finally {
      await app.close();
    }
    const port = await freePort();
    for (const env of [{}, { KEYS_SECRET: OTHER_KEYS_SECRET }] as Array<Record<string, string>>) {
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        encoding: 'utf8', timeout: 60_000,
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, PORT: String(port), DEMO: '0', LOG_LEVEL: 'warn', ...env },
      });
      assert.notEqual(result.status, 0, result.stdout);
      assert.match(result.stderr, /^failed to start: [^\n]*(TOTP seeds|server HMAC secrets)[^\n]*KEYS_SECRET[^\n]*\n$/, 'one line naming what is sealed and KEYS_SECRET');
      assert.doesNotMatch(result.stdout, /Listening/);
      for (const secret of [KEYS_SECRET, OTHER_KEYS_SECRET]) assert.ok(!result.stderr.includes(secret), 'no secret in the line');
    }
    const keys = await raw(database, (db) => db.selectFrom('signing_keys').select('private_jwk').execute());
    for (const key of keys) assert.doesNotMatch(key.private_jwk, /^enc:/, 'a refused start seals nothing');
  });

});

forEachDatabase('a start without KEYS_SECRET', (database) => {
  test('a start without KEYS_SECRET warns in one line, naming what stays plaintext and how to set it, where BASE_URL is not a loopback address, and not on a loopback one', async () => {
    const cases = [
      { baseUrl: 'http://idp.example.test', warns: true },
      { baseUrl: 'http://127.0.0.1', warns: false },
      { baseUrl: 'http://localhost', warns: false },
    ];
    for (const { baseUrl, warns } of cases) {
      const port = await freePort();
      const service = startService(database, { BASE_URL: `${baseUrl}:${port}`, HOST: '127.0.0.1' }, port);
      try {
        await service.waitFor(/Listening on/);
      } finally {
        service.child.kill('SIGTERM');
        await service.exited;
      }
      const warnings = service.output().split('\n').filter((line) => line.includes('KEYS_SECRET'));
      if (!warns) {
        assert.deepEqual(warnings, [], `no warning at ${baseUrl}`);
        continue;
      }
      assert.equal(warnings.length, 1, `one line at ${baseUrl}: ${service.output()}`);
      for (const named of ['signing keys', 'TOTP seeds', 'HMAC secrets', 'plaintext', 'KEYS_SECRET=$(openssl rand -base64 48)']) {
        assert.ok(warnings[0]!.includes(named), `names ${named}`);
      }
    }
    // With KEYS_SECRET, off a loopback address too, nothing to warn of.
    const port = await freePort();
    const service = startService(database, { BASE_URL: `http://idp.example.test:${port}`, HOST: '127.0.0.1', KEYS_SECRET }, port);
    try {
      await service.waitFor(/Listening on/);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    assert.doesNotMatch(service.output(), /Warning: KEYS_SECRET/);
  });
});
