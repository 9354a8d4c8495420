/**
 * RFC 7591 dynamic client registration at POST /api/oauth/register (INTERFACE section 13): the
 * answer, the site's redirect-URI rules, RFC 7591's error codes and no 500 for any body, the
 * per-address limit (in memory and in Redis), DYNAMIC_REGISTRATION, no owner (never on a member's
 * developer pages), the consent page's warning, the janitor's 30 days, and openid-client
 * registering and then running the code flow with PKCE. Addresses come from X-Forwarded-For
 * (TRUST_PROXY=1), a new one per registration unless a test counts them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { REGISTRATION_WINDOW_SECONDS, SELF_REGISTERED_GRACE_MS } from '../../src/core/oauth/dynamic-registration.js';
import { runJanitor } from '../../src/janitor.js';
import { addressesIn } from '../support/addresses.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { startAppsForSuite } from '../support/instances.js';
import { redisUrl, skipWithoutRedis } from '../support/redis.js';
import { Visitor } from '../site/visitor.js';
import {
  Browser, PASSWORD, type TestClient, authorizeQuery, codeExchangeFields, consentForm, newClient, newUser, obtainCode, pkcePair, redirectParams,
  signedInBrowser, tokenRequest,
} from './helpers.js';

const ENV = { TRUST_PROXY: '1' };
const DAY_MS = 86_400_000;

/** An address of the documentation range (RFC 5737) no other registration uses. */
const newAddress = addressesIn('203.0');

function register(t: TestApp, body: unknown, options: { address?: string; contentType?: string; raw?: string; origin?: string } = {}): Promise<Response> {
  return fetch(`${t.baseUrl}/api/oauth/register`, {
    method: 'POST',
    headers: {
      'content-type': options.contentType ?? 'application/json', 'x-forwarded-for': options.address ?? newAddress(),
      ...(options.origin === undefined ? {} : { origin: options.origin }),
    },
    body: options.raw ?? JSON.stringify(body),
  });
}

type Registered = Record<string, unknown> & { client_id: string; client_secret?: string; redirect_uris: string[] };

async function registered(t: TestApp, body: Record<string, unknown>, address?: string): Promise<Registered> {
  const response = await register(t, body, address === undefined ? {} : { address });
  assert.equal(response.status, 201, await response.clone().text());
  return (await response.json()) as Registered;
}

/** A registration's answer as a `TestClient` of the helpers, to drive the flow with. */
function asTestClient(answer: Registered): TestClient {
  return {
    client: { clientId: answer.client_id } as TestClient['client'],
    ...(answer.client_secret === undefined ? {} : { secret: answer.client_secret }),
    redirectUri: answer.redirect_uris[0]!,
  };
}

/** An RFC 7591 3.2.2 error: its status, `Cache-Control: no-store`, and exactly `error` and `error_description`; returns `error`. */
async function errorOf(response: Response, status = 400): Promise<string> {
  assert.equal(response.status, status, await response.clone().text());
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const body = (await response.json()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(typeof body.error_description, 'string');
  return body.error as string;
}

forEachDatabase('dynamic client registration (RFC 7591)', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: ENV }); });
  after(() => t.close());

  test('a registration answers 201 with client_id, client_id_issued_at, a secret that never expires and the metadata as registered, not cached', async () => {
    const response = await register(t, {
      redirect_uris: ['https://agent.example/callback'], client_name: 'Agent', client_uri: 'https://agent.example',
      post_logout_redirect_uris: ['https://agent.example/bye'], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
    });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const body = (await response.json()) as Registered;
    assert.match(body.client_id, /^[0-9a-f]{32}$/);
    assert.equal(body.client_id_issued_at, Math.floor(t.clock.now() / 1000));
    assert.match(body.client_secret!, /^svcs_/);
    assert.equal(body.client_secret_expires_at, 0);
    assert.deepEqual({ ...body, client_id: 'id', client_id_issued_at: 0, client_secret: 'secret' }, {
      client_id: 'id', client_id_issued_at: 0, client_secret: 'secret', client_secret_expires_at: 0,
      client_name: 'Agent', client_uri: 'https://agent.example',
      redirect_uris: ['https://agent.example/callback'], post_logout_redirect_uris: ['https://agent.example/bye'],
      token_endpoint_auth_method: 'client_secret_basic', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      scope: 'openid profile offline_access profile:read posts:read',
    });
    const audited = t.audit.find((e) => e.audit === 'client.registered' && e.clientId === body.client_id);
    assert.ok(audited?.audit === 'client.registered');
    assert.deepEqual({ via: audited.via, ownerId: audited.ownerId, type: audited.type }, { via: 'oauth', ownerId: null, type: 'confidential' });
  });

  test('the secret is stored only as its hash, and the app has no owner and is marked self-registered', async () => {
    const body = await registered(t, { redirect_uris: ['https://agent.example/callback'], client_name: 'Agent' });
    const stored = await t.deps.stores.clients.findById(body.client_id);
    assert.equal(stored?.secretHash, hashSecret(body.client_secret!));
    assert.equal(stored?.ownerId, null);
    assert.equal(stored?.selfRegistered, true);
    assert.equal(stored?.type, 'confidential');
  });

  test('token_endpoint_auth_method none registers a public client, with no secret', async () => {
    const body = await registered(t, { redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', client_name: 'CLI agent' });
    assert.equal(body.token_endpoint_auth_method, 'none');
    assert.equal('client_secret' in body, false);
    assert.equal('client_secret_expires_at' in body, false);
    assert.equal((await t.deps.stores.clients.findById(body.client_id))?.type, 'public');
  });

  test('client_secret_post registers a confidential client that authenticates with its secret in the form', async () => {
    const body = await registered(t, { redirect_uris: ['https://agent.example/callback'], token_endpoint_auth_method: 'client_secret_post' });
    assert.equal(body.token_endpoint_auth_method, 'client_secret_post');
    const { browser } = await signedInBrowser(t);
    const c = asTestClient(body);
    const pkce = pkcePair();
    const code = await obtainCode(browser, c, { pkce });
    const tokens = await tokenRequest(t, codeExchangeFields(c, code, pkce));
    assert.equal(tokens.status, 200, await tokens.clone().text());
  });

  test('metadata this service does not know is ignored and not echoed', async () => {
    const body = await registered(t, {
      redirect_uris: ['https://agent.example/callback'], client_name: 'Agent', logo_uri: 'https://agent.example/logo.png',
      contacts: ['ops@agent.example'], software_id: 'x', jwks_uri: 'https://agent.example/jwks', id_token_signed_response_alg: 'none', 'client_name#zh-CN': '代理',
    });
    for (const name of ['logo_uri', 'contacts', 'software_id', 'jwks_uri', 'id_token_signed_response_alg', 'client_name#zh-CN']) assert.equal(name in body, false, name);
    // A member named __proto__ is one more unknown member, not the prototype of the metadata.
    const polluted = await register(t, null, { raw: '{"redirect_uris":["https://agent.example/callback"],"__proto__":{"client_name":"Bank","scope":"admin"}}' });
    assert.equal(polluted.status, 201);
    assert.equal(((await polluted.json()) as Registered).client_name, 'agent.example');
  });

  test('without client_name, or with an empty one, the app is named by where it sends people back to', async () => {
    assert.equal((await registered(t, { redirect_uris: ['https://agent.example:8443/callback'] })).client_name, 'agent.example:8443');
    assert.equal((await registered(t, { redirect_uris: ['https://agent.example/callback'], client_name: ' ' })).client_name, 'agent.example');
    assert.equal((await registered(t, { redirect_uris: ['com.example.agent:/cb'], token_endpoint_auth_method: 'none' })).client_name, 'com.example.agent');
  });

  test('an app named by a host longer than a name keeps the host\'s end, the domain that owns it, and one whose host makes no name is "app"', async () => {
    const host = `${'a'.repeat(54)}.login.microsoftonline.com.evil.example`;
    const long = await registered(t, { redirect_uris: [`https://${host}/cb`], token_endpoint_auth_method: 'none' });
    assert.equal(long.client_name, `…${host.slice(-79)}`);
    assert.ok(long.client_name.endsWith('.evil.example'));
    for (const nameless of ['https://_._/cb', 'https://-.-/cb']) {
      assert.equal((await registered(t, { redirect_uris: [nameless], token_endpoint_auth_method: 'none' })).client_name, 'app', nameless);
    }
  });

  test('scope limits what the app may ask for to the known scopes it names, profile counting as profile:read; naming none known, or empty, registers every scope', async () => {
    const redirect = { redirect_uris: ['https://agent.example/callback'] };
    const body = await registered(t, { ...redirect, scope: 'openid profile mcp:tools' });
    assert.equal(body.scope, 'openid profile offline_access profile:read');
    assert.deepEqual((await t.deps.stores.clients.findById(body.client_id))?.allowedScopes, ['openid', 'profile:read']);
    assert.equal((await registered(t, { ...redirect, scope: 'posts:read' })).scope, 'offline_access posts:read');
    for (const scope of ['', 'mcp:tools', 'offline_access', '  ']) {
      assert.equal((await registered(t, { ...redirect, scope })).scope, 'openid profile offline_access profile:read posts:read', JSON.stringify(scope));
    }
    // Registered for posts:read alone, the app cannot ask for profile:read.
    const narrow = asTestClient(await registered(t, { ...redirect, scope: 'posts:read', token_endpoint_auth_method: 'none' }));
    const { browser } = await signedInBrowser(t);
    // Shown on the error page: the member has not authorized this unreviewed app (RFC 9700 4.11.2).
    const refused = await browser.fetch(`/oauth/authorize?${authorizeQuery(narrow, { pkce: pkcePair(), scope: 'profile:read' })}`);
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /scope/);
  });

  test('an app that registered itself gets its errors on this site\'s page, not at its redirect URI, until the member has authorized it (RFC 9700 4.11.2)', async () => {
    const phishing = asTestClient(await registered(t, { redirect_uris: ['https://evil.example/phish'], token_endpoint_auth_method: 'none' }));
    const pageNotRedirect = async (response: Response, what: string) => {
      assert.equal(response.status, 400, what);
      assert.equal(response.headers.get('location'), null, what);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/, what);
    };
    const visitor = new Browser(t);
    await pageNotRedirect(await visitor.fetch(`/oauth/authorize?${authorizeQuery(phishing, { pkce: pkcePair(), scope: 'bogus' })}`), 'an unknown scope, signed out');
    await pageNotRedirect(await visitor.fetch(`/oauth/authorize?${authorizeQuery(phishing, { pkce: pkcePair(), extra: { prompt: 'none' } })}`), 'prompt=none, signed out');
    const { browser } = await signedInBrowser(t);
    await pageNotRedirect(await browser.fetch(`/oauth/authorize?${authorizeQuery(phishing, { pkce: pkcePair(), scope: 'bogus' })}`), 'an unknown scope, signed in, never authorized');
    await pageNotRedirect(await browser.fetch(`/oauth/authorize?${authorizeQuery(phishing, { pkce: pkcePair(), extra: { prompt: 'none' } })}`), 'prompt=none, signed in, never authorized');
    // Once the member chose to authorize it, its errors go back to it as RFC 6749 4.1.2.1 says.
    await obtainCode(browser, phishing, { pkce: pkcePair() });
    const refused = redirectParams(await browser.fetch(`/oauth/authorize?${authorizeQuery(phishing, { pkce: pkcePair(), scope: 'bogus' })}`));
    assert.equal(refused.get('error'), 'invalid_scope');
    // An app someone answers for is unchanged: its errors go back to it, signed in or not.
    const site = await newClient(t);
    assert.equal(redirectParams(await visitor.fetch(`/oauth/authorize?${authorizeQuery(site, { pkce: pkcePair(), scope: 'bogus' })}`)).get('error'), 'invalid_scope');
  });

  test('redirect URIs follow the site\'s rules; a bad or missing one is invalid_redirect_uri and registers nothing', async () => {
    const before = (await t.deps.stores.clients.listAll()).length;
    const bad: unknown[] = [
      undefined, [], ['http://agent.example/callback'], ['https://agent.example/cb#fragment'], ['https://user:pw@agent.example/cb'],
      ['/relative'], ['javascript:alert(1)'], ['https://agent.example/ü'], [`https://agent.example/${'a'.repeat(2001)}`],
      Array.from({ length: 11 }, (_, i) => `https://agent.example/${i}`), 'https://agent.example/callback', [42], { 0: 'https://agent.example/cb' },
    ];
    for (const redirectUris of bad) {
      assert.equal(await errorOf(await register(t, { redirect_uris: redirectUris, client_name: 'Agent' })), 'invalid_redirect_uri', JSON.stringify(redirectUris)?.slice(0, 80));
    }
    assert.equal(await errorOf(await register(t, { redirect_uris: ['https://agent.example/cb'], post_logout_redirect_uris: ['http://agent.example/bye'] })), 'invalid_redirect_uri');
    // Wrong in a redirect URI and in another member at once: the redirect URI's code, both problems told.
    const both = await register(t, { redirect_uris: ['http://agent.example/cb'], client_name: 'x'.repeat(81) });
    assert.equal(both.status, 400);
    const told = (await both.json()) as { error: string; error_description: string };
    assert.equal(told.error, 'invalid_redirect_uri');
    assert.match(told.error_description, /client_name must be 1 to 80 characters/);
    assert.match(told.error_description, /redirect URI 'http:\/\/agent.example\/cb' must use https/);
    assert.equal((await t.deps.stores.clients.listAll()).length, before);
  });

  test('a redirect URI\'s port is written as a browser goes to it: port 0, an empty port or leading zeros is invalid_redirect_uri', async () => {
    for (const uri of ['http://127.0.0.1:0/callback', 'http://127.0.0.1:00080/callback', 'http://[::1]:08080/cb', 'https://agent.example:0443/cb', 'https://agent.example:/cb']) {
      const answer = await register(t, { redirect_uris: [uri], client_name: 'Agent' });
      assert.equal(answer.status, 400, uri);
      const told = (await answer.json()) as { error: string; error_description: string };
      assert.equal(told.error, 'invalid_redirect_uri', uri);
      assert.match(told.error_description, /port 0, an empty port or a port written with leading zeros/, uri);
    }
    assert.equal((await register(t, { redirect_uris: ['http://127.0.0.1:8080/callback', 'https://agent.example:8443/cb'], client_name: 'Agent' })).status, 201);
  });

  test('a registered address is an RFC 3986 URI whose host is written as a browser reads it: otherwise invalid_redirect_uri saying why, for redirect and post-logout URIs alike', async () => {
    const before = (await t.deps.stores.clients.listAll()).length;
    const refused: Array<[string, RegExp]> = [
      // A browser reads the backslash as /, and goes to evil.example; a person and RFC 3986 parsers read trusted.example.
      ['https://evil.example\\@trusted.example/cb', /holds a character no URI may hold/],
      ['https://agent.example/cb?next=<x>', /holds a character no URI may hold/],
      ['https://agent.example/%zz', /holds a character no URI may hold/],
      ['https:///cb', /has no host/],
      ['https:agent.example/cb', /has no host/],
      ['https://*.agent.example/cb', /not a domain name or an IP address/],
      ['https://agent.example./cb', /not a domain name or an IP address/],
      ['https://Agent.example/cb', /write it as 'agent\.example'/],
      ['https://agent%2eexample/cb', /write it as 'agent\.example'/],
      ['http://127.1/cb', /write it as '127\.0\.0\.1'/],
      ['http://[0:0:0:0:0:0:0:1]/cb', /write it as '\[::1\]'/],
    ];
    for (const [uri, why] of refused) {
      for (const field of ['redirect_uris', 'post_logout_redirect_uris']) {
        const body = { redirect_uris: ['https://agent.example/cb'], client_name: 'Agent', [field]: [uri] };
        const answer = await register(t, body);
        assert.equal(answer.status, 400, `${field} ${uri}`);
        const told = (await answer.json()) as { error: string; error_description: string };
        assert.equal(told.error, 'invalid_redirect_uri', `${field} ${uri}`);
        assert.match(told.error_description, why, `${field} ${uri}`);
      }
    }
    assert.equal((await t.deps.stores.clients.listAll()).length, before);
    const fine = ['https://agent.example/cb?x=%7B1%7D', 'https://agent.example:8443/cb', 'http://[::1]:8080/cb', 'com.example.agent:/cb'];
    assert.deepEqual((await registered(t, { redirect_uris: fine, client_name: 'Agent' })).redirect_uris, fine);
  });

  test('a registered address writes its scheme in lower case and not its scheme\'s default port, as a browser sends it, or exact matching never finds it: invalid_redirect_uri saying how to write it; an app stored with one still signs in with it as written', async () => {
    const before = (await t.deps.stores.clients.listAll()).length;
    const refused: Array<[string, RegExp, string]> = [
      ['https://agent.example:443/cb', /writes the default port 443 of https/, 'https://agent.example/cb'],
      ['http://localhost:80/cb?x=1', /writes the default port 80 of http/, 'http://localhost/cb?x=1'],
      ['https://[::1]:443', /writes the default port 443 of https/, 'https://[::1]'],
      ['HTTPS://agent.example/cb', /writes its scheme in capital letters/, 'https://agent.example/cb'],
      ['Http://localhost:3000/cb', /writes its scheme in capital letters/, 'http://localhost:3000/cb'],
      ['COM.Example.Agent:/cb', /writes its scheme in capital letters/, 'com.example.agent:/cb'],
    ];
    for (const [uri, why, written] of refused) {
      for (const field of ['redirect_uris', 'post_logout_redirect_uris']) {
        const answer = await register(t, { redirect_uris: ['https://agent.example/cb'], client_name: 'Agent', [field]: [uri] });
        assert.equal(answer.status, 400, `${field} ${uri}`);
        const told = (await answer.json()) as { error: string; error_description: string };
        assert.equal(told.error, 'invalid_redirect_uri', `${field} ${uri}`);
        assert.match(told.error_description, why, `${field} ${uri}`);
        assert.ok(told.error_description.endsWith(`: write it as '${written}'.`), told.error_description);
      }
    }
    assert.equal((await t.deps.stores.clients.listAll()).length, before);
    // Saved before the rule, an address matches as written, exactly as it did.
    const stored = await t.deps.stores.clients.create({
      clientId: `stored-default-port-${Date.now()}`, name: 'Stored', description: '', homepageUrl: '', ownerId: null, type: 'public',
      redirectUris: ['https://agent.example:443/cb', 'HTTPS://agent.example/cb'], allowedScopes: ['profile:read', 'posts:read'], secretHash: null, idTokenAlg: 'RS256',
    }, t.clock.now());
    const { browser } = await signedInBrowser(t);
    for (const redirectUri of stored.redirectUris) {
      assert.ok(await obtainCode(browser, { client: stored, redirectUri }, { redirectUri, pkce: pkcePair() }), redirectUri);
    }
    const other = await browser.fetch(`/oauth/authorize?${authorizeQuery({ client: stored, redirectUri: 'https://agent.example/cb' }, { pkce: pkcePair() })}`);
    assert.equal(other.status, 400, 'the address a browser would send is another string, as before');
  });

  test('a refusal that says how to write an address says one registration accepts: the form a browser sends is asked last, after the host, path, query and scheme rules', async () => {
    const refused: Array<[string, RegExp]> = [
      ['HTTPS://agent.example:443/cb', /writes the default port 443 of https, .*: write it as 'https:\/\/agent\.example\/cb'\.$/],
      ['HTTP://localhost:80/cb', /writes the default port 80 of http, .*: write it as 'http:\/\/localhost\/cb'\.$/],
      // Any port matches a loopback IP URI (RFC 8252 7.3): its default port is no second spelling, its scheme's case is.
      ['HTTP://127.0.0.1:80/cb', /writes its scheme in capital letters, .*: write it as 'http:\/\/127\.0\.0\.1:80\/cb'\.$/],
      ['HTTPS://Agent.example/cb', /writes its host so that a browser reads another name: write it as 'agent\.example'\.$/],
      ['https://agent.example:443/a/../cb', /has a \. or \.\. segment in its path/],
      ['HTTPS://agent.example/cb?state=1', /has a query parameter state/],
      ['HTTP://agent.example/cb', /must use https/],
    ];
    for (const [uri, why] of refused) {
      const answer = await register(t, { redirect_uris: [uri], client_name: 'Agent' });
      assert.equal(answer.status, 400, uri);
      const { error_description: told } = (await answer.json()) as { error_description: string };
      assert.match(told, why, uri);
      const written = /write it as '([a-z][\w+.-]*:[^'\s]+)'\.$/.exec(told)?.[1];
      if (written !== undefined) assert.deepEqual((await registered(t, { redirect_uris: [written], client_name: 'Agent' })).redirect_uris, [written], told);
    }
  });

  test('a registered redirect URI holds no query parameter the authorization response adds (RFC 6749 4.1.2, 4.1.2.1; RFC 9207), a post-logout one no state (RP-Initiated Logout 3)', async () => {
    for (const name of ['code', 'state', 'error', 'error_description', 'error_uri', 'iss']) {
      const answer = await register(t, { redirect_uris: [`https://agent.example/cb?app=1&${name}=x`], client_name: 'Agent' });
      assert.equal(answer.status, 400, name);
      const told = (await answer.json()) as { error: string; error_description: string };
      assert.equal(told.error, 'invalid_redirect_uri', name);
      assert.match(told.error_description, new RegExp(`query parameter ${name}, which this service adds`), name);
    }
    // Written percent-encoded, it is still the name an app reads.
    assert.equal(await errorOf(await register(t, { redirect_uris: ['https://agent.example/cb?st%61te=x'] })), 'invalid_redirect_uri');
    assert.equal(await errorOf(await register(t, { redirect_uris: ['https://agent.example/cb'], post_logout_redirect_uris: ['https://agent.example/bye?state=x'] })), 'invalid_redirect_uri');
    const own = await registered(t, { redirect_uris: ['https://agent.example/cb?codec=1&states=2'], post_logout_redirect_uris: ['https://agent.example/bye?code=1'] });
    assert.deepEqual([own.redirect_uris, own.post_logout_redirect_uris], [['https://agent.example/cb?codec=1&states=2'], ['https://agent.example/bye?code=1']]);
  });

  test('a registered redirect URI holds no parameter of the answer under a name an app\'s framework reads as one: in any letter case (ASP.NET Core), after a ; (Python before 3.9.2, Go before 1.17), with . or a space for _ or [] after it (PHP)', async () => {
    const hidden: Array<[string, string]> = [
      ['https://agent.example/cb?CODE=x', 'code'], ['https://agent.example/cb?Iss=https://evil.example', 'iss'],
      ['https://agent.example/cb?app=1;state=evil', 'state'], ['https://agent.example/cb?error.uri=https://evil.example', 'error_uri'],
      ['https://agent.example/cb?error+description=x', 'error_description'], ['https://agent.example/cb?code%5B%5D=x', 'code'],
    ];
    for (const [uri, name] of hidden) {
      const answer = await register(t, { redirect_uris: [uri], client_name: 'Agent' });
      assert.equal(answer.status, 400, uri);
      const told = (await answer.json()) as { error: string; error_description: string };
      assert.equal(told.error, 'invalid_redirect_uri', uri);
      assert.match(told.error_description, new RegExp(`query parameter ${name}, which this service adds`), uri);
    }
    const own = ['https://agent.example/cb?q=a;b', 'https://agent.example/cb?Codec=1&error.log=2'];
    assert.deepEqual((await registered(t, { redirect_uris: own, client_name: 'Agent' })).redirect_uris, own);
  });

  /** Each name is refused as invalid_client_metadata saying `why`; each of `accepted` is registered and stored as sent. */
  async function namesJudged(refused: readonly string[], why: RegExp, accepted: readonly string[]): Promise<void> {
    for (const name of refused) {
      const answer = await register(t, { redirect_uris: ['https://agent.example/cb'], client_name: name });
      assert.equal(answer.status, 400, JSON.stringify(name));
      const told = (await answer.json()) as { error: string; error_description: string };
      assert.equal(told.error, 'invalid_client_metadata', JSON.stringify(name));
      assert.match(told.error_description, why, JSON.stringify(name));
    }
    for (const name of accepted) {
      const answer = await registered(t, { redirect_uris: ['https://agent.example/cb'], client_name: name });
      assert.equal(answer.client_name, name);
      assert.equal((await t.deps.stores.clients.findById(answer.client_id))?.name, name, 'stored as sent');
    }
  }

  test('an app\'s name is well-formed Unicode: a lone surrogate, which JSON can carry and a page would show as U+FFFD, is refused', async () => {
    await namesJudged(['a\ud800b', 'Agent\udc00'], /well-formed Unicode/, ['Agent \u{1f916}']);
  });

  test('an app\'s name has at most 4 combining marks on one character, so that none stack over the consent page\'s buttons', async () => {
    await namesJudged(['Z' + '\u0301'.repeat(75), 'Z' + '\u0301'.repeat(5)], /at most 4 combining marks/, ['Z' + '\u0301'.repeat(4), 'Ti\u1ebfng Vi\u1ec7t']);
  });

  test('an app\'s name may hold emoji joined by ZWJ or with VS16; a ZWJ, ZWNJ, variation selector or direction control elsewhere is still refused', async () => {
    await namesJudged(['Pay\u200dpal', 'Agent \u200c\u{1f468}', 'Agent\u202e', 'Agent\ufe0f', 'Agent \u{1f468}\u200d'], /invisible characters/,
      ['Family \u{1f468}\u200d\u{1f469}\u200d\u{1f467}', 'Love \u2764\ufe0f', 'Dev \u{1f469}\u{1f3fd}\u200d\u{1f4bb}', 'Key 1\ufe0f\u20e3']);
  });

  test('metadata this service cannot honour is invalid_client_metadata (RFC 7591 3.2.2), consistency of grant and response types included (2.1)', async () => {
    const redirect = { redirect_uris: ['https://agent.example/callback'] };
    const bad: Array<Record<string, unknown>> = [
      { token_endpoint_auth_method: 'private_key_jwt' }, { token_endpoint_auth_method: ['none'] },
      { response_types: ['token'] }, { response_types: ['code', 'id_token'] }, { response_types: [] }, { response_types: 'code' },
      { grant_types: ['client_credentials'] }, { grant_types: ['implicit', 'authorization_code'] },
      { grant_types: ['refresh_token'] }, { grant_types: [] },
      { client_name: ['Agent'] }, { client_name: 'x'.repeat(81) }, { client_name: 'Agent\u202e' },
      { client_uri: 'ftp://agent.example' }, { client_uri: 12 }, { scope: ['openid'] }, { scope: 7 },
    ];
    for (const metadata of bad) {
      assert.equal(await errorOf(await register(t, { ...redirect, ...metadata })), 'invalid_client_metadata', JSON.stringify(metadata).slice(0, 80));
    }
  });

  test('a body that is no JSON object is invalid_client_metadata, never a 500: another type, broken JSON, an array, null, no body, too large', async () => {
    const body = { redirect_uris: ['https://agent.example/callback'] };
    assert.equal(await errorOf(await register(t, null, { contentType: 'application/x-www-form-urlencoded', raw: 'redirect_uris=https%3A%2F%2Fagent.example%2Fcallback' })), 'invalid_client_metadata');
    assert.equal(await errorOf(await register(t, null, { contentType: 'text/plain', raw: JSON.stringify(body) })), 'invalid_client_metadata');
    assert.equal(await errorOf(await register(t, null, { raw: '{"redirect_uris": [' })), 'invalid_client_metadata');
    assert.equal(await errorOf(await register(t, null, { raw: '' })), 'invalid_client_metadata');
    assert.equal(await errorOf(await register(t, [body])), 'invalid_client_metadata');
    assert.equal(await errorOf(await register(t, null)), 'invalid_client_metadata');
    assert.equal(await errorOf(await register(t, '"a string"')), 'invalid_client_metadata');
    const noBody = await fetch(`${t.baseUrl}/api/oauth/register`, { method: 'POST', headers: { 'x-forwarded-for': newAddress() } });
    assert.equal(await errorOf(noBody), 'invalid_client_metadata');
    assert.equal(await errorOf(await register(t, { ...body, client_name: 'x'.repeat(100_000) }), 413), 'invalid_client_metadata');
  });

  test('the endpoint answers CORS for any origin, and its preflight', async () => {
    const preflight = await fetch(`${t.baseUrl}/api/oauth/register`, {
      method: 'OPTIONS', headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Content-Type/);
    const answer = await register(t, { redirect_uris: ['https://agent.example/callback'] });
    assert.equal(answer.status, 201);
    assert.equal(answer.headers.get('access-control-allow-origin'), '*');
    assert.equal(answer.headers.get('access-control-allow-credentials'), null);
  });

  test('discovery and the developer docs name the registration endpoint', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const metadata = (await (await fetch(`${t.baseUrl}${path}`)).json()) as Record<string, unknown>;
      assert.equal(metadata.registration_endpoint, `${t.baseUrl}/api/oauth/register`);
    }
    assert.match(await (await fetch(`${t.baseUrl}/docs`)).text(), new RegExp(`curl -s ${t.baseUrl}/api/oauth/register`));
  });

  test('REGISTRATIONS_PER_HOUR_PER_ADDRESS (20 by default) registrations per address an hour, then 429 with Retry-After; bad metadata does not count; the next hour registers again', async () => {
    const limit = t.deps.settings.registrationsPerHourPerAddress;
    assert.equal(limit, 20);
    const address = newAddress();
    const other = newAddress();
    const body = { redirect_uris: ['https://agent.example/callback'] };
    assert.equal(await errorOf(await register(t, { redirect_uris: ['http://agent.example/'] }, { address })), 'invalid_redirect_uri');
    assert.equal(await errorOf(await register(t, { ...body, client_uri: 'ftp://agent.example' }, { address })), 'invalid_client_metadata');
    for (let i = 0; i < limit; i += 1) await registered(t, body, address);
    const refused = await register(t, body, { address });
    assert.equal(await errorOf(refused.clone(), 429), 'rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= REGISTRATION_WINDOW_SECONDS, String(retryAfter));
    assert.equal(refused.headers.get('ratelimit-policy'), `"register-address";q=${limit};w=${REGISTRATION_WINDOW_SECONDS}`);
    await registered(t, body, other);
    t.clock.advance(retryAfter * 1000);
    await registered(t, body, address);
  });

  test('a registration refused for its address\'s hour names the way that needs none: a client ID metadata document, with the docs\' address', async () => {
    const address = newAddress();
    const body = { redirect_uris: ['https://agent.example/callback'] };
    for (let i = 0; i < t.deps.settings.registrationsPerHourPerAddress; i += 1) await registered(t, body, address);
    const refused = await register(t, body, { address });
    assert.equal(refused.status, 429);
    const { error_description: description } = (await refused.json()) as { error_description: string };
    assert.match(description, /client ID metadata document instead, which needs no registration/);
    assert.ok(description.includes(`${t.baseUrl}/docs#client-id-metadata-documents`), description);
    assert.match((await (await fetch(`${t.baseUrl}/docs`)).text()), /id="client-id-metadata-documents"/, 'where it points');
  });

  test('registrations that browsers send use up only the browsers\' share of an address: a page that has its visitors\' browsers register cannot refuse the agents and tools behind their address', async () => {
    const limit = t.deps.settings.registrationsPerHourPerAddress;
    const address = newAddress();
    const body = { redirect_uris: ['https://agent.example/callback'] };
    for (let i = 0; i < limit; i += 1) assert.equal((await register(t, body, { address, origin: 'https://evil.example' })).status, 201);
    assert.equal(await errorOf(await register(t, body, { address, origin: 'https://evil.example' }), 429), 'rate_limited');
    await registered(t, body, address);
  });

  test('a self-registered app never appears on a member\'s developer pages, and no member can manage it', async () => {
    const body = await registered(t, { redirect_uris: ['https://agent.example/callback'], client_name: 'Unowned Agent' });
    const user = await newUser(t);
    const visitor = new Visitor(t.baseUrl);
    await visitor.signIn(user.username, PASSWORD);
    const list = await visitor.get('/settings/developers');
    assert.equal(list.status, 200);
    assert.doesNotMatch(list.text, new RegExp(body.client_id));
    assert.doesNotMatch(list.text, /Unowned Agent/);
    const base = `/settings/developers/${body.client_id}`;
    assert.equal((await visitor.get(base)).status, 404);
    assert.equal((await visitor.post(`${base}/rotate-secret`, { confirm: 'yes' })).status, 404);
    assert.equal((await visitor.post(`${base}/redirect-uris`, { redirect_uris: 'https://evil.example/cb' })).status, 404);
    assert.equal((await visitor.post(`${base}/deactivate`, { confirm: 'yes' })).status, 404);
    const stored = await t.deps.stores.clients.findById(body.client_id);
    assert.deepEqual([stored?.status, stored?.redirectUris, stored?.secretHash], ['active', ['https://agent.example/callback'], hashSecret(body.client_secret!)]);
  });

  test('the consent page says the app registered itself and the site has not reviewed it, in every language', async () => {
    const body = await registered(t, { redirect_uris: ['https://agent.example/callback'], client_name: 'Agent Smith', client_uri: 'https://agent.example' });
    const site = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const words: Record<string, RegExp> = {
      en: /<p class="alert"><span class="app-name latin-start latin-end">Agent Smith<\/span> registered itself with this site, which has not reviewed it\./,
      'zh-CN': /<p class="alert"><span class="app-name latin-start latin-end">Agent Smith<\/span>是自行注册的应用，本站未对其进行审核。/,
      'zh-TW': /<p class="alert"><span class="app-name latin-start latin-end">Agent Smith<\/span>是自行註冊的應用程式，本站未對其進行審核。/,
    };
    for (const [locale, said] of Object.entries(words)) {
      const page = await browser.fetch(`/oauth/authorize?${authorizeQuery(asTestClient(body), { pkce, extra: { ui_locales: locale } })}`);
      assert.equal(page.status, 200);
      const text = await page.text();
      assert.match(text, said, locale);
      assert.doesNotMatch(text, /made by the site operators|运营团队|營運團隊/, locale);
    }
    // An app the operators registered says so, with no such warning.
    const operators = await (await browser.fetch(`/oauth/authorize?${authorizeQuery(site, { pkce })}`)).text();
    assert.match(operators, /made by the site operators/);
    assert.doesNotMatch(operators, /registered itself/);
  });

  test('the janitor deletes a self-registered app with no grant 30 days after registration, and keeps one with a grant and every app registered otherwise', async () => {
    const clock = t.clock;
    const idle = await registered(t, { redirect_uris: ['https://idle.example/callback'] });
    const used = await registered(t, { redirect_uris: ['https://used.example/callback'], token_endpoint_auth_method: 'none' });
    const site = await newClient(t);
    const { browser } = await signedInBrowser(t);
    await obtainCode(browser, asTestClient(used), { pkce: pkcePair() });
    clock.advance(SELF_REGISTERED_GRACE_MS - 1000);
    await runJanitor(t.deps);
    assert.ok(await t.deps.stores.clients.findById(idle.client_id), 'kept before 30 days');
    clock.advance(2000);
    const deleted = await runJanitor(t.deps);
    assert.ok((deleted.clients ?? 0) >= 1);
    assert.equal(await t.deps.stores.clients.findById(idle.client_id), undefined);
    assert.ok(await t.deps.stores.clients.findById(used.client_id), 'an app with a grant stays');
    assert.ok(await t.deps.stores.clients.findById(site.client.clientId), 'an app registered on the site or by the operator stays');
    // A registration a day old is no candidate yet.
    const fresh = await registered(t, { redirect_uris: ['https://fresh.example/callback'] });
    clock.advance(DAY_MS);
    await runJanitor(t.deps);
    assert.ok(await t.deps.stores.clients.findById(fresh.client_id));
  });

  test('the janitor keeps a self-registered app staff verified though it got no grant in 30 days: someone answers for it now', async () => {
    const reviewed = await registered(t, { redirect_uris: ['https://reviewed.example/callback'], client_name: 'Reviewed Agent', token_endpoint_auth_method: 'none' });
    const idle = await registered(t, { redirect_uris: ['https://idle-again.example/callback'] });
    const { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } = (await t.deps.stores.clients.findById(reviewed.client_id))!;
    assert.ok(await t.deps.stores.clients.setVerified(reviewed.client_id, { verified: true, reviewed: { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } }, t.clock.now()));
    t.clock.advance(SELF_REGISTERED_GRACE_MS + 1000);
    await runJanitor(t.deps);
    assert.equal(await t.deps.stores.clients.findById(idle.client_id), undefined, 'an unverified one goes');
    const kept = await t.deps.stores.clients.findById(reviewed.client_id);
    assert.ok(kept, 'the verified one stays');
    assert.notEqual(kept.verifiedAt, null, 'verified');
    const { browser } = await signedInBrowser(t);
    const page = await browser.fetch(`/oauth/authorize?${authorizeQuery(asTestClient(reviewed), { pkce: pkcePair() })}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Verified by Community/);
  });

  test('openid-client registers by discovery, then runs the code flow with PKCE, refreshes and revokes with the registered client', async () => {
    for (const [method, auth] of [['none', oidc.None()], ['client_secret_basic', undefined]] as const) {
      const config = await oidc.dynamicClientRegistration(new URL(t.baseUrl), {
        redirect_uris: ['http://127.0.0.1:9/callback'], client_name: `openid-client ${method}`, token_endpoint_auth_method: method,
      }, auth, { execute: [oidc.allowInsecureRequests] });
      const metadata = config.clientMetadata();
      assert.equal(metadata.token_endpoint_auth_method, method);
      const { browser, user } = await signedInBrowser(t);
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: 'http://127.0.0.1:9/callback', scope: 'openid profile:read',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const consent = await browser.fetch(url.href);
      assert.equal(consent.status, 200);
      assert.match(await consent.clone().text(), /registered itself/);
      const callback = redirectParams(await browser.postForm('/oauth/authorize', [...consentForm(await consent.text()), ['decision', 'approve']]));
      const tokens = await oidc.authorizationCodeGrant(config, new URL(`http://127.0.0.1:9/callback?${callback}`), { pkceCodeVerifier: verifier });
      assert.equal(tokens.claims()?.sub, String(user.id));
      assert.equal(tokens.scope, 'openid profile:read');
      const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(me.status, 200);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      await oidc.tokenRevocation(config, refreshed.refresh_token!);
      assert.equal((await oidc.tokenIntrospection(config, refreshed.access_token)).active, false);
    }
  });
});

forEachDatabase('dynamic client registration switched off', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: { ...ENV, DYNAMIC_REGISTRATION: 'off' } }); });
  after(() => t.close());

  test('DYNAMIC_REGISTRATION=off: the endpoint answers 404, and discovery and the developer docs leave it out', async () => {
    assert.equal(await errorOf(await register(t, { redirect_uris: ['https://agent.example/callback'] }), 404), 'not_found');
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const metadata = (await (await fetch(`${t.baseUrl}${path}`)).json()) as Record<string, unknown>;
      assert.equal('registration_endpoint' in metadata, false);
    }
    const docs = await fetch(`${t.baseUrl}/docs`);
    assert.equal(docs.status, 200);
    assert.doesNotMatch(await docs.text(), /api\/oauth\/register/);
  });
});

describe('the registration limit in Redis', { skip: skipWithoutRedis }, () => {
  forEachDatabase('shared by instances', (database) => {
    /** A limit of the operator's, not the default: the setting is what both instances count against. */
    const LIMIT = 7;
    let apps: TestApp[];
    startAppsForSuite(database, 2, { redisUrl: redisUrl!, env: { ...ENV, REGISTRATIONS_PER_HOUR_PER_ADDRESS: String(LIMIT) } }, (started) => { apps = started; });

    test(`two instances sharing one Redis count one address's registrations together: REGISTRATIONS_PER_HOUR_PER_ADDRESS=${LIMIT}, then 429 with Retry-After`, async () => {
      const address = newAddress();
      const body = { redirect_uris: ['https://agent.example/callback'] };
      for (let i = 0; i < LIMIT; i += 1) await registered(apps[i % 2]!, body, address);
      for (const app of apps) {
        const refused = await register(app, body, { address });
        assert.equal(await errorOf(refused.clone(), 429), 'rate_limited');
        assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      }
    });
  });
});
