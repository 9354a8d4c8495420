/**
 * Discovery, JWKS, id_token signing and the signing key lifecycle over real HTTP on each database
 * (issue 5; issue 16 item 3, INTERFACE section 5). `svc keys rotate` and two instances:
 * test/oidc/key-rotation.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { loadSettings } from '../../src/config/settings.js';
import { NO_AUDIT } from '../../src/core/audit.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { ensureSigningKeys, openPrivateJwk, rotateSigningKeys, sealPrivateJwk } from '../../src/core/oidc/keys.js';
import { createDeps, prepareDatabase } from '../../src/deps.js';
import { accessTokenHash, issueIdToken } from '../../src/core/oidc/id-token.js';
import { siteUrls } from '../../src/core/urls.js';
import { runJanitor } from '../../src/janitor.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { svc } from '../support/cli.js';
import { TestClock } from '../support/clock.js';
import { holdsWithin } from '../support/eventually.js';
import { type TestDatabase, forEachDatabase } from '../support/databases.js';
import { freePort } from '../support/instances.js';
import {
  type TestClient, clientFields, codeExchangeFields, newClient, obtainCode, pkcePair, signedInBrowser, startOAuthApp, tokenRequest,
} from '../oauth/helpers.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const SECRET = 'a-keys-secret-of-at-least-32-characters!';
const OTHER_SECRET = 'another-keys-secret-of-32-characters-or-more';
/** The id_token lifetime plus five minutes (INTERFACE section 5). */
const PUBLISHED_AFTER_RETIREMENT_MS = (3600 + 300) * 1000;

async function jwks(base: string): Promise<{ keys: Array<Record<string, unknown>> }> {
  return (await fetch(`${base}/.well-known/jwks.json`)).json() as Promise<{ keys: Array<Record<string, unknown>> }>;
}

async function jwksKids(base: string): Promise<string[]> {
  return (await jwks(base)).keys.map((k) => String(k.kid));
}

/** A signed-in user's code for `c` with scope `openid`, and what redeems it. */
async function openidCode(t: TestApp, c: TestClient): Promise<Record<string, string>> {
  const { browser } = await signedInBrowser(t);
  const pkce = pkcePair();
  const code = await obtainCode(browser, c, { scope: 'openid profile:read', pkce, extra: { nonce: 'n-0S6' } });
  return codeExchangeFields(c, code, pkce);
}

/** The kid of the id_token a whole code flow on `t` gets now. */
async function signingKid(t: TestApp, c: TestClient): Promise<string> {
  const response = await tokenRequest(t, await openidCode(t, c));
  assert.equal(response.status, 200, await response.clone().text());
  return decodeProtectedHeader(((await response.json()) as { id_token: string }).id_token).kid!;
}

forEachDatabase('OpenID Connect keys and discovery', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  const sign = async (alg: 'RS256' | 'ES256', accessToken = 'svco_example') =>
    issueIdToken(await t.deps.keys.keySet(), { urls: siteUrls(t.baseUrl), timeZone: 'Asia/Shanghai' }, {
      issuer: t.baseUrl, client: { clientId: 'client-1', idTokenAlg: alg }, user: { id: 42, username: 'ann', nickname: 'ann', language: null, timeZone: null },
      scopes: ['openid', 'profile:read'], nonce: 'n-0S6', authTime: t.clock.now() - 60_000, accessToken, now: t.clock.now(),
    });

  test('discovery names the issuer and every endpoint under it, and is cacheable', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const res = await fetch(`${t.baseUrl}${path}`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('cache-control')!, /^public, max-age=\d+$/);
      const m = await res.json();
      assert.equal(m.issuer, t.baseUrl);
      assert.equal(m.authorization_endpoint, `${t.baseUrl}/oauth/authorize`);
      assert.equal(m.token_endpoint, `${t.baseUrl}/api/oauth/token`);
      assert.equal(m.userinfo_endpoint, `${t.baseUrl}/api/oauth/userinfo`);
      assert.equal(m.jwks_uri, `${t.baseUrl}/.well-known/jwks.json`);
      assert.equal(m.revocation_endpoint, `${t.baseUrl}/api/oauth/revoke`);
      assert.equal(m.introspection_endpoint, `${t.baseUrl}/api/oauth/introspect`);
      assert.deepEqual(m.scopes_supported, ['openid', 'profile', 'offline_access', 'profile:read', 'posts:read']);
      assert.deepEqual(m.response_types_supported, ['code']);
      assert.deepEqual(m.grant_types_supported, ['authorization_code', 'refresh_token']);
      assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(m.id_token_signing_alg_values_supported, ['RS256', 'ES256']);
      assert.deepEqual(m.subject_types_supported, ['public']);
      assert.equal(m.authorization_response_iss_parameter_supported, true);
      assert.ok(m.token_endpoint_auth_methods_supported.includes('client_secret_basic'));
      assert.ok(m.token_endpoint_auth_methods_supported.includes('client_secret_post'));
      for (const claim of ['sub', 'nonce', 'at_hash', 'auth_time', 'preferred_username', 'picture', 'profile']) {
        assert.ok(m.claims_supported.includes(claim), claim);
      }
    }
  });

  test('the JWKS lists an RS256 and an ES256 key with kid, use and alg, and never a private member', async () => {
    const { keys } = await jwks(t.baseUrl);
    assert.deepEqual(keys.map((k) => k.alg).sort(), ['ES256', 'RS256']);
    for (const key of keys) {
      assert.equal(key.use, 'sig');
      assert.match(String(key.kid), /^[A-Za-z0-9_-]{43}$/);
      for (const member of PRIVATE_MEMBERS) assert.equal(member in key, false, member);
    }
  });

  test('a client caches the JWKS for less than a new key is published before it signs, less the 5 s the instances take', async () => {
    const res = await fetch(`${t.baseUrl}/.well-known/jwks.json`);
    const maxAge = Number(/^public, max-age=(\d+)$/.exec(res.headers.get('cache-control')!)![1]);
    assert.ok(maxAge > 0);
    assert.ok(maxAge + 5 < t.deps.settings.signingKeyActivationSeconds, `max-age ${maxAge}`);
    assert.equal(t.deps.settings.signingKeyActivationSeconds, 120, 'the default of INTERFACE section 8');
  });

  test('an id_token verifies against the JWKS with the claims of INTERFACE section 5', async () => {
    const token = await sign('RS256', 'svco_accesstoken');
    const { payload, protectedHeader } = await jwtVerify(token, createRemoteJWKSet(new URL(`${t.baseUrl}/.well-known/jwks.json`)), {
      issuer: t.baseUrl, audience: 'client-1', currentDate: new Date(t.clock.now()),
    });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.sub, '42');
    assert.equal(payload.azp, 'client-1');
    assert.equal(payload.nonce, 'n-0S6');
    assert.equal(payload.auth_time, Math.floor((t.clock.now() - 60_000) / 1000));
    assert.equal(payload.exp! - payload.iat!, 3600);
    assert.equal(payload.at_hash, accessTokenHash('svco_accesstoken'));
    assert.equal(payload.preferred_username, 'ann');
    assert.equal(payload.picture, `${t.baseUrl}/avatars/42`);
    assert.equal(payload.profile, `${t.baseUrl}/u/ann`);
  });

  test('a client registered for ES256 gets an ES256 id_token', async () => {
    const token = await sign('ES256');
    assert.equal(decodeProtectedHeader(token).alg, 'ES256');
    await jwtVerify(token, createLocalJWKSet(await jwks(t.baseUrl) as never), { currentDate: new Date(t.clock.now()) });
  });

  test('the token endpoint reads the signing keys from memory, not once per request', async () => {
    const c = await newClient(t);
    const forms = [];
    for (let i = 0; i < 8; i++) forms.push(await openidCode(t, c));
    const keyStore = t.deps.stores.keys;
    const listPublished = keyStore.listPublished;
    let reads = 0;
    keyStore.listPublished = (at) => { reads++; return listPublished.call(keyStore, at); };
    try {
      const started = performance.now();
      for (const form of forms) assert.equal((await tokenRequest(t, form)).status, 200);
      // One read per refresh interval (2 s) at most, whatever the number of requests.
      assert.ok(reads <= 1 + Math.ceil((performance.now() - started) / 2000), `${reads} reads for ${forms.length} requests`);
    } finally {
      keyStore.listPublished = listPublished;
    }
  });
});

forEachDatabase('signing key lifecycle', (database) => {
  let t: TestApp;
  let c: TestClient;
  let oldKid: string;
  let rotation: Awaited<ReturnType<typeof rotateSigningKeys>>;
  before(async () => {
    t = await startOAuthApp(database, { clock: new TestClock(Date.now()) });
    c = await newClient(t);
  });
  after(() => t.close());

  test('a rotated key is in every JWKS within 5 s but signs only from active_at, SIGNING_KEY_ACTIVATION_SECONDS later', async () => {
    oldKid = await signingKid(t, c);
    t.clock.advance(60_000);
    const rotatedAt = t.clock.now();
    rotation = await rotateSigningKeys(t.deps.stores, t.deps.clock, undefined, { activationSeconds: t.deps.settings.signingKeyActivationSeconds });
    assert.equal(rotation.activeAt, rotatedAt + 120_000);
    // Published at once (no invalidate: the instance sees the database's change by itself)…
    const newKids = Object.values(rotation.kids);
    assert.ok(await holdsWithin(5000, async () => {
      const kids = await jwksKids(t.baseUrl);
      return newKids.every((kid) => kids.includes(kid));
    }), 'the new keys are listed within 5 s');
    // …but the old key signs until the new one is active.
    assert.equal(await signingKid(t, c), oldKid);
    t.clock.advance(rotation.activeAt - 1 - t.clock.now());
    assert.equal(await signingKid(t, c), oldKid);
    t.clock.advance(1);
    assert.equal(await signingKid(t, c), rotation.kids.RS256);
    assert.ok((await jwksKids(t.baseUrl)).includes(oldKid), 'the old key is still published');
  });

  test('a retired key leaves the JWKS after the id_token lifetime plus five minutes, and the janitor then deletes it', async () => {
    const row = async () => t.deps.database.db.selectFrom('signing_keys').select('kid').where('kid', '=', oldKid).executeTakeFirst();
    t.clock.advance(rotation.activeAt + PUBLISHED_AFTER_RETIREMENT_MS - 1 - t.clock.now());
    await runJanitor(t.deps);
    assert.ok((await jwksKids(t.baseUrl)).includes(oldKid), 'published until the window ends');
    assert.ok(await row(), 'kept until then');
    t.clock.advance(1);
    assert.ok(!(await jwksKids(t.baseUrl)).includes(oldKid), 'gone from the JWKS');
    const deleted = await runJanitor(t.deps);
    assert.equal(deleted.signing_keys, 2, 'the old RS256 and ES256 keys');
    assert.equal(await row(), undefined);
    assert.deepEqual((await jwksKids(t.baseUrl)).sort(), Object.values(rotation.kids).sort());
    assert.equal(await signingKid(t, c), rotation.kids.RS256);
  });
});

/** Starts the real entry point once, as `npm start` does, and returns how it ended. */
function startOnce(database: TestDatabase, env: Record<string, string>, port: number) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    encoding: 'utf8', timeout: 60_000,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, PORT: String(port), DEMO: '0', LOG_LEVEL: 'warn', ...env },
  });
}

forEachDatabase('signing keys at a first start', (database) => {
  test('instances starting together on a new database create one signing key per algorithm, so every instance signs with the same keys', async () => {
    // Each its own connection (pool), as separate processes have; the schema is made first, as
    // migrations take turns anyway. Then every one of them runs what a start runs, at once.
    const settings = loadSettings({ DATABASE_URL: database.url, DEMO: '0' });
    const starts = Array.from({ length: 4 }, () => createDeps(settings, { audit: NO_AUDIT }));
    try {
      await prepareDatabase(starts[0]!);
      await Promise.all(starts.map((deps) => ensureSigningKeys(deps.stores, deps.clock, undefined)));
      const rows = await starts[0]!.database.db.selectFrom('signing_keys').select('alg').execute();
      assert.deepEqual(rows.map((row) => row.alg).sort(), ['ES256', 'RS256'], 'one key per algorithm, not one per instance');
      // A later start finds them and adds none.
      await ensureSigningKeys(starts[1]!.stores, starts[1]!.clock, undefined);
      assert.equal((await starts[0]!.stores.keys.listAll()).length, 2);
    } finally {
      for (const deps of starts) await deps.close();
    }
  });
});

forEachDatabase('signing keys at rest (KEYS_SECRET)', (database) => {
  test('with KEYS_SECRET, private keys are encrypted at rest and still sign', async () => {
    const t = await startTestApp(database, { env: { KEYS_SECRET: SECRET } });
    try {
      const rows = await t.deps.database.db.selectFrom('signing_keys').select('private_jwk').execute();
      assert.ok(rows.length >= 2);
      for (const row of rows) {
        assert.match(row.private_jwk, /^enc:v2:/);
        assert.doesNotMatch(row.private_jwk, /"d"/);
      }
      const token = await issueIdToken(await t.deps.keys.keySet(), { urls: siteUrls(t.baseUrl), timeZone: 'Asia/Shanghai' }, {
        issuer: t.baseUrl, client: { clientId: 'c', idTokenAlg: 'ES256' }, user: { id: 1, username: 'x', nickname: 'x', language: null, timeZone: null },
        scopes: ['openid'], nonce: null, authTime: t.clock.now(), accessToken: 'a', now: t.clock.now(),
      });
      const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${t.baseUrl}/.well-known/jwks.json`)), { currentDate: new Date(t.clock.now()) });
      assert.equal(payload.nonce, undefined, 'no nonce when none was given (refresh)');
      assert.equal(payload.preferred_username, undefined, 'no profile claims without profile:read');
    } finally {
      await t.close();
    }
  });

  test('a start refuses, with one line, a database of encrypted keys without KEYS_SECRET or with another one', async () => {
    const port = await freePort();
    for (const env of [{}, { KEYS_SECRET: OTHER_SECRET }] as Array<Record<string, string>>) {
      const result = startOnce(database, env, port);
      assert.notEqual(result.status, 0, result.stdout);
      assert.match(result.stderr, /^[^\n]*KEYS_SECRET[^\n]*\n$/, 'one line naming KEYS_SECRET');
      assert.doesNotMatch(result.stdout, /Listening/);
    }
    // The command line refuses as well, and writes no key.
    const before = await countKeys(database);
    for (const env of [{}, { KEYS_SECRET: OTHER_SECRET }] as Array<Record<string, string>>) {
      const r = svc(database.url, ['keys', 'rotate', '--json'], env);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /^[^\n]*KEYS_SECRET[^\n]*\n$/);
      assert.equal(r.stdout, '');
    }
    assert.equal(await countKeys(database), before);
  });

  async function countKeys(db: TestDatabase): Promise<number> {
    const { openDatabase } = await import('../../src/storage/database.js');
    const handle = openDatabase(db.target);
    try {
      return (await handle.db.selectFrom('signing_keys').select('kid').execute()).length;
    } finally {
      await handle.close();
    }
  }
});

forEachDatabase('signing keys sealed when KEYS_SECRET comes later', (database) => {
  test('KEYS_SECRET set on a database of plaintext keys seals every one of them at start, and they keep signing', async () => {
    const plain = await startOAuthApp(database);
    const c = await newClient(plain);
    let kid: string;
    try {
      kid = await signingKid(plain, c);
      // A rotated-out key too: every private key at rest gets sealed, not only the current ones.
      await rotateSigningKeys(plain.deps.stores, plain.deps.clock, undefined, { activationSeconds: 120 });
      const rows = await plain.deps.database.db.selectFrom('signing_keys').select('private_jwk').execute();
      assert.equal(rows.length, 4);
      for (const row of rows) assert.match(row.private_jwk, /"d"/);
    } finally {
      await plain.close();
    }
    const sealed = await startOAuthApp(database, { env: { KEYS_SECRET: SECRET } });
    try {
      const rows = await sealed.deps.database.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).execute();
      assert.equal(rows.length, 4);
      for (const row of rows) {
        assert.match(row.private_jwk, /^enc:v2:/);
        assert.match(openPrivateJwk(row.private_jwk, SECRET, row.kid), /"d"/);
      }
      assert.equal(await signingKid(sealed, c), kid, 'the same key, now sealed');
    } finally {
      await sealed.close();
    }
  });
});

forEachDatabase('keys rotate with a KEYS_SECRET the servers do not have', (database) => {
  test('keys rotate with KEYS_SECRET on a database of plaintext keys is refused with one line, and writes no key', async () => {
    const plain = await startOAuthApp(database);
    await plain.close();
    const { openDatabase } = await import('../../src/storage/database.js');
    const handle = openDatabase(database.target);
    try {
      const before = await handle.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).orderBy('kid').execute();
      const r = svc(database.url, ['keys', 'rotate', '--json'], { KEYS_SECRET: SECRET });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /^[^\n]*not encrypted[^\n]*KEYS_SECRET[^\n]*\n$/);
      assert.equal(r.stdout, '');
      assert.deepEqual(await handle.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).orderBy('kid').execute(), before, 'nothing sealed, nothing added');
    } finally {
      await handle.close();
    }
  });
});

forEachDatabase('a signing failure in a token exchange', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database, { env: { KEYS_SECRET: SECRET } }); });
  after(() => t.close());

  test('a signing failure rolls the exchange back: the code and the refresh token can be presented again', async () => {
    const c = await newClient(t);
    const first = await tokenRequest(t, await openidCode(t, c));
    assert.equal(first.status, 200);
    const { refresh_token: refreshToken } = (await first.json()) as { refresh_token: string };
    const form = await openidCode(t, c);
    // New keys this instance cannot open (sealed with another secret), active at once and the
    // others withdrawn, so its secret opens none: every signature fails, as it did for every
    // exchange when keys were sealed and the secret missing. (While its secret opened the others,
    // a key it does not open would be an altered row: docs/oidc.md, "A damaged key".)
    const { kids } = await rotateSigningKeys(t.deps.stores, t.deps.clock, OTHER_SECRET, { activationSeconds: 120, retirePrevious: true });
    t.deps.keys.invalidate();
    // Never a 500 (INTERFACE section 6): 503 temporarily_unavailable, as when the database is away.
    const failed = await tokenRequest(t, form);
    assert.equal(failed.status, 503);
    assert.equal(((await failed.json()) as { error: string }).error, 'temporarily_unavailable');
    const refresh = { grant_type: 'refresh_token', refresh_token: refreshToken, ...clientFields(c) };
    assert.equal((await tokenRequest(t, refresh)).status, 503);
    assert.equal((await t.deps.stores.codes.find(hashSecret(form.code!)))?.usedAt, null, 'the code is not marked used');

    // The operator puts the keys right (sealed with the server's secret); the same code and the
    // same refresh token now work, and neither counts as reuse.
    const rows = await t.deps.database.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).where('kid', 'in', Object.values(kids)).execute();
    for (const row of rows) {
      await t.deps.stores.sealedColumns.replace('signing_keys.private_jwk', row.kid, row.private_jwk, sealPrivateJwk(openPrivateJwk(row.private_jwk, OTHER_SECRET, row.kid), SECRET, row.kid));
    }
    t.deps.keys.invalidate();
    const redeemed = await tokenRequest(t, form);
    assert.equal(redeemed.status, 200, await redeemed.clone().text());
    assert.equal(decodeProtectedHeader(((await redeemed.json()) as { id_token: string }).id_token).kid, kids.RS256);
    const refreshed = await tokenRequest(t, refresh);
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
  });
});
