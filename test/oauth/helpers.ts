/** Drives the authorization flow over real HTTP the way a browser and a client app would. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import type { User } from '../../src/core/accounts/ports.js';
import type { Client } from '../../src/core/oauth/ports.js';
import type { KeySet } from '../../src/core/oidc/key-ring.js';
import { type TestApp, type TestAppOptions, startTestApp } from '../support/app.js';
import type { TestDatabase } from '../support/databases.js';
import { CookieJar, browse, pkcePair } from '../support/browser-flow.js';

export const PASSWORD = 'correct horse battery';

export function unique(prefix: string): string {
  return `${prefix}${randomBytes(4).toString('hex')}`;
}

export async function newUser(t: TestApp, username = unique('user')): Promise<User> {
  return createAccount(t.deps.stores, t.deps.clock, { username, password: PASSWORD });
}

export interface TestClient {
  client: Client;
  secret?: string;
  redirectUri: string;
}

export interface NewClientOptions {
  type?: 'confidential' | 'public';
  redirectUris?: string[];
  ownerId?: number;
  postLogoutRedirectUris?: string[];
  backchannelLogoutUri?: string;
}

export async function newClient(t: TestApp, options: NewClientOptions = {}): Promise<TestClient> {
  const redirectUris = options.redirectUris ?? ['https://app.example/callback'];
  const registered = await registerClient(t.deps.stores, t.deps.clock, {
    name: 'Test App', type: options.type ?? 'confidential', redirectUris, ownerId: options.ownerId ?? null,
    homepageUrl: 'https://app.example', description: 'An app under test.',
    ...(options.postLogoutRedirectUris ? { postLogoutRedirectUris: options.postLogoutRedirectUris } : {}),
    ...(options.backchannelLogoutUri ? { backchannelLogoutUri: options.backchannelLogoutUri } : {}),
  });
  return { client: registered.client, ...(registered.secret ? { secret: registered.secret } : {}), redirectUri: redirectUris[0]! };
}

/** A PKCE verifier and its S256 challenge (RFC 7636 4.1, 4.2), the one the browser-flow helpers make. */
export { pkcePair } from '../support/browser-flow.js';

/** A browser's cookies, carried by hand; `headers` go with every request (a User-Agent, X-Forwarded-For behind a proxy). */
export class Browser {
  readonly cookies = new CookieJar();
  constructor(readonly t: TestApp, readonly headers: Record<string, string> = {}) {}

  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(this.headers)) headers.set(name, value);
    return browse(this.cookies, path.startsWith('http') ? path : this.t.baseUrl + path, { ...init, headers });
  }

  async postForm(path: string, fields: Record<string, string> | Array<[string, string]>): Promise<Response> {
    return this.fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Signs in through the real form (CSRF cookie and field). */
  async signIn(username: string, password = PASSWORD, returnTo = '/'): Promise<Response> {
    const page = await this.fetch(`/login?return_to=${encodeURIComponent(returnTo)}`);
    const csrf = hiddenFields(await page.text()).find(([n]) => n === '_csrf')![1];
    return this.postForm('/login', { username, password, return_to: returnTo, _csrf: csrf });
  }
}

/** Hidden inputs of the first form on a page, in order. */
export function hiddenFields(html: string): Array<[string, string]> {
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return [...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [unescape(m[1]!), unescape(m[2]!)]);
}

/** The form of a `form_post` authorization response page: where the browser posts it, and its fields. */
export function formPostAnswer(html: string): { action: string; fields: Array<[string, string]> } | undefined {
  const form = /<form method="post" action="([^"]*)" id="authorization-response">([\s\S]*?)<\/form>/.exec(html);
  return form ? { action: form[1]!.replace(/&amp;/g, '&'), fields: hiddenFields(form[2]!) } : undefined;
}

export function consentForm(html: string): Array<[string, string]> {
  const start = html.indexOf('action="/oauth/authorize"');
  assert.ok(start > 0, 'a consent form');
  return hiddenFields(html.slice(start));
}

export interface AuthorizeOptions {
  scope?: string;
  /** `null` sends no state at all (allowed with PKCE, RFC 9700 2.1.1). */
  state?: string | null;
  pkce?: { verifier: string; challenge: string } | null;
  redirectUri?: string;
  extra?: Record<string, string>;
}

export function authorizeQuery(c: TestClient, options: AuthorizeOptions = {}): URLSearchParams {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: c.client.clientId,
    redirect_uri: options.redirectUri ?? c.redirectUri,
    scope: options.scope ?? 'profile:read posts:read',
  });
  if (options.state !== null) query.set('state', options.state ?? 'state-123');
  if (options.pkce) {
    query.set('code_challenge', options.pkce.challenge);
    query.set('code_challenge_method', 'S256');
  }
  for (const [k, v] of Object.entries(options.extra ?? {})) query.set(k, v);
  return query;
}

/** The query of a redirect back to the client. */
export function redirectParams(response: Response): URLSearchParams {
  assert.equal(response.status, 302, 'a redirect');
  return new URL(response.headers.get('location')!).searchParams;
}

/** Signed in already: authorize, approve on the consent page (if shown), return the code. */
export async function obtainCode(browser: Browser, c: TestClient, options: AuthorizeOptions = {}): Promise<string> {
  let response = await browser.fetch(`/oauth/authorize?${authorizeQuery(c, options)}`);
  if (response.status === 200) {
    const fields = consentForm(await response.text());
    response = await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]);
  }
  const params = redirectParams(response);
  assert.equal(params.get('error'), null, `no error: ${params.get('error_description')}`);
  return params.get('code')!;
}

export async function tokenRequest(t: TestApp, fields: Record<string, string> | Array<[string, string]>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

export function clientFields(c: TestClient): Record<string, string> {
  return c.secret ? { client_id: c.client.clientId, client_secret: c.secret } : { client_id: c.client.clientId };
}

/**
 * The token request that redeems `code` as the authorization request asked: its redirect_uri, the
 * verifier of its code_challenge (none without PKCE), and the client's credentials; `extra` adds or replaces fields.
 */
export function codeExchangeFields(
  c: TestClient, code: string, pkce: { verifier: string } | null, extra: Record<string, string> = {},
): Record<string, string> & { grant_type: string; code: string; redirect_uri: string } {
  return {
    grant_type: 'authorization_code', code, redirect_uri: c.redirectUri,
    ...(pkce ? { code_verifier: pkce.verifier } : {}), ...clientFields(c), ...extra,
  };
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
  /** With `openid`. */
  id_token?: string;
}

/** The whole flow: a signed-in browser, a code, and the tokens for it. */
export async function obtainTokens(t: TestApp, browser: Browser, c: TestClient, options: AuthorizeOptions = {}): Promise<Tokens> {
  const pkce = options.pkce === undefined ? pkcePair() : options.pkce;
  const code = await obtainCode(browser, c, { ...options, pkce });
  const response = await tokenRequest(t, codeExchangeFields(c, code, pkce, options.redirectUri ? { redirect_uri: options.redirectUri } : {}));
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Tokens;
}

export async function introspect(t: TestApp, c: TestClient, token: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${t.baseUrl}/api/oauth/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, ...clientFields(c) }).toString(),
  });
  assert.equal(response.status, 200);
  return (await response.json()) as Record<string, unknown>;
}

/** A signed-in browser for a new user. */
export async function signedInBrowser(t: TestApp): Promise<{ browser: Browser; user: User }> {
  const user = await newUser(t);
  const browser = new Browser(t);
  const response = await browser.signIn(user.username);
  assert.equal(response.status, 303);
  return { browser, user };
}

/** A code the member signed in on `browser` gives `c`, with its PKCE pair and the token request's fields that redeem it. */
export async function codeFor(browser: Browser, c: TestClient, authorize: Omit<AuthorizeOptions, 'pkce'> = {}) {
  const pkce = pkcePair();
  const code = await obtainCode(browser, c, { ...authorize, pkce });
  return { pkce, code, fields: codeExchangeFields(c, code, pkce) };
}

/** A fresh code for a new user and a new client, with the token request's fields that redeem it. */
export async function freshCode(t: TestApp, client: NewClientOptions = {}, authorize: Omit<AuthorizeOptions, 'pkce'> = {}) {
  const c = await newClient(t, client);
  const { browser, user } = await signedInBrowser(t);
  return { c, browser, user, ...await codeFor(browser, c, authorize) };
}

/** Runs `meanwhile` as the next id_token is about to be signed, inside the token request that signs it. */
export async function whileSigning<T>(t: TestApp, meanwhile: () => Promise<void>, request: () => Promise<T>): Promise<T> {
  const keys = t.deps.keys as { keySet(): Promise<KeySet> };
  const keySet = keys.keySet.bind(keys);
  let pending: (() => Promise<void>) | undefined = meanwhile;
  keys.keySet = async () => {
    const set = await keySet();
    return Object.assign(Object.create(set) as KeySet, {
      signingKey: async (...args: Parameters<KeySet['signingKey']>) => {
        const work = pending;
        pending = undefined;
        await work?.();
        return set.signingKey(...args);
      },
    });
  };
  try {
    return await request();
  } finally {
    keys.keySet = keySet;
  }
}

/**
 * These suites sign in hundreds of times from one address with the real limiter: successful
 * sign-ins never count (INTERFACE section 4), so a crowd behind one address is never refused.
 */
export function startOAuthApp(database: TestDatabase, options: TestAppOptions = {}): Promise<TestApp> {
  return startTestApp(database, options);
}

/** RFC 6749 5.2: a JSON object with a registered-shape `error`, and nothing that reads like a stack trace. */
export async function errorShaped(response: Response, status?: number): Promise<{ error: string; error_description?: string }> {
  const text = await response.text();
  if (status !== undefined) assert.equal(response.status, status, text);
  assert.doesNotMatch(text, /\n\s+at |stack|Error:/, `no stack trace in ${text}`);
  const body = JSON.parse(text) as { error: string; error_description?: string };
  assert.match(body.error, /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/);
  if (body.error_description !== undefined) assert.doesNotMatch(body.error_description, /["\\]/);
  return body;
}

/** Whether an access token still opens the API. */
export const accessTokenWorks = async (t: TestApp, token: string) =>
  (await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token}` } })).status === 200;

/** How many access and refresh tokens are stored under a grant. */
export async function tokensUnder(t: TestApp, grantId: number): Promise<number> {
  const { db } = t.deps.database;
  const counted = await Promise.all((['refresh_tokens', 'access_tokens'] as const).map((table) =>
    db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('grant_id', '=', grantId).executeTakeFirstOrThrow()));
  return counted.reduce((sum, { n }) => sum + Number(n), 0);
}

/** When a code was used, as stored (`null` unused, `undefined` unknown). */
export const codeUsedAt = async (t: TestApp, code: string) => (await t.deps.stores.codes.find(hashSecret(code)))?.usedAt;

/** The grant a stored code was issued under. */
export const grantOfCode = async (t: TestApp, code: string) => (await t.deps.stores.codes.find(hashSecret(code)))!.grantId;
