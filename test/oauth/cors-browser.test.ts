/**
 * A single-page app on another origin, in a real headless Chromium (INTERFACE section 3, issue
 * 17.1): a tiny static server on another port and host name serves the app; the user signs in
 * and approves on our pages; the app's own script then reads discovery, redeems the code with
 * `fetch`, calls UserInfo and /me with its bearer token (preflighted requests), refreshes, and
 * revokes. Without CORS each of these is a network error in the page, although the server
 * acted on it. A public client, PKCE, no state: what oidc-client-ts and oauth4webapi send. And
 * such an app's silent sign-in, in a hidden iframe.
 */
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { type Browser as Chromium } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { PASSWORD, authorizeQuery, codeExchangeFields, newClient, newUser, pkcePair, startOAuthApp } from './helpers.js';


/** The app's page: no inline script, an empty icon so the browser asks for nothing else. */
const PAGE = '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>SPA</title>'
  + '<script src="/spa.js"></script></head><body>Signed in</body></html>';

/**
 * The app's script, as a browser-only app would write it with `fetch`: each call returns what the
 * page could read (status, the exposed headers, the JSON body), or throws the network error.
 */
const SCRIPT = `
async function read(response) {
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type'),
    wwwAuthenticate: response.headers.get('www-authenticate'),
    rateLimitRemaining: response.headers.get('x-ratelimit-remaining'), body: text === '' ? null : JSON.parse(text) };
}
const form = (fields) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
window.spa = {
  discovery: (issuer) => fetch(issuer + '/.well-known/openid-configuration').then(read),
  jwks: (uri) => fetch(uri).then(read),
  token: (endpoint, fields) => fetch(endpoint, form(fields)).then(read),
  revoke: (endpoint, fields) => fetch(endpoint, form(fields)).then(read),
  bearer: (url, token) => fetch(url, { headers: { authorization: 'Bearer ' + token } }).then(read),
};
`;

interface Read { status: number; type: string | null; wwwAuthenticate: string | null; rateLimitRemaining: string | null; body: Record<string, unknown> | null }

forEachDatabase('a single-page app on another origin in Chromium', (database) => {
  let t: TestApp;
  let browser: Chromium;
  let spa: Server;
  let spaOrigin: string;

  before(async () => {
    t = await startOAuthApp(database);
    spa = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://localhost').pathname;
      if (path === '/spa.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(SCRIPT);
      else if (path === '/callback') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => spa.listen(0, '127.0.0.1', resolve));
    // Another port and another host name than the server's 127.0.0.1: another origin and another site.
    spaOrigin = `http://localhost:${(spa.address() as { port: number }).port}`;
    if (!skipWithoutChromium) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => spa?.close(resolve));
    await t.close();
  });

  test('the app redeems its code with fetch from another origin, reads the JSON, calls UserInfo and /me, refreshes and revokes, with no console error', { skip: skipWithoutChromium }, async () => {
    const user = await newUser(t);
    const redirectUri = `${spaOrigin}/callback`;
    const c = await newClient(t, { type: 'public', redirectUris: [redirectUri] });
    const pkce = pkcePair();
    const context = await browser.newContext();
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()); });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));

    await page.goto(`${t.baseUrl}/oauth/authorize?${authorizeQuery(c, { pkce, state: null, scope: 'openid profile profile:read', redirectUri })}`);
    await page.fill('#username', user.username);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[type=submit]:has-text("Sign in")')]);
    await Promise.all([page.waitForURL(`${redirectUri}?**`), page.click('button[value=approve]')]);
    const callback = new URL(page.url());
    assert.equal(callback.origin, spaOrigin);
    assert.notEqual(callback.origin, new URL(t.baseUrl).origin);
    const code = callback.searchParams.get('code')!;
    assert.ok(code);
    assert.equal(callback.searchParams.get('state'), null);

    /** Calls one of the app's functions in the page, as its own code would. */
    const spa = (name: 'discovery' | 'jwks' | 'token' | 'revoke' | 'bearer', ...args: unknown[]): Promise<Read> =>
      page.evaluate(({ name, args }) => (window as unknown as { spa: Record<string, (...a: unknown[]) => Promise<Read>> }).spa[name]!(...args), { name, args });

    const discovery = await spa('discovery', t.baseUrl);
    assert.equal(discovery.status, 200);
    const metadata = discovery.body as { token_endpoint: string; revocation_endpoint: string; userinfo_endpoint: string; jwks_uri: string };
    assert.equal(metadata.token_endpoint, `${t.baseUrl}/api/oauth/token`);

    const jwks = await spa('jwks', metadata.jwks_uri);
    assert.equal(jwks.status, 200);
    assert.ok(Array.isArray((jwks.body as { keys: unknown[] }).keys));

    const issued = await spa('token', metadata.token_endpoint, codeExchangeFields(c, code, pkce));
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    assert.match(issued.type ?? '', /^application\/json/);
    const tokens = issued.body as { access_token: string; refresh_token: string; id_token: string; scope: string; token_type: string };
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(tokens.scope, 'openid profile profile:read');
    assert.ok(tokens.id_token);

    const info = await spa('bearer', metadata.userinfo_endpoint, tokens.access_token);
    assert.equal(info.status, 200);
    assert.equal((info.body as { preferred_username: string }).preferred_username, user.username);
    const me = await spa('bearer', `${t.baseUrl}/api/open/v1/me`, tokens.access_token);
    assert.equal(me.status, 200);
    assert.equal((me.body as { username: string }).username, user.username);
    assert.ok(me.rateLimitRemaining, 'the page reads the exposed rate-limit headers');

    const refreshed = await spa('token', metadata.token_endpoint, {
      grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: c.client.clientId,
    });
    assert.equal(refreshed.status, 200);
    const rotated = refreshed.body as { access_token: string; refresh_token: string };
    assert.notEqual(rotated.refresh_token, tokens.refresh_token);

    const revoked = await spa('revoke', metadata.revocation_endpoint, {
      token: rotated.refresh_token, token_type_hint: 'refresh_token', client_id: c.client.clientId,
    });
    assert.equal(revoked.status, 200);
    assert.match(revoked.type ?? '', /^application\/json/);
    assert.deepEqual(revoked.body, {});
    assert.deepEqual(consoleErrors, [], 'no console error on the way');

    // Errors are readable too, not network errors: the revoked grant's token, and the code again.
    const revokedRead = await spa('bearer', `${t.baseUrl}/api/open/v1/me`, rotated.access_token);
    assert.equal(revokedRead.status, 401);
    assert.match(revokedRead.wwwAuthenticate ?? '', /error="invalid_token"/);
    const reused = await spa('token', metadata.token_endpoint, codeExchangeFields(c, code, pkce));
    assert.equal(reused.status, 400);
    assert.equal((reused.body as { error: string }).error, 'invalid_grant');
    await context.close();
  });

  test('silent sign-in in a hidden iframe (prompt=none, as oidc-client-ts signinSilent sends it) gets its answer back in the frame: login_required without a session', { skip: skipWithoutChromium }, async () => {
    const redirectUri = `${spaOrigin}/callback`;
    const c = await newClient(t, { type: 'public', redirectUris: [redirectUri] });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(redirectUri);
    const silent = `${t.baseUrl}/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair(), state: 'silent', redirectUri, scope: 'openid', extra: { prompt: 'none' } })}`;
    const answered = page.waitForEvent('framenavigated', { predicate: (frame) => frame !== page.mainFrame() && frame.url().startsWith(`${redirectUri}?`) });
    await page.evaluate((src) => {
      const frame = document.createElement('iframe');
      frame.hidden = true;
      frame.src = src;
      document.body.append(frame);
    }, silent);
    const answer = new URL((await answered).url()).searchParams;
    assert.equal(answer.get('error'), 'login_required', 'the session cookie (SameSite=Lax) does not go with another site\'s frame');
    assert.equal(answer.get('state'), 'silent');
    await context.close();
  });
});
