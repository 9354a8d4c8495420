/**
 * `svc keys rotate` against running servers (INTERFACE sections 5 and 9, issue 16 item 3): the
 * command writes the database and nothing else, so each instance must notice the new keys by
 * itself, list them within 5 seconds, and sign with a key only once every instance lists it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import type { TestApp } from '../support/app.js';
import { CookieJar, authorize, pkcePair, tokenRequest } from '../support/browser-flow.js';
import { svc } from '../support/cli.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';
import { holdsWithin } from '../support/eventually.js';
import { type Instance, type Instances, startInstances } from '../support/instances.js';
import { type TestClient, codeExchangeFields, newClient, startOAuthApp } from '../oauth/helpers.js';

const PASSWORD = 'correct horse battery';
/** What INTERFACE section 5 allows an instance to take to list a new key. */
const PROPAGATION_MS = 5000;

async function jwksKids(base: string): Promise<string[]> {
  const { keys } = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
  return keys.map((k) => k.kid);
}

const listsAll = async (base: string, kids: string[]) => {
  const listed = await jwksKids(base);
  return kids.every((kid) => listed.includes(kid));
};

/** `svc keys rotate` as an operator runs it; returns its JSON and when it ran. */
function rotate(databaseUrl: string, ...flags: string[]) {
  const started = Date.now();
  const r = svc(databaseUrl, ['keys', 'rotate', ...flags, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(Object.keys(r.json), ['kid', 'kids', 'active_at']);
  assert.deepEqual(Object.keys(r.json.kids).sort(), ['ES256', 'RS256']);
  assert.equal(r.json.kid, r.json.kids.RS256);
  assert.match(r.json.active_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
  return { kid: r.json.kid as string, kids: Object.values(r.json.kids) as string[], activeAt: Date.parse(r.json.active_at), started, finished: Date.now() };
}

forEachDatabase('svc keys rotate', (database) => {
  let t: TestApp;
  let c: TestClient;
  before(async () => {
    t = await startOAuthApp(database, { clock: new TestClock(Date.now()) });
    c = await newClient(t, { type: 'public' });
  });
  after(() => t.close());

  /** The kid of the id_token a whole code flow gets now. */
  async function signingKid(): Promise<string> {
    const jar = new CookieJar();
    const user = await createAccount(t.deps.stores, t.deps.clock, { username: `keys${Math.random().toString(36).slice(2, 10)}`, password: PASSWORD });
    const pkce = pkcePair();
    const back = await authorize(jar, t.baseUrl, {
      clientId: c.client.clientId, redirectUri: c.redirectUri, scope: 'openid', codeChallenge: pkce.challenge, nonce: 'n',
    }, { credentials: { username: user.username, password: PASSWORD } });
    const response = await tokenRequest(t.baseUrl, codeExchangeFields(c, back.get('code')!, pkce));
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return decodeProtectedHeader(response.body.id_token).kid!;
  }

  /** The server's clock reaches the command's `active_at` (they run on one machine). */
  const reach = (at: number) => t.clock.advance(Math.max(0, at - t.clock.now()));

  test('keys rotate --now: the new keys sign at once, and the old ones stay published', async () => {
    const oldKid = await signingKid();
    const rotation = rotate(database.url, '--now');
    assert.ok(rotation.activeAt >= rotation.started && rotation.activeAt <= rotation.finished, 'active from the moment of the rotation');
    reach(rotation.activeAt);
    assert.ok(await holdsWithin(PROPAGATION_MS, () => listsAll(t.baseUrl, rotation.kids)), 'listed within 5 s');
    assert.equal(await signingKid(), rotation.kid);
    assert.ok((await jwksKids(t.baseUrl)).includes(oldKid), 'id_tokens the old key signed still verify');
  });

  test('keys rotate --retire-previous: the old keys leave the JWKS at once, and the new ones sign', async () => {
    const rotation = rotate(database.url, '--retire-previous');
    assert.ok(rotation.activeAt <= rotation.finished, '--retire-previous activates at once too');
    reach(rotation.activeAt);
    assert.ok(await holdsWithin(PROPAGATION_MS, async () => (await jwksKids(t.baseUrl)).sort().join() === [...rotation.kids].sort().join()),
      'only the new keys are listed, within 5 s');
    assert.equal(await signingKid(), rotation.kid);
  });
});

forEachDatabase('two instances and a key rotation', (database) => {
  const clock = new TestClock(Date.now());
  let cluster: Instances;
  before(async () => { cluster = await startInstances(database.url, 2, {}, { clock }); });
  after(() => cluster.close());

  test('after keys rotate both instances list the new keys within 5 s, and no instance signs with a kid the other does not list', async () => {
    const [a, b] = cluster.list as [Instance, Instance];
    const { deps } = a;
    const user = await createAccount(deps.stores, deps.clock, { username: `rotate${Date.now()}`, password: PASSWORD });
    const redirectUri = 'https://app.example/callback';
    const { client, secret } = await registerClient(deps.stores, deps.clock, { name: 'Rotation app', type: 'confidential', redirectUris: [redirectUri] });
    const auth = { client_id: client.clientId, client_secret: secret! };
    const pkce = pkcePair();
    const back = await authorize(new CookieJar(), a.base, {
      clientId: client.clientId, redirectUri, scope: 'openid profile:read', codeChallenge: pkce.challenge, nonce: 'n',
    }, { credentials: { username: user.username, password: PASSWORD } });
    const redeemed = await tokenRequest(a.base, { grant_type: 'authorization_code', code: back.get('code')!, redirect_uri: redirectUri, code_verifier: pkce.verifier, ...auth });
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
    let refreshToken: string = redeemed.body.refresh_token;

    /** A refresh on `instance`: the kid of its id_token, which every instance must list. */
    const signedBy = async (instance: Instance): Promise<string> => {
      const refreshed = await tokenRequest(instance.base, { grant_type: 'refresh_token', refresh_token: refreshToken, ...auth });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      refreshToken = refreshed.body.refresh_token;
      const kid = decodeProtectedHeader(refreshed.body.id_token).kid!;
      for (const other of cluster.list) assert.ok((await jwksKids(other.base)).includes(kid), `${instance.base} signed with ${kid}, which ${other.base} does not list`);
      return kid;
    };

    const oldKid = await signedBy(a);
    assert.equal(await signedBy(b), oldKid);
    const rotation = rotate(database.url);
    // Published first: active SIGNING_KEY_ACTIVATION_SECONDS (120) after the command wrote the keys.
    assert.ok(rotation.activeAt >= rotation.started + 120_000 && rotation.activeAt <= rotation.finished + 120_000);
    clock.advance(Math.max(0, rotation.finished - clock.now()));

    // Until both list the new keys, both keep signing with keys both list.
    const listed = await holdsWithin(PROPAGATION_MS, async () => {
      for (const instance of cluster.list) assert.equal(await signedBy(instance), oldKid, 'the new key does not sign before active_at');
      return (await listsAll(a.base, rotation.kids)) && (await listsAll(b.base, rotation.kids));
    });
    assert.ok(listed, 'both instances list the new keys within 5 s');

    // The moment of activation is the same on both: the old key up to it, the new one from it.
    clock.advance(rotation.activeAt - 1 - clock.now());
    assert.equal(await signedBy(a), oldKid);
    assert.equal(await signedBy(b), oldKid);
    clock.advance(1);
    assert.equal(await signedBy(a), rotation.kid);
    assert.equal(await signedBy(b), rotation.kid);
    for (const instance of cluster.list) assert.ok((await jwksKids(instance.base)).includes(oldKid), 'the old key stays published');
  });
});
