/**
 * The resource API's rate limits (seed section 8, INTERFACE section 7): 60 a minute per token,
 * in memory and in Redis (two instances sharing one limit), per address for tokens looked up and
 * refused, and serving on when Redis is unreachable.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MCP_PATH } from '../../src/core/api/resource.js';
import { generateToken } from '../../src/core/credentials/formats.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { redisUrl, skipWithoutRedis } from '../support/redis.js';
import { firstAnswerHead } from '../support/raw-socket.js';
import { get, newAccessToken, newPersonalToken, newUser } from './fixtures.js';
import { freePort, startAppsForSuite } from '../support/instances.js';
import { PASSWORD, clientFields, newClient as newOAuthClient, obtainTokens, signedInBrowser } from '../oauth/helpers.js';

const MINUTE = 60_000;

forEachDatabase('resource API rate limit in memory', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(() => t.close());

  test('60 requests a minute per token with X-RateLimit-* headers, then 429 with Retry-After: 60', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'profile:read');
    const windowEnd = String(Math.floor(t.clock.now() / MINUTE) * 60 + 60);
    for (let i = 1; i <= 60; i++) {
      const response = await get(t.baseUrl, '/api/open/v1/me', { token });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-ratelimit-limit'), '60');
      assert.equal(response.headers.get('x-ratelimit-remaining'), String(60 - i));
      assert.equal(response.headers.get('x-ratelimit-reset'), windowEnd);
    }
    const before = (await t.deps.metrics.rateLimitRefusals.get()).values.find((v) => v.labels.scope === 'token')?.value ?? 0;
    const refused = await get(t.baseUrl, '/api/open/v1/me', { token });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '60');
    assert.equal(refused.headers.get('x-ratelimit-reset'), windowEnd);
    assert.deepEqual(Object.keys(await refused.json() as object).sort(), ['error', 'error_description']);
    const afterCount = (await t.deps.metrics.rateLimitRefusals.get()).values.find((v) => v.labels.scope === 'token')?.value ?? 0;
    assert.equal(afterCount, before + 1, 'the refusal is counted in rate_limit_refusals_total');
  });

  test('the next minute allows the token again', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    for (let i = 0; i < 60; i++) await get(t.baseUrl, '/api/open/v1/', { token });
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token })).status, 429);
    t.clock.advance(MINUTE);
    const response = await get(t.baseUrl, '/api/open/v1/', { token });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-ratelimit-remaining'), '59');
  });

  test('each token has its own count, even for the same user', async () => {
    const user = await newUser(t.deps);
    const first = await newPersonalToken(t.deps, user, ['profile:read']);
    const second = await newPersonalToken(t.deps, user, ['profile:read']);
    for (let i = 0; i < 60; i++) await get(t.baseUrl, '/api/open/v1/', { token: first.token });
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: first.token })).status, 429);
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: second.token })).status, 200);
  });
});

forEachDatabase('resource API rate limit per address', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database, { env: { RATE_LIMIT_PER_MINUTE: '5' } });
  });
  after(() => t.close());

  test('an address over its limit of refused tokens gets 429 for the rest of the minute, before any lookup', async () => {
    const user = await newUser(t.deps);
    // Stored as the service stores tokens, without its mark (as a token made before marks).
    const { token } = await newAccessToken(t.deps, user, 'profile:read');
    // The limit is at least 300 failures a minute per address.
    for (let i = 0; i < 300; i++) {
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('personal') })).status, 401);
    }
    const refused = await get(t.baseUrl, '/api/open/v1/', { token: generateToken('personal') });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '60');
    // The IETF fields name the address's policy, with nothing left until the window ends (INTERFACE section 11).
    const left = 60 - (Math.floor(t.clock.now() / 1000) % 60);
    assert.equal(refused.headers.get('ratelimit-policy'), '"per-address";q=300;w=60');
    assert.equal(refused.headers.get('ratelimit'), `"per-address";r=0;t=${left}`);
    assert.equal((await get(t.baseUrl, '/api/open/v1/')).status, 429, 'no credentials: refused too');
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token })).status, 429, 'a token without the service\'s mark is refused before any lookup');
    t.clock.advance(MINUTE);
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token })).status, 200);
  });

  test('an address refused at one gate is refused at every gate of the instance (the API, UserInfo, MCP), before any lookup', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    for (let i = 0; i < 300; i++) {
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('access') })).status, 401);
    }
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('access') })).status, 429);
    const { tokens } = t.deps.stores;
    const findAccess = tokens.findAccessBearer;
    let lookups = 0;
    tokens.findAccessBearer = (hash) => { lookups += 1; return findAccess.call(tokens, hash); };
    try {
      for (const path of ['/api/oauth/userinfo', MCP_PATH]) {
        assert.equal((await get(t.baseUrl, path, { token: generateToken('access') })).status, 429, `${path}: a made-up token`);
        assert.equal((await get(t.baseUrl, path, { token })).status, 429, `${path}: a token without the service's mark`);
      }
      assert.equal(lookups, 0, 'none was looked up');
    } finally {
      tokens.findAccessBearer = findAccess;
    }
    t.clock.advance(MINUTE);
    assert.equal((await get(t.baseUrl, '/api/oauth/userinfo', { token })).status, 200);
  });

  test('an address refused for unknown tokens is refused at the addresses the API and MCP do not have and with methods they, and UserInfo, do not take too, whatever it sends; a marked valid token is still answered there', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    for (let i = 0; i < 300; i++) {
      assert.equal((await get(t.baseUrl, '/api/open/v1/nope', { token: generateToken('personal') })).status, 401);
    }
    assert.equal((await get(t.baseUrl, '/api/open/v1/nope', { token: generateToken('personal') })).status, 429, 'the 301st refused token at an address that does not exist');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const cases: [string, string, Record<string, string>, string?][] = [
      ['GET', '/api/open/v1/nope', {}],
      ['GET', '/api/open/v1/nope?access_token=svcp_x', {}],
      ['DELETE', '/api/open/v1/me', {}],
      ['POST', '/api/open/v1/me', form, 'a=b'],
      ['POST', '/api/open/v1/nope', form, 'access_token=svcp_x'],
      ['GET', MCP_PATH, {}],
      ['PUT', MCP_PATH, form, 'a=b'],
      ['PUT', '/api/oauth/userinfo', form, 'access_token=svco_x'],
      ['DELETE', '/api/oauth/userinfo', {}],
    ];
    for (const [method, path, headers, body] of cases) {
      const asked = `${method} ${path} ${body ?? ''}`;
      const refused = await fetch(`${t.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
      assert.equal(refused.status, 429, asked);
      assert.equal(refused.headers.get('retry-after'), '60', asked);
      assert.equal((await refused.json() as { error: string }).error, 'rate_limited', asked);
      assert.equal((await fetch(`${t.baseUrl}${path}`, { method, headers: { ...headers, authorization: `Bearer ${generateToken('personal')}` }, ...(body === undefined ? {} : { body }) })).status, 429, `${asked}: a made-up token`);
    }
    const served = await get(t.baseUrl, '/api/open/v1/nope', { token });
    assert.equal(served.status, 404, 'a token bearing the mark');
    assert.ok(served.headers.get('x-ratelimit-remaining'));
    t.clock.advance(MINUTE);
    assert.equal((await get(t.baseUrl, '/api/open/v1/nope')).status, 404);
    assert.equal((await fetch(`${t.baseUrl}/api/open/v1/me`, { method: 'POST', headers: form, body: 'a=b' })).status, 405);
  });

  test('an address refused for unknown tokens is still served the OpenAPI document without a token, as the resource metadata: a request without one guesses nothing, and the site\'s API reference page reads it', async () => {
    for (let i = 0; i < 300; i++) {
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('personal') })).status, 401);
    }
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('personal') })).status, 429);
    const address = '/api/open/v1/openapi.json';
    for (const method of ['GET', 'HEAD']) {
      const served = await fetch(`${t.baseUrl}${address}`, { method });
      assert.equal(served.status, 200, method);
      assert.equal(served.headers.get('cache-control'), 'public, max-age=300', method);
      assert.equal(served.headers.get('x-ratelimit-remaining'), null, `${method}: not counted`);
    }
    assert.equal((await get(t.baseUrl, address, { token: generateToken('personal') })).status, 429, 'a made-up token is refused there as anywhere');
    t.clock.advance(MINUTE);
  });

  test('a form POSTed to UserInfo without the header from an address refused for now is refused before its body is read: refusing it costs no read of up to 64 KiB', async () => {
    for (let i = 0; i < 300; i++) {
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('access') })).status, 401);
    }
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('access') })).status, 429);
    // Its headers announce a body of 64 KiB, and not one byte of it is sent: the answer is the
    // address's 429 all the same, which comes only if the gate does not wait for the body first.
    const { host } = new URL(t.baseUrl);
    const head = await firstAnswerHead(t.baseUrl, `POST /api/oauth/userinfo HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 65536\r\n\r\n`);
    assert.match(head, /^HTTP\/1\.1 429 /, head.split('\r\n')[0]);
    assert.match(head, /\r\nretry-after: 60\r\n/i);
    // Served as before once the window has passed: a form without a token is told it has none.
    t.clock.advance(MINUTE);
    const none = await fetch(`${t.baseUrl}/api/oauth/userinfo`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'scope=openid' });
    assert.equal(none.status, 401);
  });

  test('an address refused for unknown tokens is still served the tokens that bear the service\'s mark, and no other token is looked up (another site\'s page cannot cut its visitors\' apps off)', async () => {
    const { browser, user } = await signedInBrowser(t);
    await browser.fetch('/settings/tokens');
    const form = { _csrf: browser.cookies.get('svc_csrf')!, name: 'script', scopes: 'profile:read', expires_in_days: '30', password: PASSWORD };
    assert.equal((await browser.postForm('/settings/tokens', form)).status, 303);
    const created = /svcp_\w+/.exec(await (await browser.fetch('/settings/tokens')).text())![0];
    const issued = await obtainTokens(t, browser, await newOAuthClient(t), { scope: 'profile:read' });
    const unmarked = await newAccessToken(t.deps, user, 'profile:read');
    // A page on another site has its visitors' browsers present 300 made-up tokens (attack59 M2).
    for (let i = 0; i < 300; i++) {
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken(i % 2 === 0 ? 'personal' : 'access') })).status, 401);
    }
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('access') })).status, 429);
    const { personalTokens, tokens } = t.deps.stores;
    const [findPersonal, findAccess] = [personalTokens.findBearer, tokens.findAccessBearer];
    let lookups = 0;
    personalTokens.findBearer = (hash) => { lookups += 1; return findPersonal.call(personalTokens, hash); };
    tokens.findAccessBearer = (hash) => { lookups += 1; return findAccess.call(tokens, hash); };
    try {
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: created })).status, 200, 'a personal token made on the settings page');
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: issued.access_token })).status, 200, 'an access token from the token endpoint');
      assert.equal(lookups, 2);
      const refused = await get(t.baseUrl, '/api/open/v1/', { token: unmarked.token });
      assert.equal(refused.status, 429, 'a valid token without the mark');
      assert.equal(refused.headers.get('ratelimit'), `"per-address";r=0;t=${60 - (Math.floor(t.clock.now() / 1000) % 60)}`);
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('personal') })).status, 429, 'a made-up token');
      assert.equal(lookups, 2, 'neither was looked up');
    } finally {
      personalTokens.findBearer = findPersonal;
      tokens.findAccessBearer = findAccess;
    }
    t.clock.advance(MINUTE);
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: unmarked.token })).status, 200);
  });

  test('a refused token counts against its address even when the client hangs up before its lookup ends', async () => {
    // Each unknown token's lookup is held until its client has reset the connection, so its
    // refusal is counted after the socket closed: the address must still be the client's.
    const personalTokens = t.deps.stores.personalTokens;
    const findBearer = personalTokens.findBearer;
    const releases: Array<() => void> = [];
    let lookupsStarted!: () => void;
    const allStarted = new Promise<void>((resolve) => { lookupsStarted = resolve; });
    // The limit is at least 300 failures a minute per address.
    const hangUps = 300;
    personalTokens.findBearer = async (hash) => {
      await new Promise<void>((release) => {
        releases.push(release);
        if (releases.length === hangUps) lookupsStarted();
      });
      return findBearer.call(personalTokens, hash);
    };
    try {
      const { port } = new URL(t.baseUrl);
      const sockets = Array.from({ length: hangUps }, () => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(`GET /api/open/v1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${generateToken('personal')}\r\n\r\n`);
        });
        socket.on('error', () => {});
        return socket;
      });
      await allStarted;
      await Promise.all(sockets.map((socket) => new Promise<void>((resolve) => {
        socket.on('close', () => resolve());
        socket.resetAndDestroy();
      })));
      // The server sees each reset in its next turns; then the lookups end and their refusals count.
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const release of releases) release();
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      personalTokens.findBearer = findBearer;
    }
    const refused = await get(t.baseUrl, '/api/open/v1/', { token: generateToken('personal') });
    assert.equal(refused.status, 429, 'the refusals of the clients that hung up were counted against 127.0.0.1');
    t.clock.advance(MINUTE);
  });

  test('requests refused before any lookup (no token, malformed, bad checksum) do not count toward the address limit', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    const valid = generateToken('personal');
    const badChecksum = valid.slice(0, -1) + (valid.endsWith('0') ? '1' : '0');
    // Well past the 300 a minute that looked-up failures get.
    for (let i = 0; i < 150; i++) {
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: badChecksum })).status, 401);
      assert.equal((await get(t.baseUrl, '/api/open/v1/', { header: i % 2 === 0 ? 'Bearer not-a-token' : 'Basic YTpi' })).status, 401);
      assert.equal((await get(t.baseUrl, '/api/open/v1/')).status, 401);
    }
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token: generateToken('personal') })).status, 401, 'an unknown token is still answered, not refused');
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token })).status, 200);
    t.clock.advance(MINUTE);
  });

  test('RATE_LIMIT_PER_MINUTE sets the per-token limit', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    for (let i = 0; i < 5; i++) assert.equal((await get(t.baseUrl, '/api/open/v1/', { token })).status, 200);
    const refused = await get(t.baseUrl, '/api/open/v1/', { token });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('x-ratelimit-limit'), '5');
  });
});

describe('resource API rate limit in Redis', { skip: skipWithoutRedis }, () => {
  forEachDatabase('shared by instances', (database) => {
    let apps: TestApp[];
    // Two instances over one database and one Redis: as two servers behind a load balancer.
    startAppsForSuite(database, 2, { redisUrl: redisUrl! }, (started) => { apps = started; });

    test('two instances sharing one Redis allow one token 60 requests in total, not 120', async () => {
      const user = await newUser(apps[0]!.deps);
      const { token } = await newAccessToken(apps[0]!.deps, user, 'profile:read');
      for (let i = 1; i <= 60; i++) {
        const response = await get(apps[i % 2]!.baseUrl, '/api/open/v1/me', { token });
        assert.equal(response.status, 200, `request ${i}`);
        assert.equal(response.headers.get('x-ratelimit-remaining'), String(60 - i));
      }
      for (const app of apps) {
        const refused = await get(app.baseUrl, '/api/open/v1/me', { token });
        assert.equal(refused.status, 429);
        assert.equal(refused.headers.get('retry-after'), '60');
      }
      const ready = await (await fetch(`${apps[0]!.baseUrl}/readyz`)).json() as { checks: Record<string, string> };
      assert.equal(ready.checks.rateLimiter, 'redis');
    });

    test('at an address both instances refuse, an access token one issued is served by the other, and once revoked by neither', async () => {
      const [a, b] = apps as [TestApp, TestApp];
      const { browser } = await signedInBrowser(a);
      const app = await newOAuthClient(a);
      const issued = await obtainTokens(a, browser, app, { scope: 'profile:read' });
      // The 300 made-up tokens, spread over both as a load balancer would: the count is shared.
      for (let i = 0; i < 300; i++) await get(apps[i % 2]!.baseUrl, '/api/open/v1/', { token: generateToken('access') });
      for (const instance of [a, b]) {
        assert.equal((await get(instance.baseUrl, '/api/open/v1/', { token: generateToken('access') })).status, 429);
        assert.equal((await get(instance.baseUrl, '/api/open/v1/', { token: issued.access_token })).status, 200);
      }
      const revoked = await fetch(`${b.baseUrl}/api/oauth/revoke`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: issued.access_token, ...clientFields(app) }),
      });
      assert.equal(revoked.status, 200);
      for (const instance of [a, b]) assert.equal((await get(instance.baseUrl, '/api/open/v1/', { token: issued.access_token })).status, 429);
      a.clock.advance(MINUTE); // the instances read one clock
    });
  });

  forEachDatabase('chosen by REDIS_URL', (database) => {
    test('with REDIS_URL set the service counts in Redis and says so in /readyz', async () => {
      const t = await startTestApp(database, { env: { REDIS_URL: redisUrl! } });
      try {
        assert.ok(t.deps.limiter instanceof RedisRateLimiter);
        const ready = await (await fetch(`${t.baseUrl}/readyz`)).json() as { checks: Record<string, string> };
        assert.equal(ready.checks.rateLimiter, 'redis');
      } finally {
        await t.close();
      }
    });
  });
});

forEachDatabase('resource API with Redis unreachable', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database, { env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}`, LOG_LEVEL: 'silent' } });
  });
  after(() => t.close());

  test('the API keeps serving and limiting from memory, and /readyz stays 200 reporting degraded', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    for (let i = 1; i <= 60; i++) {
      const response = await get(t.baseUrl, '/api/open/v1/me', { token });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-ratelimit-remaining'), String(60 - i));
    }
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 429);
    const ready = await fetch(`${t.baseUrl}/readyz`);
    assert.equal(ready.status, 200);
    const body = await ready.json() as { status: string; checks: Record<string, string> };
    assert.equal(body.status, 'ready');
    assert.equal(body.checks.rateLimiter, 'degraded');
  });
});
