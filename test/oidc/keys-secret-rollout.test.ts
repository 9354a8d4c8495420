/**
 * KEYS_SECRET switched on one instance at a time (INTERFACE sections 5 and 6; docs/operations.md,
 * "Signing keys"): an instance started with the secret seals the stored keys, and the instances
 * still running without it meet keys they cannot open. They must keep signing with the keys they
 * hold, and once a key they need is one they cannot open, say so on /readyz, answer 503 (never a
 * 500) without consuming anything, log it once, and leave their work to an instance that can.
 * Over real HTTP, two instances on one database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { type Rotation, openPrivateJwk, rotateSigningKeys } from '../../src/core/oidc/keys.js';
import type { Client } from '../../src/core/oauth/ports.js';
import { CookieJar, authorize, pkcePair } from '../support/browser-flow.js';
import { forEachDatabase } from '../support/databases.js';
import { holdsWithin } from '../support/eventually.js';
import { type Instance, type Instances, startInstances } from '../support/instances.js';
import { LogoutReceiver } from '../support/logout-receiver.js';

const SECRET = 'a-keys-secret-of-at-least-32-characters!';
const PASSWORD = 'correct horse battery';
/** INTERFACE section 5: every instance sees a change of the keys within 5 s. */
const PROPAGATION_MS = 5000;
const MANUAL_DELIVERIES = { LOGOUT_DELIVERY_INTERVAL: '0' };

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function post(base: string, form: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${base}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

async function readiness(base: string): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, string> } };
}

async function jwksKids(base: string): Promise<string[]> {
  const { keys } = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
  return keys.map((k) => k.kid);
}

/** The error lines of a log (pino level 50), parsed. */
function errorLines(lines: string[]): Array<Record<string, unknown>> {
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 50);
}

forEachDatabase('KEYS_SECRET switched on one instance at a time', (database) => {
  /** Started without KEYS_SECRET, as every instance ran before the switch. */
  let old: Instances;
  /** Started with KEYS_SECRET: its start sealed the stored keys. */
  let fresh: Instances;
  let a: Instance;
  let c: Instance;
  const oldLog: string[] = [];
  let receiver: LogoutReceiver;
  let client: Client;
  let secret: string;
  let username: string;
  const redirectUri = 'https://app.example/callback';
  let rotation: Rotation;

  before(async () => {
    receiver = await LogoutReceiver.start();
    old = await startInstances(database.url, 1, MANUAL_DELIVERIES, { logLines: oldLog });
    a = old.list[0]!;
    username = `rollout${randomBytes(4).toString('hex')}`;
    await createAccount(a.deps.stores, a.deps.clock, { username, password: PASSWORD });
    const registered = await registerClient(a.deps.stores, a.deps.clock, {
      name: 'Rollout app', type: 'confidential', redirectUris: [redirectUri], backchannelLogoutUri: receiver.url('/backchannel'),
    });
    client = registered.client;
    secret = registered.secret!;
    fresh = await startInstances(database.url, 1, { ...MANUAL_DELIVERIES, KEYS_SECRET: SECRET });
    c = fresh.list[0]!;
  });
  after(async () => {
    await fresh.close();
    await old.close();
    await receiver.close();
  });

  /** What redeems a fresh code with scope `scope`, authorized at `base` by a signed-in user. */
  async function codeForm(base: string, scope = 'openid'): Promise<Record<string, string>> {
    const pkce = pkcePair();
    const back = await authorize(new CookieJar(), base, { clientId: client.clientId, redirectUri, scope, codeChallenge: pkce.challenge, nonce: 'n' }, {
      credentials: { username, password: PASSWORD },
    });
    assert.equal(back.get('error'), null, back.get('error_description') ?? '');
    return { grant_type: 'authorization_code', code: back.get('code')!, redirect_uri: redirectUri, code_verifier: pkce.verifier, client_id: client.clientId, client_secret: secret };
  }

  test('an instance without KEYS_SECRET keeps signing with the keys it holds when another instance starts with KEYS_SECRET and seals them', async () => {
    const rows = await c.deps.database.db.selectFrom('signing_keys').select('private_jwk').execute();
    assert.ok(rows.length >= 2);
    for (const row of rows) assert.match(row.private_jwk, /^enc:v2:/, 'the start with KEYS_SECRET sealed every key');
    // No request reached the old instance before the sealing: it opened its keys when it started.
    const redeemed = await post(a.base, await codeForm(a.base));
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
    const ready = await readiness(a.base);
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.equal(ready.body.checks.signingKeys, 'ok');
  });

  test('/readyz is 503 naming the signing key and KEYS_SECRET as soon as a key the instance will sign with cannot be opened, and the keys it holds sign until then', async () => {
    // A routine rotation by an operator who has the secret: new keys, sealed, active in 120 s.
    rotation = await rotateSigningKeys(c.deps.stores, c.deps.clock, SECRET, { activationSeconds: 120 });
    assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await readiness(a.base)).status === 503), 'not ready within 5 s');
    const { body } = await readiness(a.base);
    assert.equal(body.status, 'unavailable');
    assert.equal(body.checks.database, 'ok');
    assert.match(body.checks.signingKeys!, /signing key/);
    assert.match(body.checks.signingKeys!, /KEYS_SECRET/);
    assert.ok(Object.values(rotation.kids).some((kid) => body.checks.signingKeys!.includes(kid)), 'names the key');
    assert.equal((await readiness(c.base)).status, 200, 'the instance with the secret is ready');
    // The new keys do not sign yet: the old instance still signs with the key it holds.
    const redeemed = await post(a.base, await codeForm(a.base));
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
  });

  test('the token endpoint answers 503 temporarily_unavailable with Retry-After, not 500, while it cannot open the signing key, and consumes nothing: the code and refresh token work at an instance that can (RFC 6749 5.2)', async () => {
    rotation = await rotateSigningKeys(c.deps.stores, c.deps.clock, SECRET, { activationSeconds: 120, now: true });
    assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await jwksKids(a.base)).includes(rotation.kids.RS256)), 'the old instance sees the new keys');
    const form = await codeForm(a.base);
    const refused = await post(a.base, form);
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    // RFC 6749 5.2: a JSON object with `error` and `error_description`, not cached.
    assert.deepEqual(Object.keys(refused.body).sort(), ['error', 'error_description']);
    assert.equal(refused.body.error, 'temporarily_unavailable');
    assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(refused.headers.get('cache-control'), 'no-store');
    assert.match(refused.headers.get('content-type') ?? '', /^application\/json/);

    const redeemed = await post(c.base, form);
    assert.equal(redeemed.status, 200, `the code was not consumed: ${JSON.stringify(redeemed.body)}`);
    const idToken = String(redeemed.body.id_token);
    assert.equal(decodeProtectedHeader(idToken).kid, rotation.kids.RS256);
    await jwtVerify(idToken, createRemoteJWKSet(new URL(`${c.base}/.well-known/jwks.json`)), { audience: client.clientId });

    // OpenID Connect Core 12.2: a refresh of an openid grant signs an id_token too.
    const refresh = { grant_type: 'refresh_token', refresh_token: String(redeemed.body.refresh_token), client_id: client.clientId, client_secret: secret };
    const refusedRefresh = await post(a.base, refresh);
    assert.equal(refusedRefresh.status, 503, JSON.stringify(refusedRefresh.body));
    assert.equal(refusedRefresh.body.error, 'temporarily_unavailable');
    const refreshed = await post(c.base, refresh);
    assert.equal(refreshed.status, 200, `the refresh token was not rotated, nor taken for reuse: ${JSON.stringify(refreshed.body)}`);
  });

  test('a key the instance cannot open is logged once per key, saying to give every instance the same KEYS_SECRET, not once per request with a stack', async () => {
    for (let i = 0; i < 5; i++) {
      assert.equal((await post(a.base, await codeForm(a.base))).status, 503);
      assert.equal((await readiness(a.base)).status, 503);
    }
    const lines = errorLines(oldLog);
    assert.ok(lines.length > 0, 'logged');
    const kids = lines.map((line) => line.kid);
    assert.equal(new Set(kids).size, kids.length, `one line per key: ${JSON.stringify(kids)}`);
    assert.ok(lines.length <= 4, 'at most the four keys of the two rotations');
    for (const line of lines) {
      assert.match(String(line.msg), /same KEYS_SECRET/);
      assert.equal(line.err, undefined, 'no stack trace');
    }
    assert.ok(!oldLog.some((line) => line.includes('unexpected error')), 'never logged as an unexpected error');
  });

  test('an instance that cannot open the signing keys leaves back-channel logouts to one that can, instead of spending their attempts', async () => {
    const user = await c.deps.stores.users.findByUsername(username);
    const jti = randomBytes(8).toString('hex');
    await c.deps.stores.logoutDeliveries.insert([{ clientId: client.clientId, userId: user!.id, sid: null, jti, cause: 'signed_out' }], c.deps.clock.now());
    const skipped = await a.deps.logoutDeliveries.runOnce();
    assert.deepEqual(skipped, { claimed: 0, delivered: 0, retrying: 0, abandoned: 0 });
    assert.equal(receiver.tokens('/backchannel').length, 0);
    const delivered = await c.deps.logoutDeliveries.runOnce();
    assert.equal(delivered.delivered, 1);
    const [token] = receiver.tokens('/backchannel');
    assert.equal(decodeProtectedHeader(token!).kid, rotation.kids.RS256);
    const row = await c.deps.database.db.selectFrom('logout_deliveries').select('attempts').where('jti', '=', jti).executeTakeFirstOrThrow();
    assert.equal(Number(row.attempts), 1, 'one attempt: the one that delivered');
  });

  test('an instance that could not open the signing keys is ready again, and signs, once it can open them', async () => {
    assert.equal((await readiness(a.base)).status, 503);
    // The keys it cannot open put back in a form it can (what an operator's fix amounts to, for
    // this instance): nothing about the failure is remembered.
    const rows = await c.deps.database.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).execute();
    for (const row of rows) {
      if (row.private_jwk.startsWith('enc:')) await c.deps.stores.sealedColumns.replace('signing_keys.private_jwk', row.kid, row.private_jwk, openPrivateJwk(row.private_jwk, SECRET, row.kid));
    }
    assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await readiness(a.base)).status === 200), 'ready again within 5 s');
    const redeemed = await post(a.base, await codeForm(a.base));
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
    assert.equal(decodeProtectedHeader(String(redeemed.body.id_token)).kid, rotation.kids.RS256);
  });
});
