/**
 * TOTP secrets stored before KEYS_SECRET was set are sealed by the next start with it, as the
 * signing keys are (docs/operations.md, KEYS_SECRET), on each database.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { generateRecoveryCodes, hashRecoveryCode } from '../../src/core/accounts/recovery-codes.js';
import { SEALED_COLUMNS, sealStoredSecrets } from '../../src/core/credentials/secrets-at-rest.js';
import { SEALED_MARK, SEALED_PREFIX, openSecret, sealSecret } from '../../src/core/credentials/sealing.js';
import { SharedKeys } from '../../src/core/credentials/shared-keys.js';
import { TokenMarks } from '../../src/core/credentials/token-marks.js';
import type { SealedColumn, StoredSecret } from '../../src/core/credentials/ports.js';
import type { Stores } from '../../src/core/stores.js';
import { newTotpSecret, totpCode } from '../../src/core/accounts/totp.js';
import { totpPlace } from '../../src/core/accounts/two-step.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT } from '../../src/core/accounts/sign-in.js';
import { Browser, PASSWORD, newUser, unique } from '../oauth/helpers.js';
import { type BaseDeps, createBaseDeps, prepareDatabase } from '../../src/base-deps.js';
import { keysRotate } from '../../src/cli/commands/operations.js';
import { tokenCreate as tokenCreateCommand } from '../../src/cli/commands/content.js';
import { createDeps, prepareStart } from '../../src/deps.js';
import { buildApp } from '../../src/app.js';
import { loadSettings } from '../../src/config/settings.js';
import { NO_AUDIT } from '../../src/core/audit.js';
import { SIGNING_ALGS } from '../../src/core/oidc/keys.js';
import { startTestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { type TestDatabase, forEachDatabase } from '../support/databases.js';
import { freePort } from '../support/instances.js';
import { uniqueKeyPrefix } from '../support/redis.js';

const KEYS_SECRET = 'a test secret of at least thirty-two characters';
const OTHER_KEYS_SECRET = 'another secret of at least thirty-two characters';
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
      assert.match(stored, /^enc:v2:/);
      assert.ok(!stored.includes(secret));
      assert.deepEqual(openSecret(stored, KEYS_SECRET, totpPlace(user.id)), { ok: true, plain: secret });
      assert.equal(await sealStoredSecrets(after.deps.stores, KEYS_SECRET), 0, 'nothing left to seal');

      const browser = new Browser(after);
      const first = await browser.signIn(user.username, PASSWORD);
      assert.equal(first.headers.get('location'), '/login/second-step');
      const second = await browser.postForm('/login/second-step', { _csrf: browser.cookies.get('svc_csrf')!, code: totpCode(secret, clock.now()) });
      assert.equal(second.status, 303, 'the code of the sealed secret signs in');
    } finally {
      await after.close();
    }
  });

  test('a secret sealed under another KEYS_SECRET (written by an instance started with another) refuses its second step with a page that says why: no session, no 500, one log line', async () => {
    const logLines: string[] = [];
    const app = await startTestApp(database, { env: { KEYS_SECRET }, logLines, logLevel: 'warn' });
    try {
      const user = await newUser(app);
      const secret = newTotpSecret();
      const foreign = sealSecret(secret, OTHER_KEYS_SECRET, totpPlace(user.id));
      const [recovery] = generateRecoveryCodes(1);
      const factors = app.deps.stores.secondFactors;
      await factors.startTotp(user.id, foreign, app.clock.now());
      await factors.confirmTotp(user.id, Math.floor(app.clock.now() / STEP), [hashRecoveryCode(recovery!)], app.clock.now());
      app.clock.advance(STEP);
      assert.deepEqual(openSecret(foreign, KEYS_SECRET, totpPlace(user.id)), { ok: false, reason: 'keys_secret_differs' }, 'an outcome, not an exception');
      assert.deepEqual(openSecret(foreign, undefined, totpPlace(user.id)), { ok: false, reason: 'keys_secret_missing' });
      const browser = new Browser(app);
      assert.equal((await browser.signIn(user.username, PASSWORD)).headers.get('location'), '/login/second-step');
      const logged = logLines.length;
      // More tries than the sign-in counters allow: none is counted, so none locks the owner out.
      for (let i = 0; i <= SIGN_IN_FAILURES_PER_ACCOUNT; i++) {
        const second = await browser.postForm('/login/second-step', { _csrf: browser.cookies.get('svc_csrf')!, code: totpCode(secret, app.clock.now()) });
        assert.equal(second.status, 503, 'refused as a fault of the server, never a 500');
        const page = await second.text();
        assert.match(page, /Codes from your authenticator app cannot be checked/);
        assert.match(page, /recovery code/);
        assert.match(page, /operator/);
        const alert = /role="alert"[^>]*>([^<]*)</.exec(page)![1]!;
        assert.doesNotMatch(alert, /KEYS_SECRET|seal|decipher|error|stack/i, 'the page names no internals');
        for (const text of [secret, foreign, 'enc:v1']) assert.ok(!page.includes(text), 'nor any secret');
      }
      assert.equal(browser.cookies.get('svc_session'), undefined, 'no session');
      assert.ok(!app.audit.some((e) => e.audit === 'sign_in.succeeded' && e.userId === user.id));
      const lines = logLines.slice(logged).map((line) => JSON.parse(line) as { level: number; msg: string; userId?: number });
      const errors = lines.filter((line) => line.level >= 50);
      assert.equal(errors.length, SIGN_IN_FAILURES_PER_ACCOUNT + 1, 'one error line per refusal');
      for (const line of errors) {
        assert.match(line.msg, /KEYS_SECRET differs from the one it was sealed with/, 'the cause, named');
        assert.equal(line.userId, user.id);
      }
      for (const text of [KEYS_SECRET, OTHER_KEYS_SECRET, secret, foreign]) assert.ok(!logLines.some((line) => line.includes(text)), 'no secret in the log');
      // A recovery code still signs in.
      const recovered = await browser.postForm('/login/second-step', { _csrf: browser.cookies.get('svc_csrf')!, code: recovery! });
      assert.equal(recovered.status, 303);
      // Signed in, the settings that ask for a code refuse the app's the same way.
      const disable = await browser.postForm('/settings/security', { _csrf: browser.cookies.get('svc_csrf')!, action: 'totp-disable', code: totpCode(secret, app.clock.now()) });
      assert.equal(disable.status, 503);
      assert.match(await disable.text(), /Codes from your authenticator app cannot be checked/);
      assert.equal((await factors.findTotp(user.id))?.secret, foreign, 'still on');
      // Gone again, as its operator would see to: a start refuses a database it is found in.
      await factors.removeTotp(user.id);
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
      const [first, second] = await Promise.all([sealStoredSecrets(stores, KEYS_SECRET), sealStoredSecrets(stores, KEYS_SECRET)]);
      assert.equal(first + second, plain.size, 'each sealed by exactly one of them');
      for (const [userId, secret] of plain) {
        const stored = (await stores.secondFactors.findTotp(userId))!.secret;
        assert.deepEqual(openSecret(stored, KEYS_SECRET, totpPlace(userId)), { ok: true, plain: secret });
      }
      assert.equal(await sealStoredSecrets(stores, KEYS_SECRET), 0, 'a third start has nothing to do');
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
      const column = 'totp_credentials.secret';
      assert.equal(await app.deps.stores.sealedColumns.replace(column, String(user.id), 'FIRSTSECRETAAAAA', 'enc:v2:stale'), false);
      assert.equal((await factors.findTotp(user.id))?.secret, 'SECONDSECRETBBBB');
      const unsealed = await app.deps.stores.sealedColumns.listWithoutPrefix(column, 'enc:v2:', undefined, 1000);
      assert.ok(unsealed.some((row) => row.row === String(user.id) && row.stored === 'SECONDSECRETBBBB'));
    } finally {
      await app.close();
    }
  });
});

/** `stored` with one bit of its ciphertext flipped: sealed under KEYS_SECRET still, but no longer opening. */
function altered(stored: string): string {
  const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
  raw[raw.length - 1]! ^= 1;
  return `${SEALED_PREFIX}${raw.toString('base64url')}`;
}

/** Every value of `column`, sealed or not, the sealed ones first. */
async function everyValue(stores: Stores, column: SealedColumn): Promise<StoredSecret[]> {
  const sealed = await stores.sealedColumns.listWithPrefix(column, SEALED_MARK, 1000);
  const plain = await stores.sealedColumns.listWithoutPrefix(column, SEALED_MARK, undefined, 1000);
  return [...sealed, ...plain];
}

forEachDatabase('a start among sealed values', (database) => {
  /** Two members with an authenticator app sealed under KEYS_SECRET, the first's value then altered as `alter` says. */
  async function twoSealedSeeds(app: Awaited<ReturnType<typeof startTestApp>>, alter: (userIds: number[]) => number[]): Promise<number[]> {
    const { stores, clock } = app.deps;
    const userIds: number[] = [];
    for (let i = 0; i < 2; i++) {
      const user = await newUser(app);
      await stores.secondFactors.startTotp(user.id, sealSecret(newTotpSecret(), KEYS_SECRET, totpPlace(user.id)), clock.now());
      userIds.push(user.id);
    }
    for (const userId of alter(userIds)) {
      const stored = (await stores.secondFactors.findTotp(userId))!.secret;
      assert.equal(await stores.sealedColumns.replace('totp_credentials.secret', String(userId), stored, altered(stored)), true);
    }
    return userIds;
  }

  test('TOTP seeds refuse a start only when KEYS_SECRET opens none of the first sealed ones: one altered, first in row order, stops neither the start nor its sealing', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const [alteredId] = await twoSealedSeeds(app, ([first]) => [first!]);
      assert.equal(await sealStoredSecrets(app.deps.stores, KEYS_SECRET), 0);
      assert.equal(openSecret((await app.deps.stores.secondFactors.findTotp(alteredId!))!.secret, KEYS_SECRET, totpPlace(alteredId!)).ok, false, 'left as it was, for its account to be told');
      await assert.rejects(sealStoredSecrets(app.deps.stores, OTHER_KEYS_SECRET), /KEYS_SECRET differs/);
    } finally {
      await app.close();
    }
  });

  test('a start whose KEYS_SECRET opens none of a column\'s sealed values is refused, naming the column and the first row', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const { stores } = app.deps;
      // This suite's first test left its seeds, one of them opening: altered too, so none opens.
      const sealed = await stores.sealedColumns.listWithPrefix('totp_credentials.secret', SEALED_PREFIX, 1000);
      for (const { row, stored } of sealed) {
        if (openSecret(stored, KEYS_SECRET, totpPlace(Number(row))).ok) await stores.sealedColumns.replace('totp_credentials.secret', row, stored, altered(stored));
      }
      await twoSealedSeeds(app, (ids) => ids);
      const [first] = await stores.sealedColumns.listWithPrefix('totp_credentials.secret', SEALED_PREFIX, 1);
      await assert.rejects(sealStoredSecrets(stores, KEYS_SECRET), (error: Error) => error.name === 'KeysSecretError' && error.message.includes(`(totp_credentials.secret, row ${first!.row})`));
    } finally {
      await app.close();
    }
  });
});

forEachDatabase('a start among values that do not open', (database) => {
  const TOTP = 'totp_credentials.secret';
  const SERVER_SECRETS = 'server_secrets.value';

  test('a value in the earlier sealed form that does not open is left as it is, and the plain values beside it are still sealed', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const { stores, clock } = app.deps;
      const seeds = new Map<number, string>();
      for (const form of ['sealed', 'sealed', 'plain', 'v1', 'plain'] as const) {
        const user = await newUser(app);
        const seed = form === 'v1' ? `enc:v1:${randomBytes(60).toString('base64url')}` : newTotpSecret();
        await stores.secondFactors.startTotp(user.id, form === 'sealed' ? sealSecret(seed, KEYS_SECRET, totpPlace(user.id)) : seed, clock.now());
        seeds.set(user.id, seed);
      }
      assert.equal(await sealStoredSecrets(stores, KEYS_SECRET), 2, 'the two plain seeds');
      for (const [userId, seed] of seeds) {
        const stored = (await stores.secondFactors.findTotp(userId))!.secret;
        if (seed.startsWith('enc:v1:')) assert.equal(stored, seed, 'left for its account to be told');
        else assert.deepEqual(openSecret(stored, KEYS_SECRET, totpPlace(userId)), { ok: true, plain: seed });
      }
    } finally {
      await app.close();
    }
  });

  test('TOTP seeds of several members that do not open stop no start while another opens: each is its member\'s', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const { stores, clock } = app.deps;
      for (let i = 0; i < 3; i++) {
        const user = await newUser(app);
        await stores.secondFactors.startTotp(user.id, altered(sealSecret(newTotpSecret(), KEYS_SECRET, totpPlace(user.id))), clock.now());
      }
      assert.equal(await sealStoredSecrets(stores, KEYS_SECRET), 0);
    } finally {
      await app.close();
    }
  });

  test('a server secret that does not open refuses the start, naming its row and what to do; deleted, a new one is made', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const { stores, clock } = app.deps;
      const stored = (await everyValue(stores, SERVER_SECRETS)).find(({ row }) => row === 'dpop-nonce-hmac')!;
      assert.ok(openSecret(stored.stored, KEYS_SECRET, { column: SERVER_SECRETS, row: stored.row }).ok, 'made sealed by the start');
      assert.equal(await stores.sealedColumns.replace(SERVER_SECRETS, stored.row, stored.stored, altered(stored.stored)), true);
      await assert.rejects(sealStoredSecrets(stores, KEYS_SECRET), (error: Error) => error.name === 'KeysSecretError'
        && error.message.includes('(server_secrets.value, row dpop-nonce-hmac)') && error.message.includes('delete those rows: the next start makes new ones'));
      await app.deps.database.db.deleteFrom('server_secrets').where('name', '=', 'dpop-nonce-hmac').execute();
      assert.equal(await sealStoredSecrets(stores, KEYS_SECRET), 0);
      await new SharedKeys(stores.serverSecrets, clock).readAll();
      const made = (await everyValue(stores, SERVER_SECRETS)).find(({ row }) => row === 'dpop-nonce-hmac')!;
      assert.ok(openSecret(made.stored, KEYS_SECRET, { column: SERVER_SECRETS, row: made.row }).ok);
    } finally {
      await app.close();
    }
  });

  test('a start refused for a row key written by hand in the database names it in quotes (a quote in it doubled), on one line with its invisible characters escaped', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    const name = 'by hand\n2026-12-05 error: \u2028row", row "x';
    try {
      const { database: handle, clock } = app.deps;
      await handle.db.insertInto('server_secrets').values({ name, value: altered(sealSecret('x', KEYS_SECRET, { column: SERVER_SECRETS, row: name })), created_at: clock.now() }).execute();
      try {
        const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
          encoding: 'utf8', timeout: 60_000,
          env: { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, PORT: String(await freePort()), DEMO: '0', LOG_LEVEL: 'warn', KEYS_SECRET },
        });
        assert.equal(result.status, 1, result.stdout);
        assert.match(result.stderr, /^failed to start: [\x20-\x7e]+\n$/, 'one printable line');
        assert.ok(result.stderr.includes('(server_secrets.value, row "by hand\\u{a}2026-12-05 error: \\u{2028}row"", row ""x")'), result.stderr);
      } finally {
        await handle.db.deleteFrom('server_secrets').where('name', '=', name).execute();
      }
    } finally {
      await app.close();
    }
  });

  test('a database whose values were sealed under two secrets, row by row, is refused under either', async () => {
    const app = await startTestApp(database, { env: { KEYS_SECRET } });
    try {
      const { stores } = app.deps;
      const columns: SealedColumn[] = ['signing_keys.private_jwk', TOTP, SERVER_SECRETS];
      const plain = new Map<SealedColumn, { row: string; plain: string }[]>();
      for (const column of columns) {
        const opening = (await everyValue(stores, column)).flatMap(({ row, stored }) => {
          const opened = openSecret(stored, KEYS_SECRET, { column, row });
          return opened.ok ? [{ row, stored, plain: opened.plain }] : [];
        });
        // As two instances given different secrets would leave it, sealing side by side.
        for (const [i, { row, stored, plain: value }] of opening.entries()) {
          assert.equal(await stores.sealedColumns.replace(column, row, stored, sealSecret(value, i % 2 === 0 ? KEYS_SECRET : OTHER_KEYS_SECRET, { column, row })), true);
        }
        plain.set(column, opening);
      }
      for (const keysSecret of [KEYS_SECRET, OTHER_KEYS_SECRET]) {
        await assert.rejects(sealStoredSecrets(stores, keysSecret), (error: Error) => error.name === 'KeysSecretError'
          && error.message.includes('do not all open with the KEYS_SECRET that opens the others (server_secrets.value, rows '));
      }
      // Back as the other suites' starts left them.
      for (const column of columns) {
        for (const { row, plain: value } of plain.get(column)!) {
          const now = (await everyValue(stores, column)).find((value) => value.row === row)!;
          await stores.sealedColumns.replace(column, row, now.stored, sealSecret(value, KEYS_SECRET, { column, row }));
        }
      }
      assert.equal(await sealStoredSecrets(stores, KEYS_SECRET), 0);
    } finally {
      await app.close();
    }
  });
});

/** Deps on `database` as a server or the command line given `keysSecret` has them. */
function depsUnder(database: TestDatabase, keysSecret: string | undefined): BaseDeps {
  return createBaseDeps(loadSettings({ DATABASE_URL: database.url, DEMO: '0', ...(keysSecret ? { KEYS_SECRET: keysSecret } : {}) }), { audit: NO_AUDIT });
}

/**
 * `first` and `second` run at once on `database`, the one given KEYS_SECRET and the other
 * OTHER_KEYS_SECRET, each one's first write (a value sealed, a key made, a transaction) held until
 * the other has looked at what is stored (every sealed column, or the signing keys), or for half a
 * second: without turns, both would find nothing sealed and write under their own secret. Returns
 * how each ended, and stores to read the database with.
 */
async function atOnce(database: TestDatabase, first: (deps: BaseDeps) => Promise<unknown>, second: (deps: BaseDeps) => Promise<unknown>): Promise<{ outcomes: PromiseSettledResult<unknown>[]; stores: Stores; close: () => Promise<void> }> {
  const runs = [first, second];
  const starts = [KEYS_SECRET, OTHER_KEYS_SECRET].map((keysSecret) => depsUnder(database, keysSecret));
  const columns = Object.keys(SEALED_COLUMNS).length;
  const samples = [0, 0];
  const sawAll: (() => void)[] = [];
  const looked = [0, 1].map(() => new Promise<void>((resolve) => { sawAll.push(resolve); }));
  const held = starts.map(({ stores }, self): Stores => {
    let waited = false;
    // Both released in the same turn once both looked: their writes then interleave.
    const firstWrite = async () => {
      if (waited) return;
      waited = true;
      await Promise.race([looked[1 - self]!, new Promise((resolve) => setTimeout(resolve, 500))]);
    };
    return {
      ...stores,
      sealedColumns: {
        ...stores.sealedColumns,
        listWithPrefix: async (...args) => {
          const listed = await stores.sealedColumns.listWithPrefix(...args);
          if (++samples[self]! === columns) sawAll[self]!();
          return listed;
        },
        listWithoutPrefix: (...args) => stores.sealedColumns.listWithoutPrefix(...args),
        replace: async (...args) => {
          await firstWrite();
          return stores.sealedColumns.replace(...args);
        },
      },
      keys: {
        ...stores.keys,
        listAll: async () => {
          const keys = await stores.keys.listAll();
          sawAll[self]!();
          return keys;
        },
        insertUnlessLive: async (...args) => {
          await firstWrite();
          return stores.keys.insertUnlessLive(...args);
        },
      },
      serverSecrets: {
        getOrCreate: async (...args) => {
          await firstWrite();
          return stores.serverSecrets.getOrCreate(...args);
        },
      },
      transaction: async (work) => {
        await firstWrite();
        return stores.transaction(work);
      },
    };
  });
  const outcomes = await Promise.allSettled(starts.map((deps, i) => {
    const sharedKeys = new SharedKeys(held[i]!.serverSecrets, deps.clock);
    return runs[i]!({ ...deps, stores: held[i]!, sharedKeys, tokenMarks: new TokenMarks(sharedKeys) });
  }));
  return { outcomes, stores: starts[0]!.stores, close: async () => { for (const deps of starts) await deps.close(); } };
}

/** A server's start (`prepareStart`), as `atOnce` runs one. */
const serverStart = (deps: BaseDeps) => prepareStart(deps);

/** That exactly one of `outcomes` went on, the other refused for its KEYS_SECRET, and every sealed value of the database opens under the one's. */
async function oneWentOn(outcomes: PromiseSettledResult<unknown>[], stores: Stores): Promise<void> {
  const fulfilled = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? [i] : []));
  assert.equal(fulfilled.length, 1, 'one went on, the other was refused');
  const refused = outcomes[1 - fulfilled[0]!] as PromiseRejectedResult;
  assert.equal((refused.reason as Error).name, 'KeysSecretError');
  await everyValueUnder(stores, [KEYS_SECRET, OTHER_KEYS_SECRET][fulfilled[0]!]!);
}

/** That every value of every sealed column is sealed, and opens under `keysSecret`. */
async function everyValueUnder(stores: Stores, keysSecret: string): Promise<void> {
  for (const column of Object.keys(SEALED_COLUMNS) as SealedColumn[]) {
    for (const { row, stored } of await everyValue(stores, column)) {
      assert.ok(stored.startsWith(SEALED_PREFIX) && openSecret(stored, keysSecret, { column, row }).ok, `${column} ${row} sealed under ${keysSecret}`);
    }
  }
}

forEachDatabase('two starts at once under different KEYS_SECRETs, on a database stored plain', (database) => {
  test('the start whose turn comes second is refused before it writes, and every value ends under the other\'s secret (attack134)', async () => {
    const plain = await startTestApp(database, {});
    try {
      const { stores, clock } = plain.deps;
      for (let i = 0; i < 130; i++) {
        const user = await stores.users.create({ username: unique('plain'), passwordHash: 'not a hash', bio: '', member: false, level: 1, xp: 0 }, clock.now());
        await stores.secondFactors.startTotp(user.id, newTotpSecret(), clock.now());
      }
    } finally {
      await plain.close();
    }
    const { outcomes, stores, close } = await atOnce(database, serverStart, serverStart);
    try {
      await oneWentOn(outcomes, stores);
      assert.equal((await everyValue(stores, 'totp_credentials.secret')).length, 130);
    } finally {
      await close();
    }
  });
});

forEachDatabase('two starts at once under different KEYS_SECRETs, on a new database', (database) => {
  test('the start whose turn comes second finds the keys the first made, and is refused before it makes its own', async () => {
    const { outcomes, stores, close } = await atOnce(database, serverStart, serverStart);
    try {
      await oneWentOn(outcomes, stores);
      assert.equal((await stores.keys.listAll()).length, SIGNING_ALGS.length, 'one key per algorithm');
      assert.ok((await everyValue(stores, 'server_secrets.value')).length > 0, 'the shared HMAC keys made in the turn');
    } finally {
      await close();
    }
  });
});

/** A command's terminal where nobody answers. */
const noTerminal = { readStdin: async () => '', interactive: false, askHidden: async () => '', afterAnswer: () => {} };

forEachDatabase('keys rotate under another KEYS_SECRET while a server starts on a new database', (database) => {
  test('of the command and the start, the one whose turn comes second is refused: no keys under two secrets (attack135)', async () => {
    // As the command line runs it: migrations first, in their own turn (src/cli/main.ts).
    const rotate = async (deps: BaseDeps) => {
      await prepareDatabase(deps);
      return keysRotate.run(deps, { now: true }, noTerminal);
    };
    const { outcomes, stores, close } = await atOnce(database, rotate, serverStart);
    try {
      await oneWentOn(outcomes, stores);
    } finally {
      await close();
    }
  });
});

/** A member made as `svc user create` makes one, without KEYS_SECRET, on `database` readied by `ready`; its username. */
async function memberMade(database: TestDatabase, ready: (deps: BaseDeps) => Promise<unknown>): Promise<string> {
  const deps = depsUnder(database, undefined);
  const username = unique('tokened');
  try {
    await ready(deps);
    await deps.stores.users.create({ username, passwordHash: 'not a hash', bio: '', member: true, level: 1, xp: 0 }, deps.clock.now());
  } finally {
    await deps.close();
  }
  return username;
}

forEachDatabase('svc token create under another KEYS_SECRET while the first server starts on a database', (database) => {
  test('of the command and the start, the one whose turn comes second is refused: the token mark is not made under another secret between the start\'s check and its read of the keys (attack136 F1)', async () => {
    // Made before any server started: no secret yet.
    const username = await memberMade(database, prepareDatabase);
    // Its migration turn ended before the start's began (src/cli/main.ts).
    const tokenCreate = (deps: BaseDeps) => tokenCreateCommand.run(deps, { username, name: 'backup script', scopes: 'profile:read' }, noTerminal);
    const { outcomes, stores, close } = await atOnce(database, tokenCreate, serverStart);
    try {
      await oneWentOn(outcomes, stores);
    } finally {
      await close();
    }
  });
});

forEachDatabase('svc token create with KEYS_SECRET on a database its servers keep plain', (database) => {
  test('is refused, naming what to do, and seals nothing: a shared key made sealed among plain ones would refuse the servers\' next start (attack138 F7)', async () => {
    const username = await memberMade(database, async (plain) => {
      await prepareStart(plain);
      // One shared key missing, as after an operator deleted it for the next start to make anew.
      await plain.database.db.deleteFrom('server_secrets').where('name', '=', 'token-mark-hmac').execute();
    });
    const sealing = depsUnder(database, KEYS_SECRET);
    try {
      await assert.rejects(tokenCreateCommand.run(sealing, { username, name: 'backup script', scopes: 'profile:read' }, noTerminal),
        (error: Error) => error.name === 'KeysSecretError' && /not encrypted, so the servers run without KEYS_SECRET/.test(error.message));
      for (const column of Object.keys(SEALED_COLUMNS) as SealedColumn[]) {
        for (const { row, stored } of await everyValue(sealing.stores, column)) assert.ok(!stored.startsWith(SEALED_PREFIX), `${column} ${row} left plain`);
      }
    } finally {
      await sealing.close();
    }
  });
});

forEachDatabase('a start without KEYS_SECRET whose turn comes before one with it, on a new database', (database) => {
  test('is refused before it listens, and what it made is sealed by the other: the shared HMAC keys are not made after the other\'s turn, in plaintext (attack135)', async () => {
    const [without, withSecret] = [depsUnder(database, undefined), depsUnder(database, KEYS_SECRET)];
    try {
      await prepareStart(without);
      await prepareStart(withSecret);
      // Its server, on deps of its own (src/server.ts), reads them before it listens: after the
      // other's turn, sealed now, they do not open for it.
      const serving = createDeps(loadSettings({ DATABASE_URL: database.url, DEMO: '0' }), { audit: NO_AUDIT, redisKeyPrefix: uniqueKeyPrefix() });
      const app = await buildApp(serving, { logLevel: 'silent' });
      try {
        await assert.rejects(async () => { await app.ready(); }, (error: Error) => error.name === 'KeysSecretError' && error.message.includes('server_secrets.value'));
      } finally {
        await app.close();
        await serving.close();
      }
      await everyValueUnder(withSecret.stores, KEYS_SECRET);
      assert.ok((await everyValue(withSecret.stores, 'server_secrets.value')).length > 0);
    } finally {
      await without.close();
      await withSecret.close();
    }
  });
});
