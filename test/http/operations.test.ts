/** Health, readiness, metrics, headers, error shapes and logging, over real HTTP. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { buildMetricsApp } from '../../src/http/metrics-app.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { rawRequest } from '../support/raw-request.js';

/** Signs in through the form as a browser would; returns the cookies to send afterwards. */
async function signIn(t: TestApp, username: string, password: string, returnTo = '/'): Promise<{ status: number; cookie: string; location: string | null }> {
  const page = await fetch(`${t.baseUrl}/login`);
  const csrfCookie = page.headers.getSetCookie().find((c) => c.startsWith('svc_csrf='))!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const res = await fetch(`${t.baseUrl}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie },
    body: new URLSearchParams({ username, password, _csrf: csrf, return_to: returnTo }),
  });
  const session = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
  return { status: res.status, cookie: [csrfCookie, session?.split(';')[0]].filter(Boolean).join('; '), location: res.headers.get('location') };
}

forEachDatabase('operations and pages', (database) => {
  let t: TestApp;
  const logLines: string[] = [];
  before(async () => {
    t = await startTestApp(database, { logLines });
    await createAccount(t.deps.stores, t.deps.clock, { username: 'opsuser', password: 'ops password 1' });
  });
  after(() => t.close());

  test('/healthz answers ok and /readyz reports the database reachable', async () => {
    assert.deepEqual(await (await fetch(`${t.baseUrl}/healthz`)).json(), { status: 'ok' });
    const ready = await fetch(`${t.baseUrl}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual((await ready.json()).checks.database, 'ok');
  });

  test('/metrics is not served on the public port (INTERFACE section 8)', async () => {
    const response = await fetch(`${t.baseUrl}/metrics`);
    assert.equal(response.status, 404);
    assert.doesNotMatch(await response.text(), /sign_in_failures_total/);
  });

  test('/metrics on its own port is Prometheus text with request counts by route and status, and the feature counters', async () => {
    await fetch(`${t.baseUrl}/healthz`);
    const metrics = buildMetricsApp(t.deps.metrics.registry);
    const address = await metrics.listen({ port: 0, host: '127.0.0.1' });
    const text = await (await fetch(`${address}/metrics`)).text().finally(() => metrics.close());
    assert.match(text, /http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
    assert.match(text, /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/healthz",status="200"\}/);
    for (const counter of ['tokens_issued_total', 'tokens_revoked_total', 'sign_in_failures_total', 'rate_limit_refusals_total']) {
      assert.match(text, new RegExp(`# TYPE ${counter} counter`));
    }
  });

  test('pages forbid inline script and framing, and send no referrer', async () => {
    const res = await fetch(`${t.baseUrl}/login`);
    const csp = res.headers.get('content-security-policy')!;
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  });

  test('JSON API answers carry the REST security headers: nosniff, no framing, nothing loaded', async () => {
    const form = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'client_id=nobody' };
    const requests: Array<[string, RequestInit]> = [
      ['/api/open/v1/me', {}], ['/api/oauth/userinfo', {}], ['/api/nothing', {}],
      // The OAuth endpoints, a client app's JSON: not the pages' headers.
      ['/api/oauth/token', form], ['/api/oauth/revoke', form], ['/api/oauth/introspect', form], ['/api/oauth/par', form],
    ];
    for (const [path, init] of requests) {
      const res = await fetch(`${t.baseUrl}${path}`, init);
      assert.equal(res.headers.get('cross-origin-opener-policy'), null, path);
      assert.equal(res.headers.get('content-security-policy'), "default-src 'none'; frame-ancestors 'none'", path);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', path);
      assert.equal(res.headers.get('cache-control'), 'no-store', path);
    }
  });

  test('cookies are HttpOnly and SameSite=Lax, and not Secure on http', async () => {
    const res = await fetch(`${t.baseUrl}/login`);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('svc_csrf='))!;
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.doesNotMatch(cookie, /Secure/);
  });

  test('an unknown API path is a JSON not_found; an unknown page is an HTML page', async () => {
    const api = await fetch(`${t.baseUrl}/api/nothing`);
    assert.equal(api.status, 404);
    assert.deepEqual(await api.json(), { error: 'not_found', error_description: 'No such page or endpoint.' });
    const page = await fetch(`${t.baseUrl}/nothing-here`);
    assert.equal(page.status, 404);
    assert.match(page.headers.get('content-type')!, /text\/html/);
  });

  test('a known address asked with a method it does not take is 405 with Allow, not 404 (RFC 9110 15.5.6)', async () => {
    const token = await fetch(`${t.baseUrl}/api/oauth/token`);
    assert.equal(token.status, 405);
    assert.equal(token.headers.get('allow'), 'POST');
    assert.equal(token.headers.get('access-control-allow-origin'), '*');
    assert.equal(token.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await token.json(), { error: 'invalid_request', error_description: 'This address takes POST, not GET.' });
    const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { method: 'POST' });
    assert.equal(me.status, 405);
    assert.match(me.headers.get('allow')!, /^GET, HEAD\b/);
    const page = await fetch(`${t.baseUrl}/settings/tokens`, { method: 'PUT' });
    assert.equal(page.status, 405);
    assert.match(page.headers.get('content-type')!, /text\/html/);
    assert.equal((await fetch(`${t.baseUrl}/static/no-such-file.css`)).status, 404, 'a route that takes the method and finds nothing');
    assert.equal((await fetch(`${t.baseUrl}/api/oauth/nothing`, { method: 'POST' })).status, 404);
  });

  test('an address with a malformed percent-escape is invalid_request with the security headers, never Fastify\'s own answer echoing it', async () => {
    const api = await fetch(`${t.baseUrl}/api/open/v1/%E0%A4%A`);
    assert.equal(api.status, 400);
    assert.equal(api.headers.get('cache-control'), 'no-store');
    assert.equal(api.headers.get('x-content-type-options'), 'nosniff');
    assert.deepEqual(await api.json(), { error: 'invalid_request', error_description: 'The request address is not well-formed (a malformed percent-escape).' });
    const page = await fetch(`${t.baseUrl}/settings/%E0%A4%A`, { headers: { 'accept-language': 'zh-CN' } });
    assert.equal(page.status, 400);
    assert.match(page.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    const body = await page.text();
    assert.match(body, /<html lang="zh-CN"/);
    assert.doesNotMatch(body, /FST_ERR|%E0%A4%A/);
    // The console tells no one which of its addresses exist (INTERFACE section 14).
    const console = await fetch(`${t.baseUrl}/admin/members/%E0%A4%A`);
    assert.equal(console.status, 404);
    assert.equal(console.headers.get('x-robots-tag'), 'noindex');
  });

  test('a request line in absolute form that is no URL (GET http://%zz/settings, RFC 9112 3.2.2) is the same 400 page, and the server answers the next request', async () => {
    const answer = await rawRequest('GET', t.baseUrl, ['Accept-Language', 'zh-CN'], undefined, { target: 'http://%zz/settings' });
    assert.equal(answer.status, 400);
    assert.match(answer.headers['content-security-policy'] as string, /frame-ancestors 'none'/);
    assert.match(answer.body, /<html lang="zh-CN"/);
    assert.equal((await fetch(`${t.baseUrl}/`)).status, 200);
  });

  test('an unknown page knows who is signed in: the not-found page reads the session cookie itself', async () => {
    const { cookie } = await signIn(t, 'opsuser', 'ops password 1');
    const page = await fetch(`${t.baseUrl}/nothing-here`, { headers: { cookie } });
    assert.equal(page.status, 404);
    assert.match(await page.text(), /opsuser/);
    const anonymous = await fetch(`${t.baseUrl}/nothing-here`);
    assert.doesNotMatch(await anonymous.text(), /opsuser/);
  });

  test('the JSON APIs neither read nor set a cookie: a session cookie is no credential there', async () => {
    const { cookie } = await signIn(t, 'opsuser', 'ops password 1');
    for (const path of ['/api/open/v1/me', '/api/oauth/userinfo']) {
      const res = await fetch(`${t.baseUrl}${path}`, { headers: { cookie } });
      assert.equal(res.status, 401, path);
      assert.deepEqual(res.headers.getSetCookie(), [], path);
    }
  });

  test('an oversized body is refused with 413, never a 5xx', async () => {
    const res = await fetch(`${t.baseUrl}/login`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `username=${'x'.repeat(200_000)}`,
    });
    assert.equal(res.status, 413);
  });

  test('signing in starts a session under a new id and returns only to a local path', async () => {
    const first = await signIn(t, 'opsuser', 'ops password 1', '/posts/new');
    assert.equal(first.status, 303);
    assert.equal(first.location, '/posts/new');
    const second = await signIn(t, 'opsuser', 'ops password 1', 'https://evil.example/');
    assert.equal(second.location, '/');
    assert.notEqual(first.cookie, second.cookie);
    const home = await (await fetch(`${t.baseUrl}/`, { headers: { cookie: second.cookie } })).text();
    assert.match(home, /Sign out/);
  });

  test('a wrong password and an unknown account get the same answer', async () => {
    const wrong = await signIn(t, 'opsuser', 'not the password');
    const unknown = await signIn(t, 'nobody-here', 'not the password');
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
  });

  test('a sign-in form without its CSRF token is refused and starts no session', async () => {
    const res = await fetch(`${t.baseUrl}/login`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'opsuser', password: 'ops password 1' }),
    });
    assert.equal(res.status, 403);
    assert.equal(res.headers.getSetCookie().some((c) => c.startsWith('svc_session=')), false);
  });

  test('request log lines carry the request id', async () => {
    const before = logLines.length;
    await fetch(`${t.baseUrl}/healthz`);
    const completed = logLines.slice(before).map((line) => JSON.parse(line) as { msg?: string; reqId?: unknown })
      .filter((line) => line.msg === 'request completed');
    assert.equal(completed.length, 1);
    assert.match(String(completed[0]!.reqId), /^req-/);
  });

  test('the logs never contain the state or nonce of an authorization request sent on to sign in (return_to)', async () => {
    const request = '/oauth/authorize?response_type=code&client_id=x&state=STATE_IN_RETURN&nonce=NONCE_IN_RETURN';
    for (const page of ['/login', '/signup']) {
      const before = logLines.length;
      await fetch(`${t.baseUrl}${page}?${new URLSearchParams({ return_to: request })}`);
      const logged = logLines.slice(before).join('');
      assert.ok(logged.includes(`${page}?return_to=`), 'the request is logged');
      for (const secret of ['STATE_IN_RETURN', 'NONCE_IN_RETURN']) assert.equal(logged.includes(secret), false, `${page}: ${secret}`);
    }
  });

  test('the logs never contain a password, a code or a token from the query', async () => {
    await signIn(t, 'opsuser', 'ops password 1');
    await fetch(`${t.baseUrl}/nothing?code=SECRETCODE123&state=STATEVALUE&token=svco_SECRET`);
    const logs = logLines.join('');
    assert.ok(logs.length > 0);
    for (const secret of ['ops password 1', 'SECRETCODE123', 'STATEVALUE', 'svco_SECRET', 'svc_session=']) {
      assert.equal(logs.includes(secret), false, secret);
    }
  });
});
