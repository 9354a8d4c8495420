/**
 * A stored signing key that no instance can sign with (docs/oidc.md, "A damaged key"): its row
 * holds no key of its algorithm, or not the key its published JWK names. Every instance reads the
 * same row, so it must fail only what needs that key, name it on /readyz and in one log line
 * without quoting it, and leave the instance ready and the other algorithm signing; a rotation
 * replaces it. Over real HTTP, one instance, both databases.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
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
import { LogoutReceiver } from '../support/logout-receiver.js';

const PASSWORD = 'correct horse battery';
/** INTERFACE section 5: every instance sees a change of the keys within 5 s. */
const PROPAGATION_MS = 5000;
const REDIRECT_URI = 'https://app.example/callback';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

interface App {
  clientId: string;
  secret: string;
  path: string;
}

/** What makes the new ES256 key of a rotation unusable: the row as stored. */
type Damage = (fresh: GeneratedSigningKey) => GeneratedSigningKey;

const privateJwkOf = (key: ReturnType<typeof generateKeyPairSync>['privateKey']) => JSON.stringify(key.export({ format: 'jwk' }));
/** A P-384 key where a P-256 one belongs (RFC 7518 3.4). */
const P384: Damage = (fresh) => ({ ...fresh, privateJwk: privateJwkOf(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey) });
/** A P-256 key, but another one than the key the row publishes. */
const SWAPPED: Damage = (fresh) => ({ ...fresh, privateJwk: privateJwkOf(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey) });
/** A public JWK cut short: nothing to publish. */
const PUBLIC_CUT: Damage = (fresh) => ({ ...fresh, publicJwk: fresh.publicJwk.slice(0, 20) });

forEachDatabase('a damaged stored signing key', (database) => {
  let instances: Instances;
  let a: Instance;
  const log: string[] = [];
  let receiver: LogoutReceiver;
  let username: string;
  const apps = {} as Record<IdTokenAlg, App>;
  /** The private JWKs of the damaged rows: never to be seen outside the database. */
  const damagedPrivateJwks: string[] = [];

  before(async () => {
    receiver = await LogoutReceiver.start();
    instances = await startInstances(database.url, 1, { LOGOUT_DELIVERY_INTERVAL: '0' }, { logLines: log });
    a = instances.list[0]!;
    username = `damaged${randomBytes(4).toString('hex')}`;
    await createAccount(a.deps.stores, a.deps.clock, { username, password: PASSWORD });
    for (const alg of ['RS256', 'ES256'] as const) {
      const path = `/${alg}`;
      const registered = await registerClient(a.deps.stores, a.deps.clock, {
        name: `${alg} app`, type: 'confidential', redirectUris: [REDIRECT_URI], backchannelLogoutUri: receiver.url(path), idTokenAlg: alg,
      });
      apps[alg] = { clientId: registered.client.clientId, secret: registered.secret!, path };
    }
  });
  after(async () => {
    await instances.close();
    await receiver.close();
  });

  async function post(form: Record<string, string>): Promise<Answer> {
    const response = await fetch(`${a.base}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
  }

  async function readiness(): Promise<{ status: number; text: string; body: { status: string; checks: Record<string, string> } }> {
    const response = await fetch(`${a.base}/readyz`);
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) as { status: string; checks: Record<string, string> } };
  }

  /** What redeems a fresh code with scope `openid`, for `app`, authorized by a signed-in user. */
  async function codeForm(app: App): Promise<Record<string, string>> {
    const pkce = pkcePair();
    const back = await authorize(new CookieJar(), a.base, { clientId: app.clientId, redirectUri: REDIRECT_URI, scope: 'openid', codeChallenge: pkce.challenge, nonce: 'n' }, {
      credentials: { username, password: PASSWORD },
    });
    assert.equal(back.get('error'), null, back.get('error_description') ?? '');
    return { grant_type: 'authorization_code', code: back.get('code')!, redirect_uri: REDIRECT_URI, code_verifier: pkce.verifier, client_id: app.clientId, client_secret: app.secret };
  }

  /**
   * A rotation that signs at once, as `svc keys rotate --now` stores it, with its new ES256 key's
   * private half replaced by `damage`'s (a row damaged by hand, or copied in wrong); waits until
   * the instance's JWKS shows the new keys.
   */
  async function rotateDamaged(damage: Damage): Promise<Rotation> {
    const fresh = (await generateRotation(undefined)).map((key) => {
      if (key.alg !== 'ES256') return key;
      const damaged = damage(key);
      damagedPrivateJwks.push(damaged.privateJwk);
      return damaged;
    });
    const rotation = await a.deps.stores.transaction((tx) => storeRotation(tx, a.deps.clock, fresh, { activationSeconds: 120, now: true }));
    await seen(rotation);
    return rotation;
  }

  async function seen(rotation: Rotation): Promise<void> {
    assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await jwksKids()).includes(rotation.kids.RS256)), 'the JWKS shows the new keys within 5 s');
  }

  async function jwksKids(): Promise<string[]> {
    const response = await fetch(`${a.base}/.well-known/jwks.json`);
    assert.equal(response.status, 200);
    return ((await response.json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
  }

  test('a stored ES256 key that is not a P-256 key is named on /readyz with what to do, and the instance stays ready: every instance reads the same row', async () => {
    const rotation = await rotateDamaged(P384);
    assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await readiness()).body.checks.signingKeys !== 'ok'), 'reported within 5 s');
    const ready = await readiness();
    assert.equal(ready.status, 200, ready.text);
    assert.equal(ready.body.status, 'ready');
    const check = ready.body.checks.signingKeys!;
    assert.match(check, new RegExp(`signing key ${rotation.kids.ES256} \\(ES256\\) cannot sign: it is not an ES256 key`));
    assert.match(check, /svc keys rotate --now/);
    assert.ok(!check.includes(rotation.kids.RS256), 'the RS256 key signs');
    for (const jwk of damagedPrivateJwks) assert.ok(!ready.text.includes((JSON.parse(jwk) as { d: string }).d), 'the key is not quoted');
  });

  test('a code for an app of the damaged key\'s algorithm is answered 500 server_error in the RFC shape and consumes nothing; an app of the other algorithm gets its id_token (RFC 6749 5.2)', async () => {
    const form = await codeForm(apps.ES256);
    const refused = await post(form);
    assert.equal(refused.status, 500, JSON.stringify(refused.body));
    assert.deepEqual(Object.keys(refused.body).sort(), ['error', 'error_description']);
    assert.equal(refused.body.error, 'server_error');
    assert.equal(refused.headers.get('cache-control'), 'no-store');

    const other = await post(await codeForm(apps.RS256));
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.equal(decodeProtectedHeader(String(other.body.id_token)).alg, 'RS256');

    // Replaced as /readyz says: the same code is redeemed and signed by the new key.
    const rotation = await rotateSigningKeys(a.deps.stores, a.deps.clock, undefined, { activationSeconds: 120, now: true });
    await seen(rotation);
    assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await readiness()).body.checks.signingKeys === 'ok'), 'ok again within 5 s');
    const redeemed = await post(form);
    assert.equal(redeemed.status, 200, `the code was not consumed: ${JSON.stringify(redeemed.body)}`);
    const idToken = String(redeemed.body.id_token);
    assert.equal(decodeProtectedHeader(idToken).kid, rotation.kids.ES256);
    await jwtVerify(idToken, createRemoteJWKSet(new URL(`${a.base}/.well-known/jwks.json`)), { audience: apps.ES256.clientId, algorithms: ['ES256'] });
  });

  test('a damaged ES256 key holds back only the back-channel logouts of ES256 apps, to be tried again; those of RS256 apps are delivered', async () => {
    await rotateDamaged(P384);
    const user = await a.deps.stores.users.findByUsername(username);
    const jtis = { RS256: randomBytes(8).toString('hex'), ES256: randomBytes(8).toString('hex') };
    await a.deps.stores.logoutDeliveries.insert((['RS256', 'ES256'] as const).map((alg) => ({
      clientId: apps[alg].clientId, userId: user!.id, sid: null, jti: jtis[alg], cause: 'signed_out' as const,
    })), a.deps.clock.now());
    const pass = await a.deps.logoutDeliveries.runOnce();
    assert.deepEqual(pass, { claimed: 2, delivered: 1, retrying: 1, abandoned: 0 });
    assert.equal(receiver.tokens(apps.RS256.path).length, 1);
    assert.equal(receiver.tokens(apps.ES256.path).length, 0);
    const row = await a.deps.database.db.selectFrom('logout_deliveries').select(['delivered_at', 'last_error']).where('jti', '=', jtis.ES256).executeTakeFirstOrThrow();
    assert.equal(row.delivered_at, null);
    assert.match(row.last_error ?? '', /could not be signed: it is not an ES256 key/);
  });

  test('an ES256 row whose private key is not the one its published JWK names signs nothing, and /readyz says so', async () => {
    const rotation = await rotateDamaged(SWAPPED);
    assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await readiness()).body.checks.signingKeys?.includes(rotation.kids.ES256) === true), 'reported within 5 s');
    const ready = await readiness();
    assert.equal(ready.status, 200, ready.text);
    assert.match(ready.body.checks.signingKeys!, /its private key is not the one its published public JWK names/);
    const refused = await post(await codeForm(apps.ES256));
    assert.equal(refused.status, 500, JSON.stringify(refused.body));
    assert.equal(refused.body.error, 'server_error');
  });

  test('an ES256 row whose public JWK is not JSON is left out of the JWKS and named on /readyz; the other keys are served and sign', async () => {
    const rotation = await rotateDamaged(PUBLIC_CUT);
    assert.ok(!(await jwksKids()).includes(rotation.kids.ES256));
    assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await readiness()).body.checks.signingKeys?.includes(rotation.kids.ES256) === true), 'reported within 5 s');
    const ready = await readiness();
    assert.equal(ready.status, 200, ready.text);
    assert.match(ready.body.checks.signingKeys!, /its public JWK is not a JSON object/);
    const other = await post(await codeForm(apps.RS256));
    assert.equal(other.status, 200, JSON.stringify(other.body));
    await jwtVerify(String(other.body.id_token), createRemoteJWKSet(new URL(`${a.base}/.well-known/jwks.json`)), { audience: apps.RS256.clientId, algorithms: ['RS256'] });
    const refused = await post(await codeForm(apps.ES256));
    assert.equal(refused.status, 500, JSON.stringify(refused.body));
  });

  test('each damaged key is logged once, naming it and what to do, with no stack, no "unexpected error" line and nothing of the key', async () => {
    const lines = log.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 50);
    const kids = lines.map((line) => line.kid);
    assert.equal(kids.length, 4, `the four damaged keys: ${JSON.stringify(lines)}`);
    assert.equal(new Set(kids).size, kids.length, 'one line per key');
    for (const line of lines) {
      assert.match(String(line.msg), /cannot sign: .*svc keys rotate --now/);
      assert.equal(line.err, undefined, 'no stack trace');
    }
    assert.ok(!log.some((line) => line.includes('unexpected error')), 'never logged as an unexpected error');
    for (const jwk of damagedPrivateJwks) {
      const { d } = JSON.parse(jwk) as { d: string };
      assert.ok(!log.some((line) => line.includes(d)), 'no private key in the log');
    }
  });
});
