/**
 * Hostile input (fast-check) at the site's forms: the sign-in form (`POST /login`), sign-out, the
 * consent form (`POST /oauth/authorize`), RP-initiated logout (`/oauth/logout`), the way back in
 * (`/password/forgot`, `/password/reset`) and the language picker — random, repeated, oversized and wrongly typed
 * fields, with and without the CSRF token. Each gets a page or a redirect on this site, never a
 * 5xx, and nothing stored changes (no session, no consent, no code).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { type Browser, type TestClient, hiddenFields, newClient, newUser, obtainTokens, pkcePair, signedInBrowser, startOAuthApp } from '../oauth/helpers.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { snapshotTables } from '../support/snapshot.js';

const VOLATILE = ['last_used_at', 'last_seen_at'];
const PAGE_STATUSES = new Set([200, 303, 400, 401, 403, 404, 413, 415, 429]);

forEachDatabase('hostile input at the forms', (database) => {
  let t: TestApp;
  let c: TestClient;
  let browser: Browser;
  let csrf: string;
  let username: string;

  before(async () => {
    t = await startOAuthApp(database);
    c = await newClient(t);
    username = (await newUser(t)).username;
    browser = (await signedInBrowser(t)).browser;
    const page = await browser.fetch('/login');
    csrf = hiddenFields(await page.text()).find(([n]) => n === '_csrf')![1];
  });
  after(() => t.close());

  const junk = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.string({ minLength: 300, maxLength: 3000 }),
    fc.constantFrom('', '\u0000', '\r\n', '%00', '<script>alert(1)</script>', '"><img src=x>', '../../etc/passwd', '//evil.example', "' or 1=1 --"),
  );

  const fields = (names: string[], known: Record<string, () => fc.Arbitrary<string>>) => fc.array(
    fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 10 })).chain((name) =>
      fc.oneof(junk, Object.hasOwn(known, name) ? known[name]!() : junk).map((v): [string, string] => [name, v])),
    { maxLength: 10 },
  );

  const body = (form: fc.Arbitrary<Array<[string, string]>>): fc.Arbitrary<{ type: string; text: string }> => {
    const urlencoded = form.map((pairs) => ({ type: 'application/x-www-form-urlencoded', text: new URLSearchParams(pairs).toString() }));
    return fc.oneof(
      urlencoded, urlencoded, urlencoded, urlencoded,
      form.map((pairs) => ({ type: 'application/json', text: JSON.stringify(Object.fromEntries(pairs)) })),
      fc.string({ maxLength: 200 }).map((text) => ({ type: 'application/json', text })),
      fc.string({ maxLength: 200 }).map((text) => ({ type: 'text/plain', text })),
      fc.string({ maxLength: 200 }).map((text) => ({ type: 'application/x-www-form-urlencoded', text })),
      fc.constant({ type: 'application/x-www-form-urlencoded', text: `a=${'x'.repeat(70_000)}` }),
    );
  };

  async function send(path: string, payload: { type: string; text: string }, withCookies: boolean): Promise<Response> {
    const init = { method: 'POST', headers: { 'content-type': payload.type }, body: payload.text };
    return withCookies ? browser.fetch(path, init) : fetch(t.baseUrl + path, { ...init, redirect: 'manual' });
  }

  function assertSafe(response: Response, text: string): void {
    assert.ok(PAGE_STATUSES.has(response.status), `status ${response.status}: ${text.slice(0, 300)}`);
    const location = response.headers.get('location');
    if (location !== null) assert.ok(location.startsWith('/') && !location.startsWith('//'), `redirect off the site: ${location}`);
    assert.doesNotMatch(text, /<script>alert|<img src=x>/, 'input is escaped');
  }

  test('POST /login: random fields never sign anyone in, never redirect off the site, never a 5xx, and change nothing', async () => {
    const before = await snapshotTables(t.deps.database.db, VOLATILE);
    const form = fields(['username', 'password', 'return_to', '_csrf'], {
      username: () => fc.constant(username),
      _csrf: () => fc.constant(csrf),
      return_to: () => fc.constantFrom('/', '//evil.example', 'https://evil.example', '/\\evil'),
    });
    await fc.assert(fc.asyncProperty(body(form), fc.boolean(), async (payload, withCookies) => {
      const response = await send('/login', payload, withCookies);
      const text = await response.text();
      assertSafe(response, text);
      assert.notEqual(response.status, 303, 'no sign-in without the password');
    }), { numRuns: 150 });
    assert.equal(await snapshotTables(t.deps.database.db, VOLATILE), before);
  });

  test('POST /password/forgot and /password/reset: random fields never reset a password, mail or store a link, never a 5xx', async () => {
    const before = await snapshotTables(t.deps.database.db, VOLATILE);
    const form = fields(['login', 'token', 'password', 'code', '_csrf'], {
      _csrf: () => fc.constant(csrf),
      token: () => fc.constantFrom('', 'x'.repeat(43), '../../etc', '%00'),
      password: () => fc.constant('a new password that is long'),
    });
    await fc.assert(fc.asyncProperty(body(form), fc.boolean(), fc.constantFrom('/password/forgot', '/password/reset'), async (payload, withCookies, path) => {
      const response = await send(path, payload, withCookies);
      const text = await response.text();
      assertSafe(response, text);
    }), { numRuns: 150 });
    assert.equal(await snapshotTables(t.deps.database.db, VOLATILE), before);
  });

  test('POST /language: random fields never redirect off the site, never a 5xx, and change nothing stored', async () => {
    const before = await snapshotTables(t.deps.database.db, VOLATILE);
    const form = fields(['lang', 'return_to'], {
      lang: () => fc.constantFrom('en', 'zh-CN', 'zh-TW', 'zh', 'EN', ''),
      return_to: () => fc.constantFrom('/', '//evil.example', 'https://evil.example', '/\\evil', '/settings/profile?x=1'),
    });
    await fc.assert(fc.asyncProperty(body(form), fc.boolean(), async (payload, withCookies) => {
      const response = await send('/language', payload, withCookies);
      const text = await response.text();
      assertSafe(response, text);
    }), { numRuns: 150 });
    assert.equal(await snapshotTables(t.deps.database.db, VOLATILE), before);
  });

  test('POST /oauth/authorize (the consent form): random fields never give a code or store a consent, never a 5xx', async () => {
    const before = await snapshotTables(t.deps.database.db, VOLATILE);
    const form = fields(['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'decision', '_csrf'], {
      client_id: () => fc.constant(c.client.clientId),
      redirect_uri: () => fc.constantFrom(c.redirectUri, `${c.redirectUri}/`, '//evil.example'),
      decision: () => fc.constantFrom('approve', 'deny', 'APPROVE'),
      _csrf: () => fc.constant(csrf),
      code_challenge: () => fc.constant(pkcePair().challenge),
      scope: () => fc.constantFrom('profile:read', 'admin', 'openid'),
    });
    await fc.assert(fc.asyncProperty(body(form), fc.boolean(), async (payload, withCookies) => {
      const response = await send('/oauth/authorize', payload, withCookies);
      const text = await response.text();
      assert.ok(response.status < 500, `status ${response.status}: ${text.slice(0, 300)}`);
      const location = response.headers.get('location');
      if (location !== null && !location.startsWith('/')) {
        assert.ok(location.startsWith(`${c.redirectUri}?`), `redirect only to the registered URI: ${location}`);
        assert.equal(new URL(location).searchParams.get('code'), null, 'no code from a random form');
      }
    }), { numRuns: 150 });
    assert.equal(await snapshotTables(t.deps.database.db, VOLATILE), before);
  });

  test('GET and POST /oauth/logout: random parameters never end the session, never redirect but to a registered post-logout URI or this site, never a 5xx', async () => {
    const app = await newClient(t, { postLogoutRedirectUris: ['https://app.example/bye'] });
    // A real id_token, of another person: it must never sign this browser out.
    const other = await signedInBrowser(t);
    const idToken = (await obtainTokens(t, other.browser, app, { scope: 'openid', extra: { nonce: 'n' } })).id_token!;
    const before = await snapshotTables(t.deps.database.db, VOLATILE);
    const form = fields(['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales', 'decision', '_csrf'], {
      id_token_hint: () => fc.constantFrom(idToken, `${idToken.slice(0, -4)}AAAA`, 'a.b.c'),
      client_id: () => fc.constantFrom(app.client.clientId, c.client.clientId),
      post_logout_redirect_uri: () => fc.constantFrom('https://app.example/bye', 'https://app.example/bye/', '//evil.example', 'https://evil.example/'),
      decision: () => fc.constantFrom('stay', 'LOGOUT', 'yes'),
      _csrf: () => fc.constant(csrf),
    });
    await fc.assert(fc.asyncProperty(form, body(form), fc.boolean(), async (query, payload, asGet) => {
      const response = asGet
        ? await browser.fetch(`/oauth/logout?${new URLSearchParams(query)}`)
        : await send('/oauth/logout', payload, true);
      const text = await response.text();
      assert.ok(PAGE_STATUSES.has(response.status), `status ${response.status}: ${text.slice(0, 300)}`);
      const location = response.headers.get('location');
      if (location !== null && !(location.startsWith('/') && !location.startsWith('//'))) {
        assert.ok(location.startsWith('https://app.example/bye') && !location.startsWith('https://app.example/bye/'), `redirect only to the registered URI: ${location}`);
      }
      assert.doesNotMatch(text, /<script>alert|<img src=x>/, 'input is escaped');
    }), { numRuns: 150 });
    assert.equal(await snapshotTables(t.deps.database.db, VOLATILE), before, 'no session ended, nothing queued');
  });

  test('POST /logout without the CSRF token is refused and the session lives on', async () => {
    const before = await snapshotTables(t.deps.database.db, VOLATILE);
    await fc.assert(fc.asyncProperty(body(fields(['_csrf'], {})), async (payload) => {
      const response = await send('/logout', payload, true);
      const text = await response.text();
      assertSafe(response, text);
      assert.notEqual(response.status, 303);
    }), { numRuns: 50 });
    assert.equal(await snapshotTables(t.deps.database.db, VOLATILE), before);
  });
});
