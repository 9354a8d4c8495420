/**
 * The limits of the endpoints where a client authenticates (token, PAR, revocation,
 * introspection) and of pushed authorization requests (`src/core/oauth/endpoint-limits.ts`): failed client
 * authentications per address and client, per address in clients, and per client; pushes per
 * client and per address; a refusal is
 * 429 `rate_limited` in OAuth's JSON shape with `Retry-After` and the RateLimit fields.
 * Addresses come from X-Forwarded-For (TRUST_PROXY=1), a new one per test. Checks under way at
 * once are held in the test (`OAuthEndpointLimits` on its own); a real burst against the compiled
 * service is in client-auth-burst.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OAuthError } from '../../src/core/errors.js';
import { CLIENT_AUTH_CHECKS_AT_ONCE, CLIENT_AUTH_CHECKS_WAITING, CLIENT_AUTH_WINDOW_SECONDS, OAuthEndpointLimits } from '../../src/core/oauth/endpoint-limits.js';
import type { RateLimiter } from '../../src/core/rate-limiter.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import { addressesIn } from '../support/addresses.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { startAppsForSuite } from '../support/instances.js';
import { SHARED_LIMITER_COMMAND_TIMEOUT_MS, redisUrl, skipWithoutRedis, uniqueKeyPrefix } from '../support/redis.js';
import { type TestClient, authorizeQuery, clientFields, newClient, pkcePair, startOAuthApp } from './helpers.js';

const LIMITS = {
  TRUST_PROXY: '1',
  CLIENT_AUTH_FAILURES_PER_ADDRESS: '3',
  CLIENT_AUTH_CLIENTS_PER_ADDRESS: '4',
  CLIENT_AUTH_FAILURES_PER_CLIENT: '3',
  PAR_PER_MINUTE_PER_CLIENT: '3',
  PAR_PER_MINUTE_PER_ADDRESS: '3',
};

/** An address of the documentation range no other test uses. */
const newAddress = addressesIn('198.51');

function post(t: TestApp, path: string, fields: Record<string, string>, address: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address, ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

const wrongSecret = (c: TestClient) => ({ client_id: c.client.clientId, client_secret: 'not-the-secret' });
const introspect = (t: TestApp, credentials: Record<string, string>, address: string) =>
  post(t, '/api/oauth/introspect', { token: 'anything', ...credentials }, address);
const pushFor = (t: TestApp, c: TestClient, address: string, headers: Record<string, string> = {}) =>
  post(t, '/api/oauth/par', { ...Object.fromEntries(authorizeQuery(c, { pkce: pkcePair() })), ...clientFields(c) }, address, headers);

/** A 429 in OAuth's shape (RFC 6749 5.2) with `Retry-After` and the RateLimit fields of `policy`; returns Retry-After. */
async function assertRateLimited(response: Response, policy: string): Promise<number> {
  const quota = policy === 'client-auth-address' ? LIMITS.CLIENT_AUTH_CLIENTS_PER_ADDRESS : '3';
  assert.equal(response.status, 429, await response.clone().text());
  assert.equal(response.headers.get('cache-control'), 'no-store');
  const body = (await response.json()) as Record<string, string>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(body.error, 'rate_limited');
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(retryAfter >= 1);
  assert.match(response.headers.get('ratelimit-policy') ?? '', new RegExp(`^"${policy}";q=${quota};w=\\d+$`));
  assert.equal(response.headers.get('ratelimit'), `"${policy}";r=0;t=${retryAfter}`);
  return retryAfter;
}

async function refusals(t: TestApp, endpoint: string, scope: string): Promise<number> {
  return (await t.deps.metrics.rateLimitRefusals.get()).values
    .find((v) => v.labels.endpoint === endpoint && v.labels.scope === scope)?.value ?? 0;
}

forEachDatabase('limits of the token and PAR endpoints', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database, { env: LIMITS }); });
  after(() => t.close());

  test('failed authentications of one client from one address, at any endpoint, refuse that address for that client with 429 past the limit, even with the right secret, until the window ends; another app behind the address is served (RFC 6819 5.1.4.2.3)', async () => {
    const c = await newClient(t);
    const address = newAddress();
    const counted = await refusals(t, 'introspect', 'client-auth-address-client');
    assert.equal((await post(t, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x', ...wrongSecret(c) }, address)).status, 401);
    assert.equal((await post(t, '/api/oauth/revoke', { token: 'x', ...wrongSecret(c) }, address)).status, 401);
    assert.equal((await pushFor(t, { ...c, secret: 'not-the-secret' }, address)).status, 401);
    const refused = await introspect(t, wrongSecret(c), address);
    const retryAfter = await assertRateLimited(refused, 'client-auth-address-client');
    assert.equal(retryAfter, CLIENT_AUTH_WINDOW_SECONDS - (Math.floor(t.clock.now() / 1000) % CLIENT_AUTH_WINDOW_SECONDS));
    assert.equal(await refusals(t, 'introspect', 'client-auth-address-client'), counted + 1);
    await assertRateLimited(await introspect(t, clientFields(c), address), 'client-auth-address-client');
    // An app retrying a rotated secret behind a NAT leaves its neighbours their tokens.
    const other = await newClient(t);
    assert.equal((await introspect(t, clientFields(other), address)).status, 200, 'another app at the address');
    assert.equal((await introspect(t, clientFields(c), newAddress())).status, 200, 'another address is not refused');
    t.clock.advance(retryAfter * 1000);
    assert.equal((await introspect(t, clientFields(c), address)).status, 200, 'the next window');
  });

  test('an address that fails for more clients than the limit is refused for every client, the right secret included, until the window ends, however few failures each had (RFC 6819 4.3.5)', async () => {
    const address = newAddress();
    const clients = Number(LIMITS.CLIENT_AUTH_CLIENTS_PER_ADDRESS);
    const walked = (i: number) => ({ client_id: `walked-${i}-${address}`, client_secret: 'guess' });
    // Two failures each: more than one client's quota in all, no client past its own.
    for (let i = 0; i < clients; i++) {
      for (let j = 0; j < 2; j++) assert.equal((await introspect(t, walked(i), address)).status, 401, `client ${i}, failure ${j}`);
    }
    const counted = await refusals(t, 'introspect', 'client-auth-address');
    const retryAfter = await assertRateLimited(await introspect(t, walked(clients), address), 'client-auth-address');
    assert.equal(await refusals(t, 'introspect', 'client-auth-address'), counted + 1);
    const c = await newClient(t);
    await assertRateLimited(await introspect(t, clientFields(c), address), 'client-auth-address');
    assert.equal((await introspect(t, clientFields(c), newAddress())).status, 200, 'another address is not refused');
    t.clock.advance(retryAfter * 1000);
    assert.equal((await introspect(t, clientFields(c), address)).status, 200, 'the next window');
  });

  test('a request that offers no secret guesses none: its failures do not count, and an address refused for wrong secrets still serves browser and native apps (another site\'s page cannot lock its visitors out)', async () => {
    const app = await newClient(t, { type: 'public' });
    const backend = await newClient(t);
    const address = newAddress();
    const revoke = (credentials: Record<string, string>) => post(t, '/api/oauth/revoke', { token: 'x', ...credentials }, address);
    // Unknown client_ids, as a page on another site can make its visitors' browsers send them.
    for (let i = 0; i < 5; i++) assert.equal((await revoke({ client_id: `unknown-${i}` })).status, 401, `failure ${i}`);
    const basicWithoutPassword = await fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', body: new URLSearchParams({ token: 'x' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address, authorization: `Basic ${Buffer.from('unknown-basic:').toString('base64')}` },
    });
    assert.equal(basicWithoutPassword.status, 401, 'Basic with an empty password offers no secret either');
    assert.equal((await revoke(clientFields(backend))).status, 200, 'not counted: the address is not refused');
    for (let i = 0; i < 4; i++) assert.equal((await revoke({ client_id: `unknown-${i}`, client_secret: 'guess' })).status, 401);
    await assertRateLimited(await revoke({ client_id: 'unknown-4', client_secret: 'guess' }), 'client-auth-address');
    await assertRateLimited(await revoke(clientFields(backend)), 'client-auth-address');
    assert.equal((await revoke(clientFields(app))).status, 200, 'the public app at the refused address');
  });

  test('an empty secret is no secret, in the body as in Basic (RFC 6749 2.3.1): neither form is counted or refused, however often it fails', async () => {
    const backend = await newClient(t);
    const address = newAddress();
    const revoke = (fields: Record<string, string>, headers: Record<string, string> = {}) => post(t, '/api/oauth/revoke', { token: 'x', ...fields }, address, headers);
    const emptyBasic = (clientId: string) => ({ authorization: `Basic ${Buffer.from(`${clientId}:`).toString('base64')}` });
    // More failures than one client's quota, for more clients than the address's, in each form.
    for (let i = 0; i < 6; i++) {
      assert.equal((await revoke({ client_id: backend.client.clientId, client_secret: '' })).status, 401, `body, the app, failure ${i}`);
      assert.equal((await revoke({ client_id: `unknown-${i}`, client_secret: '' })).status, 401, `body, unknown client ${i}`);
      assert.equal((await revoke({}, emptyBasic(backend.client.clientId))).status, 401, `Basic, the app, failure ${i}`);
      assert.equal((await revoke({}, emptyBasic(`unknown-basic-${i}`))).status, 401, `Basic, unknown client ${i}`);
    }
    assert.equal((await revoke(clientFields(backend))).status, 200, 'not counted: the address is not refused');
  });

  test('wrong secrets that browsers send use up only the browsers\' share of an address and of a client: the confidential app\'s backend behind that address is served (another site\'s page cannot lock it out)', async () => {
    const backend = await newClient(t);
    const [address, other] = [newAddress(), newAddress()];
    const fromPage = { origin: 'https://evil.example' };
    const revoke = (credentials: Record<string, string>, at: string, headers: Record<string, string> = {}) =>
      post(t, '/api/oauth/revoke', { token: 'x', ...credentials }, at, headers);
    for (let i = 0; i < 3; i++) assert.equal((await revoke(wrongSecret(backend), address, fromPage)).status, 401, `failure ${i}`);
    await assertRateLimited(await revoke(wrongSecret(backend), address, fromPage), 'client-auth-address-client');
    await assertRateLimited(await revoke(clientFields(backend), address, { 'sec-fetch-site': 'cross-site' }), 'client-auth-address-client');
    assert.equal((await revoke(clientFields(backend), address)).status, 200, 'the backend at the address');
    // Past the client's own limit, an address whose browsers fail for it is refused for it; its backend is not.
    assert.equal((await revoke(wrongSecret(backend), other, fromPage)).status, 429);
    await assertRateLimited(await revoke(clientFields(backend), other, fromPage), 'client-auth-client');
    assert.equal((await revoke(clientFields(backend), other)).status, 200, 'the backend at the other address');
  });

  test('successful client authentications never count against an address', async () => {
    const c = await newClient(t);
    const address = newAddress();
    for (let i = 0; i < 10; i++) assert.equal((await introspect(t, clientFields(c), address)).status, 200, `request ${i}`);
    assert.equal((await introspect(t, wrongSecret(c), address)).status, 401);
  });

  test('past the failures one client may have, each address that fails for it is refused for it, and the app at its own address is not', async () => {
    const c = await newClient(t);
    for (let i = 0; i < 3; i++) assert.equal((await introspect(t, wrongSecret(c), newAddress())).status, 401);
    const guesser = newAddress();
    await assertRateLimited(await introspect(t, wrongSecret(c), guesser), 'client-auth-client');
    await assertRateLimited(await introspect(t, clientFields(c), guesser), 'client-auth-client');
    assert.equal((await introspect(t, clientFields(await newClient(t)), guesser)).status, 200, 'the address is refused only for that client');
    assert.equal((await introspect(t, clientFields(c), newAddress())).status, 200, 'the app itself');
    assert.ok(await refusals(t, 'introspect', 'client-auth-client') >= 2);
  });

  test('pushes of one confidential client are refused with 429 past the limit a minute, from any address', async () => {
    const c = await newClient(t);
    for (let i = 0; i < 3; i++) assert.equal((await pushFor(t, c, newAddress())).status, 201);
    const counted = await refusals(t, 'par', 'push-client');
    await assertRateLimited(await pushFor(t, c, newAddress()), 'push-client');
    assert.equal(await refusals(t, 'par', 'push-client'), counted + 1);
  });

  test('pushes for a public client from other addresses never use up its pushes: they count per address only', async () => {
    const c = await newClient(t, { type: 'public' });
    for (const address of [newAddress(), newAddress()]) {
      for (let i = 0; i < 3; i++) assert.equal((await pushFor(t, c, address)).status, 201);
      await assertRateLimited(await pushFor(t, c, address), 'push-address');
    }
    assert.equal((await pushFor(t, c, newAddress())).status, 201, 'the app\'s own users, from their own address');
  });

  test('pushes of public clients from one address are refused with 429 past the limit a minute; a confidential client\'s are counted per client only', async () => {
    const address = newAddress();
    for (let i = 0; i < 3; i++) assert.equal((await pushFor(t, await newClient(t, { type: 'public' }), address)).status, 201);
    await assertRateLimited(await pushFor(t, await newClient(t, { type: 'public' }), address), 'push-address');
    assert.equal((await pushFor(t, await newClient(t), address)).status, 201);
  });

  test('browsers\' pushes for public clients count apart from other programs\' at an address: a page that has its visitors\' browsers push cannot refuse the native apps behind their address', async () => {
    const address = newAddress();
    const pagesApp = await newClient(t, { type: 'public' });
    const browsers: Array<Record<string, string>> = [{ origin: 'https://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }];
    for (const headers of browsers) assert.equal((await pushFor(t, pagesApp, address, headers)).status, 201);
    await assertRateLimited(await pushFor(t, pagesApp, address, { origin: 'https://evil.example' }), 'push-address');
    await assertRateLimited(await pushFor(t, await newClient(t, { type: 'public' }), address, { 'sec-fetch-site': 'same-site' }), 'push-address');
    const nativeApp = await newClient(t, { type: 'public' });
    for (let i = 0; i < 3; i++) assert.equal((await pushFor(t, nativeApp, address)).status, 201, `the native app's push ${i}`);
    await assertRateLimited(await pushFor(t, nativeApp, address), 'push-address');
  });
});

forEachDatabase('limits of the client endpoints as they ship', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database, { env: { TRUST_PROXY: '1' } }); });
  after(() => t.close());

  test('by default an address is refused for every client no sooner than one client\'s failures refuse it for that client: its neighbours at the address are served past as many failures (RFC 6819 5.1.4.2.3)', async () => {
    const settings = t.deps.settings;
    const address = newAddress();
    const neighbour = await newClient(t);
    // A multi-tenant integration with stale secrets for many of its tenants' apps, or a process
    // that names one made-up client_id a request: one failure each.
    for (let i = 0; i < settings.clientAuthFailuresPerAddress; i++) {
      assert.equal((await introspect(t, { client_id: `stale-${i}-${address}`, client_secret: 'old' }, address)).status, 401, `client ${i}`);
    }
    assert.equal((await introspect(t, clientFields(neighbour), address)).status, 200, 'the neighbour past the failures one app may make');
    assert.ok(settings.clientAuthClientsPerAddress >= settings.clientAuthFailuresPerAddress, 'the whole address takes at least as many failures as one app');
  });
});

describe('limits of the token and PAR endpoints in Redis', { skip: skipWithoutRedis }, () => {
  forEachDatabase('shared by instances', (database) => {
    let apps: TestApp[];
    startAppsForSuite(database, 2, { redisUrl: redisUrl!, env: LIMITS }, (started) => { apps = started; });

    test('two instances sharing one Redis count one address\'s failed authentications of a client together, and refuse the address for that client only', async () => {
      const c = await newClient(apps[0]!);
      const address = newAddress();
      for (let i = 0; i < 3; i++) assert.equal((await introspect(apps[i % 2]!, wrongSecret(c), address)).status, 401, `failure ${i}`);
      await assertRateLimited(await introspect(apps[1]!, wrongSecret(c), address), 'client-auth-address-client');
      const other = await newClient(apps[0]!);
      for (const app of apps) assert.equal((await introspect(app, clientFields(other), address)).status, 200, 'another app at the address');
    });

    test('two instances sharing one Redis count the clients one address failed for together', async () => {
      const address = newAddress();
      const clients = Number(LIMITS.CLIENT_AUTH_CLIENTS_PER_ADDRESS);
      const walked = (i: number) => ({ client_id: `walked-${i}-${address}`, client_secret: 'guess' });
      for (let i = 0; i < clients; i++) {
        for (let j = 0; j < 2; j++) assert.equal((await introspect(apps[(i + j) % 2]!, walked(i), address)).status, 401, `client ${i}, failure ${j}`);
      }
      await assertRateLimited(await introspect(apps[1]!, walked(clients), address), 'client-auth-address');
      await assertRateLimited(await introspect(apps[1]!, clientFields(await newClient(apps[0]!)), address), 'client-auth-address');
    });

    test('an address refused for every client on one instance is refused on the other at its next failure of any client, not only at a new app\'s', async () => {
      const address = newAddress();
      const clients = Number(LIMITS.CLIENT_AUTH_CLIENTS_PER_ADDRESS);
      const walked = (i: number) => ({ client_id: `walked-${i}-${address}`, client_secret: 'guess' });
      for (let i = 0; i < clients; i++) assert.equal((await introspect(apps[0]!, walked(i), address)).status, 401, `client ${i}`);
      await assertRateLimited(await introspect(apps[0]!, walked(clients), address), 'client-auth-address');
      // The clients already failed for still had failures left from the address: one instance
      // refuses them all, and so do two, from the other's first failure on.
      for (let i = 0; i < clients; i++) {
        for (let j = 0; j < 2; j++) await assertRateLimited(await introspect(apps[1]!, walked(i), address), 'client-auth-address');
      }
      await assertRateLimited(await introspect(apps[1]!, clientFields(await newClient(apps[0]!)), address), 'client-auth-address');
    });

    test('two instances sharing one Redis count one client\'s pushes together', async () => {
      const c = await newClient(apps[0]!);
      for (let i = 0; i < 3; i++) assert.equal((await pushFor(apps[i % 2]!, c, newAddress())).status, 201, `push ${i}`);
      await assertRateLimited(await pushFor(apps[1]!, c, newAddress()), 'push-client');
    });
  });
});

/** A check the test ends when it chooses: `succeed` or `fail` (with `invalid_client`). */
function heldCheck() {
  let succeed!: () => void;
  let fail!: () => void;
  const done = new Promise<string>((resolve, reject) => {
    succeed = () => resolve('authenticated');
    fail = () => reject(new OAuthError('invalid_client', 'wrong secret'));
  });
  // A request refused before its check never awaits its outcome.
  done.catch(() => {});
  return { done, succeed, fail };
}

/** Lets every hit in flight reach the limiter and come back (Redis answers in another turn). */
async function settled(started: () => number, expected: number): Promise<void> {
  while (started() < expected) await new Promise((resolve) => setTimeout(resolve, 5));
}

function checksUnderWay(name: string, make: () => RateLimiter & { close?(): Promise<void> }, skip: string | false) {
  describe(`checks of client secrets under way at once [${name}]`, { skip }, () => {
    const failures = 3;
    const settings = { clientAuthFailuresPerAddress: failures, clientAuthClientsPerAddress: 1000, clientAuthFailuresPerClient: 1000, pushesPerMinutePerClient: 3, pushesPerMinutePerAddress: 3 };
    const credentials = { bodyClientId: 'client', bodySecret: 'secret', askedBy: { address: '192.0.2.1', fromBrowser: false } };
    const now = Date.UTC(2026, 10, 24, 8, 1, 0);

    function harness() {
      const limiter = make();
      const limits = new OAuthEndpointLimits(limiter, settings, { inc: () => {} });
      const address = newAddress();
      let started = 0;
      const check = (held: ReturnType<typeof heldCheck>) => limits.authenticating('token', { ...credentials, askedBy: { address, fromBrowser: false } }, now, () => { started += 1; return held.done; })
        .catch((error: unknown) => error as OAuthError);
      return { limiter, check, started: () => started };
    }

    test('past the checks at once, a request from the same address waits its turn and is then checked: a backend\'s burst of right secrets is never refused', async () => {
      const { limiter, check, started } = harness();
      try {
        const held = Array.from({ length: CLIENT_AUTH_CHECKS_AT_ONCE }, heldCheck);
        const running = held.map(check);
        await settled(started, CLIENT_AUTH_CHECKS_AT_ONCE);
        const later = heldCheck();
        const waiting = check(later);
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(started(), CLIENT_AUTH_CHECKS_AT_ONCE, 'the one past the turns waits, unchecked');
        held[0]!.succeed();
        await settled(started, CLIENT_AUTH_CHECKS_AT_ONCE + 1);
        later.succeed();
        assert.equal(await waiting, 'authenticated');
        for (const h of held.slice(1)) h.succeed();
        assert.ok((await Promise.all(running)).every((r) => r === 'authenticated'));
      } finally {
        await limiter.close?.();
      }
    });

    test('a burst of wrong secrets for one client is checked at most its failures per address plus the checks at once; those waiting are refused unchecked once the address is blocked for it', async () => {
      const { limiter, check, started } = harness();
      try {
        const held = Array.from({ length: CLIENT_AUTH_CHECKS_AT_ONCE + 50 }, heldCheck);
        const answers = held.map(check);
        await settled(started, CLIENT_AUTH_CHECKS_AT_ONCE);
        // Every check that runs fails; each one ending lets the next in line run.
        for (let i = 0; i < held.length; i += 1) {
          held[i]!.fail();
          await answers[i];
        }
        const results = await Promise.all(answers);
        assert.ok(started() <= CLIENT_AUTH_CHECKS_AT_ONCE + failures, `${started()} checked`);
        assert.equal(results.filter((r) => (r as OAuthError).code === 'invalid_client').length, failures);
        assert.ok(results.slice(CLIENT_AUTH_CHECKS_AT_ONCE + failures).every((r) => (r as OAuthError).code === 'rate_limited'));
      } finally {
        await limiter.close?.();
      }
    });

    test('past the requests waiting, one more is refused with 429 client-auth-checks before the check', async () => {
      const { limiter, check, started } = harness();
      try {
        const held = Array.from({ length: CLIENT_AUTH_CHECKS_AT_ONCE + CLIENT_AUTH_CHECKS_WAITING }, heldCheck);
        const running = held.map(check);
        await settled(started, CLIENT_AUTH_CHECKS_AT_ONCE);
        const refused = await check(heldCheck()) as OAuthError;
        assert.equal(refused.code, 'rate_limited');
        assert.equal(refused.headers['retry-after'], '1');
        assert.equal(refused.headers['ratelimit-policy'], `"client-auth-checks";q=${CLIENT_AUTH_CHECKS_AT_ONCE + CLIENT_AUTH_CHECKS_WAITING};w=1`);
        for (const h of held) h.succeed();
        await Promise.all(running);
      } finally {
        await limiter.close?.();
      }
    });
  });
}

checksUnderWay('memory', () => new MemoryRateLimiter(), false);
checksUnderWay('redis', () => new RedisRateLimiter({ url: redisUrl!, keyPrefix: uniqueKeyPrefix(), commandTimeoutMs: SHARED_LIMITER_COMMAND_TIMEOUT_MS }), skipWithoutRedis);
