/**
 * Attack 132 on d8b468ab ("A damaged stored signing key fails only its algorithm's tokens, names
 * itself on /readyz and stays ready"; docs/oidc.md, "A damaged key"). Over real HTTP, two
 * instances on one database, both databases. Each test asserts the rule as the docs state it: a
 * failing test is a fault.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { type Rotation, generateRotation, rotateSigningKeys, storeRotation } from '../../src/core/oidc/keys.js';
import type { GeneratedSigningKey, IdTokenAlg } from '../../src/core/oidc/ports.js';
import { CookieJar, authorize, pkcePair } from '../support/browser-flow.js';
import { forEachDatabase } from '../support/databases.js';
import { holdsWithin } from '../support/eventually.js';
import { type Instance, type Instances, startInstances } from '../support/instances.js';
import { svc } from '../support/cli.js';
import { LogoutReceiver } from '../support/logout-receiver.js';

const PASSWORD = 'correct horse battery';
const PROPAGATION_MS = 5000;
const REDIRECT_URI = 'https://app.example/callback';
const OTHER: Record<IdTokenAlg, IdTokenAlg> = { RS256: 'ES256', ES256: 'RS256' };

interface Answer {
  status: number;
  text: string;
  body: Record<string, unknown>;
}

interface App {
  clientId: string;
  secret: string;
  path: string;
}

type Jwk = Record<string, string>;
/** What replaces a fresh key's stored JSON (its private or its public JWK). */
type Damage = (fresh: GeneratedSigningKey) => string;

const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }) as Jwk;
const p256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as Jwk;
const own = (fresh: GeneratedSigningKey) => JSON.parse(fresh.privateJwk) as Jwk;

/** Private-JWK damage shapes, each for one algorithm's key. */
const PRIVATE_SHAPES: Array<{ name: string; alg: IdTokenAlg; damage: Damage }> = [
  { name: 'not JSON (a truncated private JWK)', alg: 'ES256', damage: (f) => f.privateJwk.slice(0, -7) },
  { name: 'a JSON array', alg: 'ES256', damage: () => '[]' },
  { name: 'the empty object', alg: 'RS256', damage: () => '{}' },
  { name: 'JSON null', alg: 'RS256', damage: () => 'null' },
  { name: 'a JSON string', alg: 'ES256', damage: () => '"a key"' },
  { name: 'its own public JWK (no private members)', alg: 'RS256', damage: (f) => f.publicJwk },
  { name: 'an RSA JWK whose n is another key\'s', alg: 'RS256', damage: (f) => JSON.stringify({ ...own(f), n: rsa().n }) },
  { name: 'an RSA key of 1,024 bits', alg: 'RS256', damage: () => JSON.stringify(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'jwk' })) },
  { name: 'the private JWK of another kid', alg: 'RS256', damage: () => JSON.stringify(rsa()) },
  { name: 'the published x and y with another key\'s d', alg: 'ES256', damage: (f) => JSON.stringify({ ...own(f), d: p256().d }) },
  { name: 'the published n and e with another key\'s private members', alg: 'RS256', damage: (f) => JSON.stringify({ ...rsa(), n: own(f).n, e: own(f).e }) },
];

/** Two instances on `databaseUrl`, a member, and an app of each algorithm whose back-channel logouts `receiver` takes. */
async function startWithApps(databaseUrl: string, env: Record<string, string>, logLines?: string[]) {
  const receiver = await LogoutReceiver.start();
  const instances = await startInstances(databaseUrl, 2, { LOGOUT_DELIVERY_INTERVAL: '0', ...env }, logLines ? { logLines } : {});
  const a = instances.list[0]!;
  const username = `atk132${randomBytes(4).toString('hex')}`;
  await createAccount(a.deps.stores, a.deps.clock, { username, password: PASSWORD });
  const apps = {} as Record<IdTokenAlg, App>;
  for (const alg of ['RS256', 'ES256'] as const) {
    const path = `/${alg}`;
    const registered = await registerClient(a.deps.stores, a.deps.clock, {
      name: `${alg} app`, type: 'confidential', redirectUris: [REDIRECT_URI], backchannelLogoutUri: receiver.url(path), idTokenAlg: alg,
    });
    apps[alg] = { clientId: registered.client.clientId, secret: registered.secret!, path };
  }
  return { receiver, instances, username, apps };
}

forEachDatabase('attack132: damaged stored signing keys', (database) => {
  let instances: Instances;
  let a: Instance;
  let b: Instance;
  const log: string[] = [];
  let receiver: LogoutReceiver;
  let username: string;
  let apps: Record<IdTokenAlg, App>;
  /** Private key members of every damaged row, and everything answered: none may be seen outside the database. */
  const secrets: string[] = [];
  const answered: string[] = [];

  before(async () => {
    ({ receiver, instances, username, apps } = await startWithApps(database.url, {}, log));
    [a, b] = [instances.list[0]!, instances.list[1]!];
  });
  after(async () => {
    await instances.close();
    await receiver.close();
  });

  async function get(url: string, init: RequestInit = {}): Promise<Answer> {
    const response = await fetch(url, init);
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try { body = JSON.parse(text) as Record<string, unknown>; } catch { /* not JSON */ }
    answered.push(text);
    return { status: response.status, text, body };
  }

  const post = (form: Record<string, string>, on: Instance = a) => get(`${on.base}/api/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString(),
  });
  const readiness = (on: Instance) => get(`${on.base}/readyz`);
  const signingKeysCheck = async (on: Instance) => String(((await readiness(on)).body.checks as Record<string, string> | undefined)?.signingKeys);

  async function codeForm(app: App): Promise<Record<string, string>> {
    const pkce = pkcePair();
    const back = await authorize(new CookieJar(), a.base, { clientId: app.clientId, redirectUri: REDIRECT_URI, scope: 'openid', codeChallenge: pkce.challenge, nonce: 'n' }, {
      credentials: { username, password: PASSWORD },
    });
    assert.equal(back.get('error'), null, back.get('error_description') ?? '');
    return { grant_type: 'authorization_code', code: back.get('code')!, redirect_uri: REDIRECT_URI, code_verifier: pkce.verifier, client_id: app.clientId, client_secret: app.secret };
  }

  async function verified(idToken: string, alg: IdTokenAlg): Promise<void> {
    await jwtVerify(idToken, createRemoteJWKSet(new URL(`${a.base}/.well-known/jwks.json`)), { audience: apps[alg].clientId, algorithms: [alg] });
  }

  const kids = async (on: Instance) => ((await (await fetch(`${on.base}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);

  async function seen(kid: string): Promise<void> {
    for (const on of [a, b]) assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await kids(on)).includes(kid)), 'the JWKS shows the new key within 5 s');
  }

  /** The private members (d, p, q, dp, dq, qi) of `stored`, JSON or not: public members are published anyway. */
  function remember(stored: string): void {
    for (const match of stored.matchAll(/"(d|p|q|dp|dq|qi)":"([A-Za-z0-9_-]{16,})"/g)) secrets.push(match[2]!);
  }

  /** A rotation whose `alg` key is stored with `column` replaced by `damage`'s; waits until both instances read it. */
  async function rotateDamaged(alg: IdTokenAlg, damage: Damage, options: { column?: 'private' | 'public'; now?: boolean } = {}): Promise<Rotation> {
    const fresh = (await generateRotation(undefined)).map((key) => {
      if (key.alg !== alg) return key;
      remember(key.privateJwk);
      const stored = damage(key);
      remember(stored);
      return options.column === 'public' ? { ...key, publicJwk: stored } : { ...key, privateJwk: stored };
    });
    const rotation = await a.deps.stores.transaction((tx) => storeRotation(tx, a.deps.clock, fresh, { activationSeconds: 120, now: options.now ?? true }));
    if (options.column === 'public') await sleep(2500);
    else await seen(rotation.kids[alg]);
    return rotation;
  }

  /** `svc keys rotate --now`, as /readyz says; both instances ok again within 5 s. */
  async function replace(): Promise<Rotation> {
    const rotation = await rotateSigningKeys(a.deps.stores, a.deps.clock, undefined, { activationSeconds: 120, now: true });
    await seen(rotation.kids.ES256);
    for (const on of [a, b]) assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await signingKeysCheck(on)) === 'ok'), 'ok again within 5 s');
    return rotation;
  }

  async function assertNamedAndReady(kid: string, alg: IdTokenAlg): Promise<void> {
    for (const on of [a, b]) {
      assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await signingKeysCheck(on)).includes(kid)), `instance ${on.base} names ${kid} within 5 s: ${await signingKeysCheck(on)}`);
      const ready = await readiness(on);
      assert.equal(ready.status, 200, ready.text);
      assert.equal(ready.body.status, 'ready');
      const check = String((ready.body.checks as Record<string, string>).signingKeys);
      assert.match(check, new RegExp(`signing key ${kid} \\(${alg}\\) cannot sign: .*svc keys rotate --now`));
    }
  }

  async function assertRefused(form: Record<string, string>): Promise<void> {
    const refused = await post(form);
    assert.equal(refused.status, 500, refused.text);
    assert.deepEqual(Object.keys(refused.body).sort(), ['error', 'error_description']);
    assert.equal(refused.body.error, 'server_error');
  }

  // ---------------------------------------------------------------- RS256, the default algorithm

  let heldRefresh: string;
  let heldAccess: string;
  let heldCode: Record<string, string>;
  let damagedRs: Rotation;

  test('a damaged RS256 key (a P-256 key in its row) is named on /readyz of both instances, which stay 200', async () => {
    const first = await post(await codeForm(apps.RS256));
    assert.equal(first.status, 200, first.text);
    heldRefresh = String(first.body.refresh_token);
    heldAccess = String(first.body.access_token);
    damagedRs = await rotateDamaged('RS256', () => JSON.stringify(p256()));
    await assertNamedAndReady(damagedRs.kids.RS256, 'RS256');
    assert.ok(!(await signingKeysCheck(a)).includes(damagedRs.kids.ES256), 'the ES256 key signs');
  });

  test('with a damaged RS256 key a code of an RS256 app is 500 server_error (RFC 6749 5.2) and an ES256 app gets its id_token', async () => {
    heldCode = await codeForm(apps.RS256);
    await assertRefused(heldCode);
    const other = await post(await codeForm(apps.ES256));
    assert.equal(other.status, 200, other.text);
    await verified(String(other.body.id_token), 'ES256');
  });

  test('with a damaged RS256 key an openid refresh of an RS256 app is 500 server_error, and the JWKS and userinfo still answer 200', async () => {
    await assertRefused({ grant_type: 'refresh_token', refresh_token: heldRefresh, client_id: apps.RS256.clientId, client_secret: apps.RS256.secret });
    const jwks = await get(`${b.base}/.well-known/jwks.json`);
    assert.equal(jwks.status, 200, jwks.text);
    const userinfo = await get(`${a.base}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${heldAccess}` } });
    assert.equal(userinfo.status, 200, userinfo.text);
  });

  test('with a damaged RS256 key the back-channel logouts of RS256 apps are retried and those of ES256 apps delivered, last_error quoting nothing of the key', async () => {
    const user = await a.deps.stores.users.findByUsername(username);
    const jtis = { RS256: randomBytes(8).toString('hex'), ES256: randomBytes(8).toString('hex') };
    const before = { RS256: receiver.tokens(apps.RS256.path).length, ES256: receiver.tokens(apps.ES256.path).length };
    await a.deps.stores.logoutDeliveries.insert((['RS256', 'ES256'] as const).map((alg) => ({
      clientId: apps[alg].clientId, userId: user!.id, sid: null, jti: jtis[alg], cause: 'signed_out' as const,
    })), a.deps.clock.now());
    const pass = await b.deps.logoutDeliveries.runOnce();
    assert.deepEqual(pass, { claimed: 2, delivered: 1, retrying: 1, abandoned: 0 });
    assert.equal(receiver.tokens(apps.RS256.path).length, before.RS256);
    assert.equal(receiver.tokens(apps.ES256.path).length, before.ES256 + 1);
    const row = await a.deps.database.db.selectFrom('logout_deliveries').select(['delivered_at', 'last_error']).where('jti', '=', jtis.RS256).executeTakeFirstOrThrow();
    assert.equal(row.delivered_at, null);
    answered.push(row.last_error ?? '');
    assert.match(row.last_error ?? '', /it is not an RS256 key/);
  });

  test('after rotate --now the same RS256 code and the same refresh token work: neither was consumed nor marked reused by the 500s', async () => {
    await replace();
    const redeemed = await post(heldCode);
    assert.equal(redeemed.status, 200, `the code was not consumed: ${redeemed.text}`);
    await verified(String(redeemed.body.id_token), 'RS256');
    const refreshed = await post({ grant_type: 'refresh_token', refresh_token: heldRefresh, client_id: apps.RS256.clientId, client_secret: apps.RS256.secret });
    assert.equal(refreshed.status, 200, `the refresh token was not rotated: ${refreshed.text}`);
    if (refreshed.body.id_token !== undefined) await verified(String(refreshed.body.id_token), 'RS256');
    // Its family was not revoked for reuse: the successor works too.
    const again = await post({ grant_type: 'refresh_token', refresh_token: String(refreshed.body.refresh_token), client_id: apps.RS256.clientId, client_secret: apps.RS256.secret });
    assert.equal(again.status, 200, again.text);
  });

  // ---------------------------------------------------------------- other shapes of a damaged private JWK

  for (const shape of PRIVATE_SHAPES) {
    test(`a stored ${shape.alg} private JWK that is ${shape.name} signs nothing: named on /readyz (200), its apps' codes 500 server_error, the other algorithm served, no token that fails verification`, async () => {
      try {
        const rotation = await rotateDamaged(shape.alg, shape.damage);
        const form = await codeForm(apps[shape.alg]);
        const answer = await post(form);
        if (answer.status === 200) {
          // Issued: it must at least verify against the JWKS, or a code was spent on a token no app accepts.
          await assert.doesNotReject(verified(String(answer.body.id_token), shape.alg), 'an id_token was issued that fails verification against the JWKS');
        }
        assert.equal(answer.status, 500, `expected 500 server_error, got ${answer.status} ${answer.text.slice(0, 200)}`);
        assert.equal(answer.body.error, 'server_error');
        await assertNamedAndReady(rotation.kids[shape.alg], shape.alg);
        const other = await post(await codeForm(apps[OTHER[shape.alg]]));
        assert.equal(other.status, 200, other.text);
        // Replaced: the same code is redeemed.
        await replace();
        const redeemed = await post(form);
        assert.equal(redeemed.status, 200, `the code was not consumed: ${redeemed.text}`);
      } finally {
        await replace().catch(() => undefined);
      }
    });
  }

  test('a stored key with extra members in its private JWK that is the published key signs (no false alarm)', async () => {
    const rotation = await rotateDamaged('ES256', (f) => JSON.stringify({ ...own(f), kid: 'someone-else', note: 'copied by hand', key_ops: ['sign'] }));
    await sleep(2500);
    for (const on of [a, b]) assert.equal(await signingKeysCheck(on), 'ok');
    const answer = await post(await codeForm(apps.ES256));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(decodeProtectedHeader(String(answer.body.id_token)).kid, rotation.kids.ES256);
    await verified(String(answer.body.id_token), 'ES256');
  });

  // ---------------------------------------------------------------- a key that waits to sign

  test('a damaged ES256 key that waits to sign (active in 120 s) is named on /readyz from the moment it is published, and ES256 tokens are still signed by the current key', async () => {
    const current = (await replace()).kids.ES256;
    const pending = await rotateDamaged('ES256', () => JSON.stringify(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'jwk' })), { now: false });
    await assertNamedAndReady(pending.kids.ES256, 'ES256');
    const answer = await post(await codeForm(apps.ES256));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(decodeProtectedHeader(String(answer.body.id_token)).kid, current);
    await verified(String(answer.body.id_token), 'ES256');
    await replace();
  });

  // ---------------------------------------------------------------- a damaged PUBLIC JWK

  const PUBLIC_SHAPES: Array<{ name: string; damage: Damage }> = [
    { name: 'not JSON', damage: (f) => f.publicJwk.slice(0, -4) },
    { name: 'JSON null', damage: () => 'null' },
    { name: 'a JSON string', damage: () => '"a key"' },
  ];
  for (const shape of PUBLIC_SHAPES) {
    test(`a stored ES256 key whose public JWK is ${shape.name} fails only ES256: the JWKS, /readyz (200, naming it) and RS256 tokens still answer`, async () => {
      let kid: string | undefined;
      try {
        const rotation = await rotateDamaged('ES256', shape.damage, { column: 'public' });
        kid = rotation.kids.ES256;
        const observed: Record<string, unknown> = {};
        for (const [name, on] of [['a', a], ['b', b]] as const) {
          const jwks = await get(`${on.base}/.well-known/jwks.json`);
          const members = (jwks.body.keys as Array<Record<string, unknown>> | undefined) ?? [];
          observed[`${name}.jwks`] = { status: jwks.status, rs256Published: members.some((k) => k.kid === rotation.kids.RS256), everyMemberHasKty: members.every((k) => typeof k.kty === 'string') };
          const ready = await readiness(on);
          observed[`${name}.readyz`] = { status: ready.status, namesKey: new RegExp(`signing key ${kid} \\(ES256\\) cannot sign`).test(String((ready.body.checks as Record<string, string> | undefined)?.signingKeys)) };
        }
        const rs = await post(await codeForm(apps.RS256));
        observed.rs256Token = rs.status === 200 ? { status: 200, verifies: await verified(String(rs.body.id_token), 'RS256').then(() => true, () => false) } : { status: rs.status };
        const es = await post(await codeForm(apps.ES256));
        observed.es256Token = { status: es.status, error: es.body.error };
        // One error line names the key and what to do (as for any damaged key), not an "unexpected error" per request.
        observed.logNamesKey = log.some((line) => line.includes(kid!) && line.includes('svc keys rotate --now'));
        const expected = { status: 200, rs256Published: true, everyMemberHasKty: true };
        assert.deepEqual(observed, {
          'a.jwks': expected, 'b.jwks': expected,
          'a.readyz': { status: 200, namesKey: true }, 'b.readyz': { status: 200, namesKey: true },
          rs256Token: { status: 200, verifies: true },
          es256Token: { status: 500, error: 'server_error' },
          logNamesKey: true,
        });
      } finally {
        // The row would stay published (and parsed) for 65 minutes after a rotation: removed by hand.
        if (kid) await a.deps.database.db.deleteFrom('signing_keys').where('kid', '=', kid).execute();
        await sleep(2500);
        await replace().catch(() => undefined);
      }
    });
  }

  test('after rotate --now (what /readyz and the log advise) a key whose public JWK is not JSON no longer breaks the JWKS or RS256 tokens within 5 s', async () => {
    let kid: string | undefined;
    try {
      kid = (await rotateDamaged('ES256', (f) => f.publicJwk.slice(0, -4), { column: 'public' })).kids.ES256;
      const rotation = await rotateSigningKeys(a.deps.stores, a.deps.clock, undefined, { activationSeconds: 120, now: true });
      const healed = await holdsWithin(PROPAGATION_MS, async () => (await get(`${a.base}/.well-known/jwks.json`)).status === 200);
      const jwks = await get(`${a.base}/.well-known/jwks.json`);
      const rs = await post(await codeForm(apps.RS256));
      assert.deepEqual({ healed, jwks: jwks.status, rs256Token: rs.status }, { healed: true, jwks: 200, rs256Token: 200 }, `after rotating to ${rotation.kids.RS256}`);
    } finally {
      if (kid) await a.deps.database.db.deleteFrom('signing_keys').where('kid', '=', kid).execute();
      await sleep(2500);
      await replace().catch(() => undefined);
    }
  });

  test('a damaged ES256 public JWK does not stop back-channel logouts to RS256 apps', async () => {
    let kid: string | undefined;
    try {
      kid = (await rotateDamaged('ES256', (f) => f.publicJwk.slice(0, -4), { column: 'public' })).kids.ES256;
      const user = await a.deps.stores.users.findByUsername(username);
      const jti = randomBytes(8).toString('hex');
      const before = receiver.tokens(apps.RS256.path).length;
      await a.deps.stores.logoutDeliveries.insert([{ clientId: apps.RS256.clientId, userId: user!.id, sid: null, jti, cause: 'signed_out' as const }], a.deps.clock.now());
      const pass = await a.deps.logoutDeliveries.runOnce().catch((error: unknown) => ({ threw: String(error) }));
      // Deliveries left due by the tests before it may go out in the same pass.
      assert.ok(!('threw' in pass), JSON.stringify(pass));
      assert.equal(pass.retrying + pass.abandoned, 0, JSON.stringify(pass));
      const row = await a.deps.database.db.selectFrom('logout_deliveries').select('delivered_at').where('jti', '=', jti).executeTakeFirstOrThrow();
      assert.notEqual(row.delivered_at, null, 'the RS256 app\'s logout went out');
      assert.ok(receiver.tokens(apps.RS256.path).length > before);
    } finally {
      if (kid) await a.deps.database.db.deleteFrom('signing_keys').where('kid', '=', kid).execute();
      await sleep(2500);
      // Leave nothing due for later tests.
      await a.deps.logoutDeliveries.runOnce().catch(() => undefined);
      await replace().catch(() => undefined);
    }
  });

  // ---------------------------------------------------------------- nothing of a key leaves the database

  test('no private key material of any damaged row is in the log, /readyz, an error_description or a last_error', async () => {
    assert.ok(secrets.length > 0);
    const rows = await a.deps.database.db.selectFrom('logout_deliveries').select('last_error').execute();
    const outside = [...log, ...answered, ...rows.map((r) => r.last_error ?? '')];
    for (const secret of secrets) {
      const text = outside.find((t) => t.includes(secret));
      const at = text?.indexOf(secret) ?? 0;
      assert.equal(text, undefined, `a private member was seen outside the database, in: ${text?.slice(Math.max(0, at - 300), at).replaceAll(secret, '<SECRET>')}<SECRET>`);
    }
  });

  test('each damaged key is logged at most once per instance, with no stack', async () => {
    const lines = log.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 50 && typeof line.kid === 'string');
    const perKid = new Map<string, number>();
    for (const line of lines) perKid.set(String(line.kid), (perKid.get(String(line.kid)) ?? 0) + 1);
    for (const [kid, count] of perKid) assert.ok(count <= 2, `${kid} logged ${count} times`);
    for (const line of lines) assert.equal(line.err, undefined, 'no stack trace');
  });
});

/**
 * A sealed private JWK (KEYS_SECRET set) whose stored value was altered: the instances' KEYS_SECRET
 * opens every other key, so the row is damaged, not the secret: every instance reads the same
 * row, and unready they would all leave the load balancer (the rule d8b468ab states).
 */
forEachDatabase('attack132: a corrupted sealed signing key', (database) => {
  const SECRET = `attack132-${randomBytes(24).toString('hex')}`;
  let instances: Instances;
  let a: Instance;
  let receiver: LogoutReceiver;
  let username: string;
  let apps: Record<IdTokenAlg, App>;

  before(async () => {
    ({ receiver, instances, username, apps } = await startWithApps(database.url, { KEYS_SECRET: SECRET }));
    a = instances.list[0]!;
  });
  after(async () => {
    await instances.close();
    await receiver.close();
  });

  /** A rotation whose new ES256 key's sealed value has one bit changed. */
  async function rotateAltered(): Promise<Rotation> {
    const fresh = (await generateRotation(SECRET)).map((key) => {
      if (key.alg !== 'ES256') return key;
      assert.ok(key.privateJwk.startsWith('enc:v2:'));
      const body = Buffer.from(key.privateJwk.slice('enc:v2:'.length), 'base64url');
      body[body.length - 1] = body[body.length - 1]! ^ 0x01;
      return { ...key, privateJwk: `enc:v2:${body.toString('base64url')}` };
    });
    return a.deps.stores.transaction((tx) => storeRotation(tx, a.deps.clock, fresh, { activationSeconds: 120, now: true }));
  }

  test('a sealed ES256 key whose stored value was altered (the secret opens the others) is named on /readyz as damaged, every instance stays 200, RS256 logouts go out', async () => {
    const rotation = await rotateAltered();
    await sleep(3000);
    const observed: Record<string, unknown> = {};
    for (const [name, on] of instances.list.entries()) {
      const response = await fetch(`${on.base}/readyz`);
      const body = (await response.json()) as { checks: Record<string, string> };
      observed[`readyz${name}`] = { status: response.status, damaged: body.checks.signingKeys?.includes(`signing key ${rotation.kids.ES256} (ES256) cannot sign`) ?? false };
    }
    const user = await a.deps.stores.users.findByUsername(username);
    await a.deps.stores.logoutDeliveries.insert([{ clientId: apps.RS256.clientId, userId: user!.id, sid: null, jti: randomBytes(8).toString('hex'), cause: 'signed_out' as const }], a.deps.clock.now());
    observed.logoutPass = await a.deps.logoutDeliveries.runOnce();
    try {
      assert.deepEqual(observed, {
        readyz0: { status: 200, damaged: true }, readyz1: { status: 200, damaged: true },
        logoutPass: { claimed: 1, delivered: 1, retrying: 0, abandoned: 0 },
      });
    } finally {
      await rotateSigningKeys(a.deps.stores, a.deps.clock, SECRET, { activationSeconds: 120, now: true });
      await sleep(2500);
      await a.deps.logoutDeliveries.runOnce().catch(() => undefined);
    }
  });

  test('an altered sealed key stops neither a restart nor `svc keys rotate --now`, which replaces it: a start refuses only a KEYS_SECRET that opens no key', async () => {
    const altered = await rotateAltered();
    try {
      const restarted = await startInstances(database.url, 1, { LOGOUT_DELIVERY_INTERVAL: '0', KEYS_SECRET: SECRET });
      await restarted.close();
      const rotated = svc(database.url, ['keys', 'rotate', '--now', '--json'], { KEYS_SECRET: SECRET });
      assert.equal(rotated.code, 0, rotated.stderr);
      const { kids } = JSON.parse(rotated.stdout) as { kids: Record<IdTokenAlg, string> };
      assert.ok(await holdsWithin(PROPAGATION_MS, async () => {
        const { checks } = (await (await fetch(`${a.base}/readyz`)).json()) as { checks: Record<string, string> };
        return checks.signingKeys === 'ok';
      }), 'the altered key no longer signs or waits to: ready and ok within 5 s');
      assert.notEqual(kids.ES256, altered.kids.ES256);
      const wrong = svc(database.url, ['keys', 'rotate', '--now', '--json'], { KEYS_SECRET: `${SECRET}-another` });
      assert.notEqual(wrong.code, 0, 'another secret is still refused');
      assert.match(wrong.stderr, /KEYS_SECRET/);
    } finally {
      await rotateSigningKeys(a.deps.stores, a.deps.clock, SECRET, { activationSeconds: 120, now: true });
    }
  });
});
