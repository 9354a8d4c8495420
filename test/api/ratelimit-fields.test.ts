/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11, INTERFACE section 11):
 * `RateLimit-Policy` and `RateLimit` beside `X-RateLimit-*` on every API answer to a token, the
 * same numbers in both; on a 429 consistent with `Retry-After`; readable by browser apps (CORS);
 * and on the sign-in throttling's 429, saying what `Retry-After` says.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rateLimitField, rateLimitPolicyField, throttledHeaders } from '../../src/core/rate-limit-fields.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Browser, newUser as newSiteUser } from '../oauth/helpers.js';
import { get, newAccessToken, newUser } from './fixtures.js';

describe('RateLimit field formatting', () => {
  test('RateLimit-Policy is a String item with q and w', () => {
    assert.equal(rateLimitPolicyField({ name: 'per-token', quota: 60, windowSeconds: 60 }), '"per-token";q=60;w=60');
  });

  test('RateLimit is a String item with r and t, never negative or fractional', () => {
    assert.equal(rateLimitField('per-token', 42, 30), '"per-token";r=42;t=30');
    assert.equal(rateLimitField('per-token', -1, 2.7), '"per-token";r=0;t=2');
  });

  test('a throttled answer says the same in Retry-After and RateLimit', () => {
    assert.deepEqual(throttledHeaders('sign-in', 840), { 'retry-after': '840', ratelimit: '"sign-in";r=0;t=840' });
    assert.deepEqual(throttledHeaders('sign-in', 0), { 'retry-after': '1', ratelimit: '"sign-in";r=0;t=1' });
  });

  test('a policy name that would need escaping is refused', () => {
    assert.throws(() => rateLimitField('a"b', 1, 1));
    assert.throws(() => rateLimitPolicyField({ name: 'A B', quota: 1, windowSeconds: 1 }));
  });
});

/** The numbers of `"name";r=N;t=N` or `"name";q=N;w=N`. */
function parameters(field: string | null): Record<string, string> {
  assert.ok(field, 'the field is present');
  const [name, ...params] = field.split(';');
  return { name: name!, ...Object.fromEntries(params.map((p) => p.split('=') as [string, string])) };
}

forEachDatabase('IETF RateLimit fields on the API', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: { RATE_LIMIT_PER_MINUTE: '3' } }); });
  after(() => t.close());

  test('every answer to a token carries RateLimit-Policy and RateLimit agreeing with X-RateLimit-*, and the 429 with Retry-After', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'profile:read');
    // 200s, a 403 (insufficient_scope) and then the 429: each counted, each with the fields.
    const paths = ['/api/open/v1/me', '/api/open/v1/', '/api/open/v1/me/posts', '/api/open/v1/me'];
    for (const [i, path] of paths.entries()) {
      const response = await get(t.baseUrl, path, { token });
      assert.equal(response.status, [200, 200, 403, 429][i], path);
      const policy = parameters(response.headers.get('ratelimit-policy'));
      const limit = parameters(response.headers.get('ratelimit'));
      assert.deepEqual(policy, { name: '"per-token"', q: response.headers.get('x-ratelimit-limit'), w: '60' });
      assert.equal(limit.name, '"per-token"');
      assert.equal(limit.r, response.headers.get('x-ratelimit-remaining'));
      assert.equal(Number(limit.t), Number(response.headers.get('x-ratelimit-reset')) - Math.floor(t.clock.now() / 1000));
      if (response.status === 429) {
        assert.equal(limit.r, '0');
        assert.ok(Number(response.headers.get('retry-after')) >= Number(limit.t), 'Retry-After is not earlier than the end of the window');
      }
    }
  });

  test('a browser app may read the fields (Access-Control-Expose-Headers)', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'profile:read');
    const response = await get(t.baseUrl, '/api/open/v1/me', { token });
    const exposed = (response.headers.get('access-control-expose-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());
    for (const header of ['ratelimit', 'ratelimit-policy', 'x-ratelimit-remaining', 'retry-after']) assert.ok(exposed.includes(header), header);
  });
});

forEachDatabase('IETF RateLimit fields on the sign-in throttling', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('a throttled sign-in answers 429 with RateLimit saying what Retry-After says, and no quota', async () => {
    const user = await newSiteUser(t);
    const browser = new Browser(t);
    for (let i = 0; i < 10; i++) assert.equal((await browser.signIn(user.username, 'wrong password')).status, 401);
    const refused = await browser.signIn(user.username, 'wrong password');
    assert.equal(refused.status, 429);
    const retryAfter = refused.headers.get('retry-after');
    assert.ok(retryAfter && Number(retryAfter) > 0);
    assert.equal(refused.headers.get('ratelimit'), `"sign-in";r=0;t=${retryAfter}`);
    assert.equal(refused.headers.get('ratelimit-policy'), null, 'the quota would tell which counter refused');
  });
});
