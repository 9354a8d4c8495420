/**
 * Client ID Metadata Documents (INTERFACE section 13, draft-ietf-oauth-client-id-metadata-document):
 * an app whose client_id is the URL of its own document, served here by a real HTTP server on
 * 127.0.0.1 (reachable because CLIENT_METADATA_ALLOW_PRIVATE is on by default for a loopback
 * BASE_URL, as in development). Each rule over real HTTP on both databases.
 */
import assert from 'node:assert/strict';
import { type Server, type Socket, createServer as createTcpServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import {
  DOCUMENT_CACHE_ENTRIES, DOCUMENT_CLIENT_GRACE_MS, DOCUMENT_CLIENT_REFRESH_MS, DOCUMENT_FETCHES_HELD, DOCUMENT_FETCHES_HELD_PER_ADDRESS, DOCUMENT_FETCHES_IN_FLIGHT,
  DOCUMENT_FETCHES_PER_HOST, DOCUMENT_FETCH_TIMEOUT_MS,
} from '../../src/core/oauth/client-metadata.js';
import { runJanitor } from '../../src/janitor.js';
import { addressesIn } from '../support/addresses.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Answer, DocumentServer } from '../support/document-server.js';
import { until } from '../support/eventually.js';
import { type Browser, consentForm, hiddenFields, pkcePair, signedInBrowser, startOAuthApp } from './helpers.js';

/** Requests carry their address in X-Forwarded-For, a new one each unless a test names it: the share of one address is a test of its own. */
const ADDRESSED = { TRUST_PROXY: '1' };
const newAddress = addressesIn('100.64');

let documents: DocumentServer;
before(async () => { documents = await DocumentServer.start(); });
after(() => documents.close());

let paths = 0;
/** A path no other test uses, so no cache entry is shared. */
function freshPath(name: string): string {
  paths += 1;
  return `/${name}-${paths}-${process.hrtime.bigint()}.json`;
}

/**
 * A TCP server on one port of each of `addresses` that takes connections and never says a word:
 * a fetch from it holds its turn to the fetch limit (a refused connection gives it back at once).
 * An address this machine lacks (::1 without IPv6) is left out.
 */
async function silentServer(addresses: readonly string[]): Promise<{ port: number; close: () => void }> {
  const sockets = new Set<Socket>();
  const servers: Server[] = [];
  let port = 0;
  for (const address of addresses) {
    const server = createTcpServer((socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)); });
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false)).listen(port, address, () => resolve(true));
    });
    if (!listening) continue;
    servers.push(server);
    port = (server.address() as { port: number }).port;
  }
  return {
    port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      for (const server of servers) server.close();
    },
  };
}

/** A port of 127.0.0.1 nothing listens on: a connection to it is refused at once. */
async function closedPort(): Promise<number> {
  const closed = createTcpServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
  const port = (closed.address() as { port: number }).port;
  await new Promise((resolve) => closed.close(resolve));
  return port;
}

/** An authorization request for `clientId` as a browser sends it. */
function authorizeUrl(t: TestApp, clientId: string, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1/callback', scope: 'profile:read',
    code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ...extra,
  });
  return `${t.baseUrl}/oauth/authorize?${query}`;
}

/** The error page's answer: status 400, never a redirect, and its text. */
async function refusedPage(t: TestApp, clientId: string, extra: Record<string, string> = {}, from = newAddress()): Promise<string> {
  const response = await fetch(authorizeUrl(t, clientId, extra), { redirect: 'manual', headers: { 'x-forwarded-for': from } });
  assert.equal(response.status, 400, 'the error page');
  assert.equal(response.headers.get('location'), null, 'no redirect');
  assert.match(response.headers.get('content-type') ?? '', /text\/html/);
  return response.text();
}

/**
 * The authorization endpoint's answer when a document may not be fetched now: a page, 503 with
 * Retry-After at the fetch limit, no redirect.
 */
async function busyPage(t: TestApp, clientId: string, from = newAddress()): Promise<string> {
  const response = await fetch(authorizeUrl(t, clientId), { redirect: 'manual', headers: { 'x-forwarded-for': from } });
  assert.equal(response.status, 503, 'the busy page');
  assert.equal(response.headers.get('retry-after'), '5');
  assert.equal(response.headers.get('location'), null, 'no redirect');
  assert.match(response.headers.get('content-type') ?? '', /text\/html/);
  return response.text();
}

/** An authorization request the checks accept: it goes on to sign-in. */
async function accepted(t: TestApp, clientId: string, from = newAddress()): Promise<void> {
  const response = await fetch(authorizeUrl(t, clientId), { redirect: 'manual', headers: { 'x-forwarded-for': from } });
  assert.ok(response.status === 302 || response.status === 303, `accepted, then sent to sign in (got ${response.status}: ${response.status === 400 ? await response.text() : ''})`);
  assert.match(response.headers.get('location') ?? '', /\/login/);
}

/**
 * Tells whether any of `requests` was answered yet: a request answered while those are still
 * unanswered did not wait for them.
 */
function answeredYet(requests: ReadonlyArray<Promise<unknown>>): () => boolean {
  let answered = false;
  for (const request of requests) void request.then(() => { answered = true; }, () => { answered = true; });
  return () => answered;
}

/** A document id on the document server whose answer never comes: its fetch holds a turn to the fetch limit. */
function hangingDocument(name: string): string {
  const id = documents.url(freshPath(name));
  documents.answers.set(new URL(id).pathname, { delayMs: 60_000 });
  return id;
}

/** A code exchange for `clientId` at the token endpoint, from `from`, as a program sends it unless `headers` add `Origin`. */
function codeExchange(t: TestApp, clientId: string, from: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.baseUrl}/api/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from, ...headers },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: 'none', redirect_uri: 'http://127.0.0.1/callback', code_verifier: 'v'.repeat(43), client_id: clientId }),
  });
}

forEachDatabase('Client ID metadata documents', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database, { env: ADDRESSED }); });
  after(() => t.close());

  /** The member's part: open the authorization URL, approve, and hand back where the browser lands. */
  async function approve(browser: Browser, url: URL): Promise<URL> {
    const consent = await browser.fetch(url.href);
    assert.equal(consent.status, 200, await consent.clone().text());
    const answer = await browser.postForm('/oauth/authorize', [...consentForm(await consent.text()), ['decision', 'approve']]);
    assert.equal(answer.status, 302);
    return new URL(answer.headers.get('location')!);
  }

  test('discovery says client_id_metadata_document_supported', async () => {
    const metadata = await (await fetch(`${t.baseUrl}/.well-known/oauth-authorization-server`)).json() as Record<string, unknown>;
    assert.equal(metadata.client_id_metadata_document_supported, true);
  });

  test('/docs tells an app, an MCP agent among them, how to be named by its own document: the example names its own URL as client_id and is a public client', async () => {
    const page = await (await fetch(`${t.baseUrl}/docs`)).text();
    const part = /<p id="client-id-metadata-documents">[^]*?<p>[^]*?<\/p>/.exec(page)?.[0] ?? '';
    assert.match(part, /clientMetadataUrl/, 'the MCP SDK\'s setting');
    const example = /<pre><code>(\{[^<]*\})<\/code><\/pre>/.exec(part)?.[1];
    assert.ok(example, 'an example document');
    const document = JSON.parse(example.replaceAll('&quot;', '"').replaceAll('&amp;', '&')) as Record<string, unknown>;
    assert.equal(document.client_id, 'https://agent.example/oauth/client.json');
    assert.equal(document.token_endpoint_auth_method, 'none');
    assert.ok(Array.isArray(document.redirect_uris));
  });

  test('a document names a public app: oauth4webapi runs the code flow with PKCE, refreshes and revokes; the member\'s apps page names it by client_name and host', async () => {
    const clientId = documents.document(freshPath('agent'), { client_uri: 'https://agent.example' });
    const issuer = new URL(t.baseUrl);
    const options = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
    const client: oauth.Client = { client_id: clientId };
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    for (const [name, value] of Object.entries({
      client_id: clientId, redirect_uri: 'http://127.0.0.1/callback', response_type: 'code', scope: 'profile:read',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    })) url.searchParams.set(name, value);
    const { browser } = await signedInBrowser(t);
    const params = oauth.validateAuthResponse(as, client, await approve(browser, url), oauth.expectNoState);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, 'http://127.0.0.1/callback', verifier, options));
    assert.equal(tokens.token_type, 'bearer');
    const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(me.status, 200);
    const refreshed = await oauth.processRefreshTokenResponse(as, client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, options));
    assert.ok(refreshed.access_token);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), refreshed.access_token, options));
    const afterRevocation = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    assert.equal(afterRevocation.status, 401);
    // Without PKCE a public client is refused, back at its redirect URI (INTERFACE section 3).
    const noPkce = new URL(url);
    noPkce.searchParams.delete('code_challenge');
    noPkce.searchParams.delete('code_challenge_method');
    noPkce.searchParams.set('state', 'xyz');
    const refused = new URL((await browser.fetch(noPkce.href)).headers.get('location')!);
    assert.equal(refused.searchParams.get('error'), 'invalid_request');
    const apps = await (await browser.fetch('/settings/applications')).text();
    assert.match(apps, /Agent Smith/);
    assert.ok(apps.includes(new URL(clientId).host), 'the document\'s host');
  });

  test('the consent page names the document\'s host first, says no one reviewed the app, and warns when the answer goes to this device', async () => {
    const local = documents.document(freshPath('local'));
    const { browser } = await signedInBrowser(t);
    const page = await (await browser.fetch(authorizeUrl(t, local))).text();
    const host = new URL(local).host;
    const main = page.slice(page.indexOf('<main'));
    assert.ok(main.indexOf(host) >= 0 && main.indexOf(host) < main.indexOf('<h1'), 'the host before the heading');
    assert.match(page, /has not reviewed it/);
    assert.match(page, /class="alert" role="alert">[^<]*127\.0\.0\.1[^<]*your own device or local network/);
    assert.doesNotMatch(page, /made by the site operators/);
    const web = documents.document(freshPath('web'), { redirect_uris: ['https://agent.example/callback'] });
    const webPage = await (await browser.fetch(authorizeUrl(t, web, { redirect_uri: 'https://agent.example/callback' }))).text();
    assert.match(webPage, /has not reviewed it/);
    assert.doesNotMatch(webPage, /your own device or local network/);
    // An answer sent back to the document's own host names it once (attack88: "…, not to 127.0.0.1:4887" of 127.0.0.1:4887).
    const sameHost = documents.document(freshPath('same-host'), { redirect_uris: [`${documents.origin}/callback`] });
    const sameHostPage = await (await browser.fetch(authorizeUrl(t, sameHost, { redirect_uri: `${documents.origin}/callback` }))).text();
    assert.match(sameHostPage, /class="alert" role="alert">[^<]*your own device or local network\. Allow only/);
    assert.doesNotMatch(sameHostPage, /local network, not to/);
  });

  test('a verified document\'s app whose document names another name or addresses is not verified from the first request that reads it: no "Verified by", its errors on this site\'s page (attack88)', async () => {
    const path = freshPath('verified');
    const clientId = documents.document(path, { client_name: 'Good Agent' });
    await push(clientId);
    const row = (await t.deps.stores.clients.findById(clientId))!;
    const { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } = row;
    await t.deps.stores.clients.setVerified(clientId, { verified: true, reviewed: { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } }, t.clock.now());
    const { browser } = await signedInBrowser(t);
    const verified = await (await browser.fetch(authorizeUrl(t, clientId))).text();
    assert.match(verified, /Verified by Community/);
    assert.doesNotMatch(verified, /has not reviewed it/, 'never "not reviewed" beside "Verified by"');
    const answered = await fetch(authorizeUrl(t, clientId, { scope: 'bogus' }), { redirect: 'manual', headers: { 'x-forwarded-for': newAddress() } });
    assert.equal(answered.status, 302, 'a verified app\'s errors go back to it');
    // The document names another app and another address; the kept copy expires, and nothing has written the row since.
    documents.document(path, { client_name: 'Good Agent Deluxe', redirect_uris: ['http://127.0.0.1/callback', 'https://evil.example/cb'] });
    t.clock.advance(301_000);
    const renamed = await (await browser.fetch(authorizeUrl(t, clientId))).text();
    assert.match(renamed, /Good Agent Deluxe/);
    assert.doesNotMatch(renamed, /Verified by/);
    assert.match(renamed, /has not reviewed it/);
    await refusedPage(t, clientId, { redirect_uri: 'https://evil.example/cb', scope: 'bogus' });
  });

  test('a document whose client_name claims the site\'s trust names no app: its error page says why; verified by staff with that name, it is the app', async () => {
    for (const name of ['✔ Verified by Community', 'Community Official', '官方助手', 'Communityꓸhub', 'COMMUNITYSecurity', '社区登陆']) {
      const clientId = documents.document(freshPath('claims'), { client_name: name });
      assert.match(await refusedPage(t, clientId), /client_name must not claim this site(&#39;|')s trust/, name);
    }
    // Staff answer for the app they verified, with the name they saw.
    const clientId = documents.document(freshPath('claims-verified'), { client_name: 'Community Agent' });
    const row = {
      clientId, name: 'Community Agent', description: '', homepageUrl: '', ownerId: null, type: 'public' as const, redirectUris: ['http://127.0.0.1/callback'],
      allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256' as const, postLogoutRedirectUris: [],
    };
    await t.deps.stores.clients.saveDescribed(row, t.clock.now());
    const { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } = (await t.deps.stores.clients.findById(clientId))!;
    assert.ok(await t.deps.stores.clients.setVerified(clientId, { verified: true, reviewed: { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } }, t.clock.now()));
    const { browser } = await signedInBrowser(t);
    const consent = await browser.fetch(authorizeUrl(t, clientId));
    assert.equal(consent.status, 200);
    assert.match(await consent.text(), /Verified by Community/);
  });

  test('the sign-in page names a document\'s app by its host, not by the name it claims', async () => {
    const clientId = documents.document(freshPath('sign-in'), { client_name: 'Your Bank' });
    const response = await fetch(authorizeUrl(t, clientId), { redirect: 'manual' });
    const page = await (await fetch(new URL(response.headers.get('location')!, t.baseUrl))).text();
    assert.ok(page.includes(new URL(clientId).host), 'the host');
    assert.doesNotMatch(page, /Your Bank/);
  });

  test('an instance that does not keep the document still names its app on the sign-in and sign-up pages: it fetches it, on the visitor\'s share', async () => {
    const other = await startOAuthApp(database, { env: ADDRESSED });
    try {
      const path = freshPath('other-instance');
      const clientId = documents.document(path);
      const visitor = newAddress();
      const sentToSignIn = await fetch(authorizeUrl(t, clientId), { redirect: 'manual', headers: { 'x-forwarded-for': visitor } });
      const signIn = new URL(sentToSignIn.headers.get('location')!, other.baseUrl);
      const signUp = new URL(`/signup${signIn.search}`, other.baseUrl);
      for (const page of [signIn, signUp]) {
        assert.ok((await (await fetch(page, { headers: { 'x-forwarded-for': visitor } })).text()).includes(new URL(clientId).host), `${page.pathname} names the app`);
      }
      assert.equal(documents.count(path), 2, 'fetched once by each instance');
      // A visitor whose share is spent sees the page at once, naming no app.
      const port = await closedPort();
      const held = Array.from({ length: DOCUMENT_FETCHES_HELD_PER_ADDRESS }, (_, i) => refusedPage(other, `http://127.0.0.1:${port}/page-share-${i}-${process.hrtime.bigint()}`, {}, visitor));
      const heldAnswered = answeredYet(held);
      await until(() => other.deps.clientDocuments.fetches.held === DOCUMENT_FETCHES_HELD_PER_ADDRESS);
      const unnamed = documents.document(freshPath('page-share-next'));
      const returnTo = new URL(authorizeUrl(other, unnamed));
      const page = await fetch(new URL(`/login?${new URLSearchParams({ return_to: returnTo.pathname + returnTo.search })}`, other.baseUrl), { headers: { 'x-forwarded-for': visitor } });
      assert.equal(page.status, 200);
      assert.ok(!(await page.text()).includes(new URL(unnamed).host), 'no app named');
      assert.equal(heldAnswered(), false, 'answered at once: while the share\'s fetches are still held');
      assert.equal(documents.count(new URL(unnamed).pathname), 0, 'nothing fetched for it');
      await Promise.all(held);
    } finally {
      await other.close();
    }
  });

  test('a client_id URL without a path, with credentials or a fragment, or not in its normal form is refused before anything is fetched', async () => {
    const path = freshPath('shape');
    documents.document(path);
    const port = new URL(documents.origin).port;
    for (const [clientId, problem] of [
      [`${documents.origin}/`, /must have a path/],
      [`http://agent@127.0.0.1:${port}${path}`, /must not hold credentials or a fragment/],
      [`${documents.url(path)}#x`, /must not hold credentials or a fragment/],
      [`${documents.origin}/x/..${path}`, /normal form/],
      [`${documents.origin}/.${path}`, /normal form/],
      [`http://0x7f.1:${port}${path}`, /normal form/],
    ] as const) {
      assert.match(await refusedPage(t, clientId), problem, clientId);
    }
    assert.equal(documents.count(path), 0);
  });

  test('a kept document skips only its own exact id\'s URL check: another spelling of its address is still refused', async () => {
    const path = freshPath('kept');
    const clientId = documents.document(path);
    await accepted(t, clientId);
    await accepted(t, clientId);
    assert.equal(documents.count(path), 1, 'kept after the first request');
    const port = new URL(documents.origin).port;
    for (const [other, problem] of [
      [`${documents.origin}/x/..${path}`, /normal form/],
      [`${documents.origin}/.${path}`, /normal form/],
      [`http://0x7f.1:${port}${path}`, /normal form/],
      [`${clientId}#x`, /must not hold credentials or a fragment/],
      [`http://agent@127.0.0.1:${port}${path}`, /must not hold credentials or a fragment/],
    ] as const) {
      assert.match(await refusedPage(t, other), problem, other);
    }
    assert.equal(documents.count(path), 1, 'nothing fetched for the other spellings');
  });

  test('a document whose client_id is not its own URL names no app: the error page, no redirect', async () => {
    const path = freshPath('impostor');
    documents.document(path, { client_id: documents.url('/someone-else.json') });
    assert.match(await refusedPage(t, documents.url(path)), /client_id must equal the URL/);
  });

  test('a redirect_uri the document does not list: the error page, no redirect', async () => {
    const clientId = documents.document(freshPath('listed'));
    assert.match(await refusedPage(t, clientId, { redirect_uri: 'http://127.0.0.1/other' }), /redirect_uri is not registered/);
  });

  test('a document that breaks the rules of registered apps, or claims a secret, is refused', async () => {
    for (const extra of [
      { redirect_uris: ['http://app.example/callback'] },
      { redirect_uris: 'http://127.0.0.1/callback' },
      { redirect_uris: [] },
      { client_name: 42 },
      { client_name: '' },
      { client_name: 'x'.repeat(81) },
      { client_uri: 'javascript:alert(1)' },
      { logo_uri: 'ftp://agent.example/logo.png' },
      { token_endpoint_auth_method: 'client_secret_basic' },
      { client_secret: 'shh' },
      { grant_types: ['authorization_code', 'implicit'] },
      { response_types: ['token'] },
    ]) {
      const clientId = documents.document(freshPath('strict'), extra);
      assert.match(await refusedPage(t, clientId), /is not valid/, JSON.stringify(extra));
    }
  });

  test('a document whose address breaks the rules of registered apps names no app until it is mended: the error page names the address by its place and says the rule, quoting nothing of the document', async () => {
    const path = freshPath('mended');
    const clientId = documents.document(path);
    await push(clientId);
    const broken: Array<[Record<string, unknown>, RegExp]> = [
      [{ redirect_uris: ['http://127.0.0.1/callback', 'https://agent.example:443/cb'] },
        /is not valid: redirect_uris\[1\] writes the default port 443 of https, which browsers and URL parsers leave out when they write the address, so the address an app sends as they write it is another string, and addresses are compared as exact strings: leave the port out\./],
      [{ post_logout_redirect_uris: ['https://agent.example/bye', 'HTTPS://agent.example/bye'] },
        /is not valid: post_logout_redirect_uris\[1\] writes its scheme in capital letters, which a browser sends in lower case, so the two never match exactly: write the scheme in lower case\./],
      [{ redirect_uris: ['https://Agent.example/cb?Your-account-is-locked'] }, /is not valid: redirect_uris\[0\] writes its host so that a browser reads another name: write it as a browser does/],
      [{ redirect_uris: ['https://agent.example/a/../Your-account-is-locked'] }, /is not valid: redirect_uris\[0\] has a \. or \.\. segment in its path, which a browser removes before it goes there\./],
      [{ redirect_uris: ['http://127.0.0.1/callback', 'https://agent.example/cb?Your account is locked: call +1 555 0100'] }, /is not valid: redirect_uris\[1\] contains spaces or control characters\./],
    ];
    // Its kept copy expires, and so does each broken one's failure, a minute on: each is fetched as it is now.
    t.clock.advance(301_000);
    for (const [fields, why] of broken) {
      documents.document(path, fields);
      t.clock.advance(61_000);
      const page = await refusedPage(t, clientId);
      assert.match(page, why, JSON.stringify(fields));
      assert.doesNotMatch(page, /agent\.example|locked/i, 'nothing the document wrote in its addresses');
    }
    documents.document(path, { post_logout_redirect_uris: ['https://agent.example/bye'] });
    t.clock.advance(61_000);
    await accepted(t, clientId);
  });

  test('an address a document\'s app holds already, saved before a stricter rule (its scheme\'s default port), still names the app, as a registered app\'s does; one it does not hold is refused', async () => {
    const addresses = { redirect_uris: ['http://127.0.0.1/callback', 'https://agent.example:443/cb'], post_logout_redirect_uris: ['https://agent.example:443/bye'] };
    const clientId = documents.document(freshPath('stored-port'), addresses);
    // Its row, written from its document before the default port was refused.
    await t.deps.stores.clients.saveDescribed({
      clientId, name: 'Agent Smith', description: '', homepageUrl: '', ownerId: null, type: 'public', redirectUris: addresses.redirect_uris,
      postLogoutRedirectUris: addresses.post_logout_redirect_uris, allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256',
    }, t.clock.now());
    await accepted(t, clientId);
    const stranger = documents.document(freshPath('new-port'), addresses);
    assert.match(await refusedPage(t, stranger), /is not valid: redirect_uris\[1\] writes the default port 443 of https/);
  });

  test('a document\'s grant types, response types and page addresses that break a rule are named by their place and rule on the error page, quoting nothing of the document', async () => {
    const broken: Array<[Record<string, unknown>, RegExp]> = [
      [{ grant_types: ['authorization_code', 'Your account is locked: call 555 0100'] }, /grant_types may hold only authorization_code, refresh_token, not what grant_types\[1\] holds/],
      [{ response_types: ['Your account is locked: call 555 0100'] }, /response_types may hold only code, not what response_types\[0\] holds/],
      [{ client_uri: 'https://%59our-account-is-locked-call-5550100.example/' }, /client_uri must write its host as a browser reads it \(lower case/],
      [{ logo_uri: 'https://%6Cocked.example/logo.png' }, /logo_uri must write its host as a browser reads it \(lower case/],
    ];
    for (const [fields, why] of broken) {
      const page = await refusedPage(t, documents.document(freshPath('unquoted'), fields));
      assert.match(page, why, JSON.stringify(fields));
      assert.doesNotMatch(page, /locked/i, 'nothing the document wrote, nor the host a browser reads in it');
    }
  });

  test('a document larger than 5 KB is refused, declared or not', async () => {
    const declared = freshPath('large');
    documents.answers.set(declared, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(6000) }) });
    assert.match(await refusedPage(t, documents.url(declared)), /larger than 5120 bytes/);
    const chunked = freshPath('chunked');
    documents.answers.set(chunked, { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, body: JSON.stringify({ pad: 'x'.repeat(6000) }) });
    assert.match(await refusedPage(t, documents.url(chunked)), /larger than 5120 bytes/);
  });

  test('a document that is not JSON, or not an object, is refused', async () => {
    const html = freshPath('html');
    documents.answers.set(html, { headers: { 'content-type': 'text/html' }, body: '<html>hello</html>' });
    assert.match(await refusedPage(t, documents.url(html)), /is not JSON/);
    const list = freshPath('list');
    documents.answers.set(list, { headers: { 'content-type': 'application/json' }, body: '[]' });
    assert.match(await refusedPage(t, documents.url(list)), /not a JSON object/);
  });

  test('a redirect is not followed: the 3xx is the answer', async () => {
    const target = freshPath('target');
    documents.document(target);
    const moved = freshPath('moved');
    documents.answers.set(moved, { status: 302, headers: { location: documents.url(target) } });
    assert.match(await refusedPage(t, documents.url(moved)), /answered HTTP 302 \(redirects are not followed\)/);
    assert.equal(documents.count(target), 0, 'the redirect\'s target was never asked');
  });

  test('a slow or dripping document never holds a request longer than the 5 s fetch limit, nor do requests that wait for its fetch', async () => {
    const slow = freshPath('slow');
    documents.answers.set(slow, { delayMs: 60_000 });
    const drip = freshPath('drip');
    documents.answers.set(drip, { headers: { 'content-type': 'application/json' }, drip: true });
    const started = Date.now();
    const pages = await Promise.all([
      refusedPage(t, documents.url(slow)),
      refusedPage(t, documents.url(drip)),
      (async () => { await new Promise((resolve) => setTimeout(resolve, 1000)); return refusedPage(t, documents.url(slow)); })(),
    ]);
    const elapsed = Date.now() - started;
    for (const page of pages) assert.match(page, /no answer within 5 s/);
    assert.ok(elapsed >= 4900 && elapsed < 6500, `answered by about 5 s (took ${elapsed} ms)`);
    assert.equal(documents.count(slow), 1, 'the later request waited for the fetch under way');
  });

  test('a closed port and a silent host read the same to the requester, and both take the fetch limit', async () => {
    const silent = freshPath('silent');
    documents.answers.set(silent, { delayMs: 60_000 });
    const refusedId = `http://127.0.0.1:${await closedPort()}/document.json`;
    const started = Date.now();
    const [refusedAt, silentAt] = await Promise.all([refusedId, documents.url(silent)].map(async (id) => {
      const page = await refusedPage(t, id);
      const message = /<main[\s\S]*<\/main>/.exec(page)?.[0] ?? '';
      return { page: message.replaceAll(id, 'ID'), ms: Date.now() - started };
    }));
    assert.match(refusedAt!.page, /could not be fetched/);
    assert.equal(refusedAt!.page, silentAt!.page, 'the same message');
    assert.ok(refusedAt!.ms >= 4900, `the closed port's answer waited for the limit too (${refusedAt!.ms} ms)`);
    const reason = t.audit.find((e) => e.audit === 'client_document.unreachable' && e.clientId === refusedId);
    assert.match(reason?.audit === 'client_document.unreachable' ? reason.reason : '', /ECONNREFUSED/, 'the operator reads why');
  });

  test('to one host, eight fetches run at once and eight more wait their turn in order; past them a new id is refused at once', async () => {
    // A host that never answers holds each of its first eight fetches to the 5 s limit.
    const held = Array.from({ length: DOCUMENT_FETCHES_PER_HOST }, (_, i) => hangingDocument(`held-${i}`));
    const holding = held.map((id) => refusedPage(t, id));
    const holdingAnswered = answeredYet(holding);
    await until(() => held.every((id) => documents.count(new URL(id).pathname) === 1));
    // A burst of first requests for other documents of the same host: each waits for a turn.
    const started = Date.now();
    const waiting = Array.from({ length: DOCUMENT_FETCHES_PER_HOST }, (_, i) => documents.document(freshPath(`waiting-${i}`)));
    const served = waiting.map(async (id) => { await accepted(t, id); return Date.now() - started; });
    await until(() => t.deps.clientDocuments.fetches.waiting === DOCUMENT_FETCHES_PER_HOST);
    assert.match(await busyPage(t, documents.document(freshPath('one-too-many'))), /fetching too many client ID metadata documents at once/);
    assert.equal(holdingAnswered(), false, 'refused at once, not held: the fetches under way are still held');
    for (const page of await Promise.all(holding)) assert.match(page, /could not be fetched: no answer within 5 s/);
    for (const ms of await Promise.all(served)) assert.ok(ms >= 4000 && ms < 9000, `served once a held fetch ended its turn (after ${ms} ms)`);
    for (const id of waiting) assert.equal(documents.count(new URL(id).pathname), 1, 'each fetched once');
    // The line counts fetches under way and waiting, not fetches ever made.
    await accepted(t, documents.document(freshPath('after')));
  });

  test('a host is one host however its name is written: with its final dots, on another of its ports, it waits in the same line; its default port has a line of its own', async () => {
    const silent = await silentServer(['127.0.0.1', '::1']);
    const line = Array.from({ length: 2 * DOCUMENT_FETCHES_PER_HOST }, (_, i) => refusedPage(t, `https://localhost:${silent.port}/named-${i}-${process.hrtime.bigint()}`));
    await until(() => t.deps.clientDocuments.fetches.waiting === DOCUMENT_FETCHES_PER_HOST);
    const otherPort = new URL(documents.origin).port;
    for (const id of [`https://localhost.:${silent.port}/named-dotted`, `https://localhost..:${silent.port}/named-dotted-twice`, `https://localhost:${otherPort}/named-other-port`]) {
      assert.match(await busyPage(t, id), /fetching too many client ID metadata documents at once/, id);
    }
    // http's own port 80, where nothing of the test listens: fetched, not refused for the line.
    assert.doesNotMatch(await refusedPage(t, 'http://localhost/named-default-port'), /too many/);
    await Promise.all(line);
    silent.close();
  });

  test('a fetch with no answer gives its host\'s turn back at once: ids on a host\'s closed ports keep none of its documents waiting', async () => {
    const port = await closedPort();
    const started = Date.now();
    const unanswered = Array.from({ length: 2 * DOCUMENT_FETCHES_PER_HOST }, (_, i) => refusedPage(t, `http://127.0.0.1:${port}/closed-${i}-${process.hrtime.bigint()}`));
    const unansweredAnswered = answeredYet(unanswered);
    // All sixteen held, none of them holding a turn or waiting for one.
    await until(() => {
      const { running, waiting, held } = t.deps.clientDocuments.fetches;
      return held === 2 * DOCUMENT_FETCHES_PER_HOST && running === 0 && waiting === 0;
    });
    await accepted(t, documents.document(freshPath('beside-closed')));
    assert.equal(unansweredAnswered(), false, 'the host\'s document was fetched at once, while the ids with no answer are still held');
    for (const page of await Promise.all(unanswered)) assert.match(page, /could not be fetched: no answer within 5 s/);
    assert.ok(Date.now() - started >= 4900, 'each id with no answer still reads as one at the fetch limit');
  });

  test('fetches with no answer count among the 128 an instance holds until the fetch limit: past them a new id is refused at once, so ids that fail fast start at most 128 fetches per 5 s', async () => {
    // Two waves of 64 ids on closed ports of sixteen hosts: each fetch fails at once and is held to the limit.
    const port = await closedPort();
    const waves = [0, 1].map((wave) => Array.from({ length: DOCUMENT_FETCHES_IN_FLIGHT / DOCUMENT_FETCHES_PER_HOST }, (_, i) => `127.0.0.${2 + wave * 8 + i}`));
    const unanswered: Array<Promise<string>> = [];
    for (const hosts of waves) {
      unanswered.push(...hosts.flatMap((host) => Array.from({ length: DOCUMENT_FETCHES_PER_HOST }, (_, i) => refusedPage(t, `http://${host}:${port}/unanswered-${i}-${process.hrtime.bigint()}`))));
      // The wave's fetches have failed and given their turns back; they are still held.
      await until(() => {
        const { running, waiting, held } = t.deps.clientDocuments.fetches;
        return held === unanswered.length && running === 0 && waiting === 0;
      });
    }
    assert.equal(unanswered.length, DOCUMENT_FETCHES_HELD);
    const unansweredAnswered = answeredYet(unanswered);
    assert.match(await busyPage(t, documents.document(freshPath('past-the-held'))), /fetching too many client ID metadata documents at once/);
    assert.equal(unansweredAnswered(), false, 'refused at once, not held: the fetches with no answer are still held');
    for (const page of await Promise.all(unanswered)) assert.match(page, /could not be fetched: no answer within 5 s/);
    await accepted(t, documents.document(freshPath('after-the-held')));
  });

  test('one address\'s browsers hold at most 8 of the fetches until they end: their next new id is refused at once, another address\'s is fetched, and so is the same address\'s other programs\' (a native app, an agent); an IPv6 address counts by its /48', async () => {
    const port = await closedPort();
    for (const [sender, neighbour] of [['100.64.255.1', '100.64.255.1'], ['2001:db8:35:1::1', '2001:db8:35:ffff::2']] as const) {
      const heldBefore = t.deps.clientDocuments.fetches.held;
      const unanswered = Array.from({ length: DOCUMENT_FETCHES_HELD_PER_ADDRESS }, (_, i) => refusedPage(t, `http://127.0.0.1:${port}/share-${i}-${process.hrtime.bigint()}`, {}, sender));
      const unansweredAnswered = answeredYet(unanswered);
      await until(() => t.deps.clientDocuments.fetches.held === heldBefore + DOCUMENT_FETCHES_HELD_PER_ADDRESS);
      const document = documents.document(freshPath('share-next'));
      assert.match(await busyPage(t, document, neighbour), /Requests from your network are waiting for 8 client ID metadata documents already/, neighbour);
      assert.equal(unansweredAnswered(), false, 'refused at once, not held: the share\'s fetches are still held');
      // At the token endpoint, from a browser, the same refusal is RFC 6749 5.2's JSON, and not
      // invalid_client: nothing is wrong with the app, so it is not a failed authentication either,
      // which the address's 20 failures a minute would count (attack56: the neighbours of a share's
      // holder were locked out).
      for (let exchanges = 0; exchanges <= 20; exchanges++) {
        const refused = await codeExchange(t, document, neighbour, { origin: 'https://app.example' });
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.get('retry-after'), '5');
        assert.equal(((await refused.json()) as { error: string }).error, 'temporarily_unavailable');
      }
      assert.equal(documents.count(new URL(document).pathname), 0, 'nothing fetched for it');
      // A program behind the same address (no Origin) is in another share: its app's document is fetched.
      const fromProgram = await codeExchange(t, document, neighbour);
      assert.equal(((await fromProgram.json()) as { error: string }).error, 'invalid_grant');
      assert.equal(documents.count(new URL(document).pathname), 1, 'fetched for the program');
      await accepted(t, document, newAddress());
      for (const page of await Promise.all(unanswered)) assert.match(page, /could not be fetched: no answer within 5 s/);
      await accepted(t, documents.document(freshPath('share-after')), neighbour);
    }
  });

  test('a host\'s line goes first to the share holding the fewest places: when two addresses\' browsers fill its turns and its line, a program\'s document on that host waits its turn and is fetched, and the newest browser request waiting is refused', async () => {
    const [first, second] = [newAddress(), newAddress()];
    const runningIds = Array.from({ length: DOCUMENT_FETCHES_PER_HOST }, (_, i) => hangingDocument(`line-running-${i}`));
    const running = runningIds.map((id) => refusedPage(t, id, {}, first));
    await until(() => runningIds.every((id) => documents.count(new URL(id).pathname) === 1));
    const waiting: Array<Promise<Response>> = [];
    for (let i = 0; i < DOCUMENT_FETCHES_PER_HOST; i++) {
      waiting.push(fetch(authorizeUrl(t, hangingDocument(`line-waiting-${i}`)), { redirect: 'manual', headers: { 'x-forwarded-for': second } }));
      // In the line before the next is asked: the order is the test's.
      await until(() => t.deps.clientDocuments.fetches.waiting === i + 1);
    }
    // A native app behind the first address (no Origin) brings its app's document, on the same host.
    const document = documents.document(freshPath('line-program'));
    const started = Date.now();
    const fromProgram = await codeExchange(t, document, first);
    assert.equal(((await fromProgram.json()) as { error: string }).error, 'invalid_grant', 'the document was fetched and named the app');
    assert.equal(documents.count(new URL(document).pathname), 1);
    assert.ok(Date.now() - started >= 4000, 'it waited for a turn, which the held fetches gave back at the fetch limit');
    const statuses = await Promise.all(waiting.map(async (response) => (await response).status));
    assert.deepEqual(statuses, [...Array(DOCUMENT_FETCHES_PER_HOST - 1).fill(400), 503], 'the second address\'s newest request lost its place; the others were fetched in turn');
    await Promise.all(running);
  });

  test('a request that joins a waiting fetch makes the place its share\'s too: the share that started the fetch cannot fill the line around it and have it pushed out from under the joiner', async () => {
    const [attacker, pusher, app] = [newAddress(), newAddress(), newAddress()];
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // The attacker's browsers hold the host's turns; its programs the line, the app's document newest.
    const runningIds = Array.from({ length: DOCUMENT_FETCHES_PER_HOST }, (_, i) => hangingDocument(`join-running-${i}`));
    const running = runningIds.map((id) => refusedPage(t, id, {}, attacker));
    await until(() => runningIds.every((id) => documents.count(new URL(id).pathname) === 1));
    const line: Array<Promise<Response>> = [];
    for (let i = 0; i < DOCUMENT_FETCHES_PER_HOST - 1; i++) {
      line.push(codeExchange(t, hangingDocument(`join-waiting-${i}`), attacker));
      await until(() => t.deps.clientDocuments.fetches.waiting === i + 1);
    }
    const document = documents.document(freshPath('join-app'));
    line.push(codeExchange(t, document, attacker));
    await until(() => t.deps.clientDocuments.fetches.waiting === DOCUMENT_FETCHES_PER_HOST);
    // The app's own request joins that fetch, then a new id from another address fills the line.
    const started = Date.now();
    const fromApp = codeExchange(t, document, app);
    await pause(200);
    const pushing = refusedPage(t, hangingDocument('join-pusher'), {}, pusher);
    assert.equal(((await (await fromApp).json()) as { error: string }).error, 'invalid_grant', 'the document was fetched and named the app');
    assert.ok(Date.now() - started >= 4000, 'it waited for a turn');
    assert.equal(documents.count(new URL(document).pathname), 1);
    const statuses = await Promise.all(line.map(async (response) => (await response).status));
    assert.deepEqual(statuses, [...Array(DOCUMENT_FETCHES_PER_HOST - 2).fill(401), 503, 400], 'the attacker\'s newest place of its own was pushed out; the app\'s answered');
    await Promise.all([...running, pushing]);
  });

  test('fetches started at the token, pushed-request, revocation and introspection endpoints by programs count against the address\'s programs\' share, and end in invalid_client; its browsers\' share is untouched', async () => {
    const port = await closedPort();
    const sender = newAddress();
    const heldBefore = t.deps.clientDocuments.fetches.held;
    const unanswered = ['token', 'par', 'revoke', 'introspect'].flatMap((endpoint) => [0, 1].map((i) => fetch(`${t.baseUrl}/api/oauth/${endpoint}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': sender },
      body: new URLSearchParams({ client_id: `http://127.0.0.1:${port}/${endpoint}-${i}-${process.hrtime.bigint()}`, grant_type: 'authorization_code', code: 'none', token: 'none', response_type: 'code' }),
    })));
    assert.equal(unanswered.length, DOCUMENT_FETCHES_HELD_PER_ADDRESS);
    await until(() => t.deps.clientDocuments.fetches.held === heldBefore + DOCUMENT_FETCHES_HELD_PER_ADDRESS);
    const next = await codeExchange(t, documents.document(freshPath('after-endpoints')), sender);
    assert.equal(next.status, 503, 'the programs\' share is spent');
    assert.equal(((await next.json()) as { error: string }).error, 'temporarily_unavailable');
    await accepted(t, documents.document(freshPath('after-endpoints-browser')), sender);
    for (const response of await Promise.all(unanswered)) {
      assert.equal(response.status, 401);
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_client');
    }
  });

  test('per instance, at most 64 fetches run: a new host past them is refused at once, a known host\'s id waits its turn', async () => {
    // Eight hosts (loopback addresses, as development allows) that never answer, eight ids each.
    const hosts = Array.from({ length: DOCUMENT_FETCHES_IN_FLIGHT / DOCUMENT_FETCHES_PER_HOST }, (_, i) => `127.0.0.${i + 1}`);
    const silent = await silentServer(hosts);
    const port = new URL(documents.origin).port;
    const held = hosts.flatMap((host) => Array.from({ length: DOCUMENT_FETCHES_PER_HOST }, (_, i) => `http://${host}:${silent.port}/instance-${i}-${process.hrtime.bigint()}`));
    const holding = held.map((id) => refusedPage(t, id));
    const holdingAnswered = answeredYet(holding);
    await until(() => t.deps.clientDocuments.fetches.running === DOCUMENT_FETCHES_IN_FLIGHT);
    const started = Date.now();
    assert.match(await busyPage(t, `http://127.0.0.99:${port}/instance-elsewhere`), /fetching too many client ID metadata documents at once/);
    assert.equal(holdingAnswered(), false, 'refused at once, not held: the fetches under way are still held');
    // 127.0.0.1 is one of the eight: its next id takes a waiting place, which holds no connection.
    const waited = (async () => { await accepted(t, documents.document(freshPath('instance-waits'))); return Date.now() - started; })();
    for (const page of await Promise.all(holding)) assert.match(page, /could not be fetched: no answer within 5 s/);
    assert.ok(await waited >= 4000, 'served once a fetch of its host ended');
    silent.close();
  });

  // The timeout is the keep-alive time's stand-in: a connection left open after its answer would
  // hold the close for the 72 s a keep-alive lasts, past it. How long the rest takes is no rule here.
  test('shutting down refuses the requests waiting for a turn at once; the fetches under way are answered within the fetch limit, and the close ends once their answers are sent', { timeout: 60_000 }, async () => {
    const closing = await startOAuthApp(database, { env: ADDRESSED });
    let closed: Promise<unknown> | undefined;
    try {
      const held = Array.from({ length: DOCUMENT_FETCHES_PER_HOST }, (_, i) => documents.url(freshPath(`closing-held-${i}`)));
      for (const id of held) documents.answers.set(new URL(id).pathname, { delayMs: 60_000 });
      /** What was answered, in the order the answers came. */
      const order: string[] = [];
      const holding = held.map((id) => refusedPage(closing, id).finally(() => order.push('a fetch under way')));
      // Each of the host's turns is held once its fetch reached the document server.
      await until(() => held.every((id) => documents.count(new URL(id).pathname) === 1));
      const waiting = Array.from({ length: DOCUMENT_FETCHES_PER_HOST }, (_, i) =>
        busyPage(closing, documents.document(freshPath(`closing-waiting-${i}`))).finally(() => order.push('a request waiting')));
      await until(() => closing.deps.clientDocuments.fetches.waiting === DOCUMENT_FETCHES_PER_HOST);
      assert.equal(order.length, 0, 'nothing answered before the close');
      closed = closing.close().finally(() => order.push('closed'));
      for (const page of await Promise.all(waiting)) assert.match(page, /fetching too many client ID metadata documents at once/);
      for (const page of await Promise.all(holding)) assert.match(page, /could not be fetched: no answer within 5 s/);
      await closed;
      // At once: before any fetch under way, each held to the fetch limit, gave its turn back.
      assert.deepEqual(order.filter((what) => what !== 'closed'), [
        ...Array<string>(DOCUMENT_FETCHES_PER_HOST).fill('a request waiting'), ...Array<string>(DOCUMENT_FETCHES_PER_HOST).fill('a fetch under way'),
      ]);
      // Their answers, sent whole (above) with `Connection: close`, end their connections: the
      // close may end before this client has read the last of them, never before the refusals.
      assert.ok(order.indexOf('closed') >= DOCUMENT_FETCHES_PER_HOST, order.join(', '));
    } finally {
      await (closed ?? closing.close()).catch(() => {});
    }
  });

  test('concurrent first requests for one id share one fetch', async () => {
    const path = freshPath('crowd');
    const clientId = documents.document(path);
    const answer = documents.answers.get(path) as Answer;
    documents.answers.set(path, { ...answer, delayMs: 300 });
    await Promise.all(Array.from({ length: 10 }, () => accepted(t, clientId)));
    assert.equal(documents.count(path), 1);
  });

  test('a document is kept as its Cache-Control says, between 5 minutes and 24 hours', async () => {
    const cases: Array<{ cacheControl: string | undefined; keptSeconds: number }> = [
      { cacheControl: 'public, max-age=3600', keptSeconds: 3600 },
      { cacheControl: 'max-age=10', keptSeconds: 300 },
      { cacheControl: 'no-store', keptSeconds: 300 },
      { cacheControl: undefined, keptSeconds: 300 },
      { cacheControl: 'max-age=604800', keptSeconds: 86_400 },
    ];
    for (const { cacheControl, keptSeconds } of cases) {
      const path = freshPath('cached');
      const clientId = documents.document(path, {}, cacheControl === undefined ? {} : { 'cache-control': cacheControl });
      await accepted(t, clientId);
      t.clock.advance(keptSeconds * 1000 - 1000);
      await accepted(t, clientId);
      assert.equal(documents.count(path), 1, `kept ${keptSeconds} s for ${cacheControl}`);
      t.clock.advance(2000);
      await accepted(t, clientId);
      assert.equal(documents.count(path), 2, `fetched again after ${keptSeconds} s for ${cacheControl}`);
    }
  });

  test('a failed document is kept a minute, or as its answer\'s Cache-Control says between 1 and 5 minutes: a request meanwhile gets the same refusal without a fetch', async () => {
    const invalid = { 'content-type': 'application/json' };
    const cases: Array<{ answer: Answer; why: RegExp; keptSeconds: number }> = [
      { answer: { status: 404, body: 'gone' }, why: /answered HTTP 404/, keptSeconds: 60 },
      { answer: { status: 410, headers: { 'cache-control': 'max-age=120' }, body: 'gone' }, why: /answered HTTP 410/, keptSeconds: 120 },
      { answer: { headers: { ...invalid, 'cache-control': 'max-age=5' }, body: 'not json' }, why: /is not JSON/, keptSeconds: 60 },
      { answer: { headers: { ...invalid, 'cache-control': 'max-age=86400' }, body: '{"client_id":"https://other.example/app.json"}' }, why: /client_id must equal the URL/, keptSeconds: 300 },
      // Cut off past 5 KB, no answer is read: its Cache-Control says nothing.
      { answer: { headers: { ...invalid, 'cache-control': 'max-age=86400' }, body: JSON.stringify({ pad: 'x'.repeat(6000) }) }, why: /larger than 5120 bytes/, keptSeconds: 60 },
    ];
    for (const { answer, why, keptSeconds } of cases) {
      const path = freshPath('failing');
      documents.answers.set(path, answer);
      assert.match(await refusedPage(t, documents.url(path)), why);
      t.clock.advance(keptSeconds * 1000 - 1000);
      assert.match(await refusedPage(t, documents.url(path)), why, `the same refusal after ${keptSeconds - 1} s`);
      assert.equal(documents.count(path), 1, `kept ${keptSeconds} s: ${JSON.stringify(answer.headers)}`);
      t.clock.advance(2000);
      assert.match(await refusedPage(t, documents.url(path)), why);
      assert.equal(documents.count(path), 2, `fetched again after ${keptSeconds} s`);
    }
  });

  test('a failure that may pass (no answer, 408, 429, 5xx) is kept only as long as a fetch may take, whatever its Cache-Control says: one request that met the host\'s blip does not refuse the app to everyone for minutes', async () => {
    for (const status of [408, 429, 500, 503]) {
      const path = freshPath(`passing-${status}`);
      documents.answers.set(path, { status, headers: { 'cache-control': 'max-age=300' }, body: 'down' });
      const clientId = documents.url(path);
      assert.match(await refusedPage(t, clientId), new RegExp(`answered HTTP ${status}`));
      assert.match(await refusedPage(t, clientId), new RegExp(`answered HTTP ${status}`), 'the same refusal meanwhile');
      assert.equal(documents.count(path), 1, `HTTP ${status}: kept, not fetched again at once`);
      documents.document(path);
      t.clock.advance(DOCUMENT_FETCH_TIMEOUT_MS + 1000);
      await accepted(t, clientId);
      assert.equal(documents.count(path), 2, `HTTP ${status}: fetched again once the host is back`);
    }
    // No answer at all (the network's trouble, or a loaded instance's): the requester reads the same, and nothing is sent meanwhile.
    const unreachable = `http://127.0.0.1:${await closedPort()}/kept-${process.hrtime.bigint()}.json`;
    const attempts = () => t.audit.filter((e) => e.audit === 'client_document.unreachable' && e.clientId === unreachable).length;
    assert.match(await refusedPage(t, unreachable), /could not be fetched: no answer within 5 s/);
    assert.match(await refusedPage(t, unreachable), /could not be fetched: no answer within 5 s/);
    assert.equal(attempts(), 1, 'no second attempt meanwhile');
    t.clock.advance(DOCUMENT_FETCH_TIMEOUT_MS + 1000);
    await refusedPage(t, unreachable);
    assert.equal(attempts(), 2);
  });

  test('at the token endpoint a bad or unreachable document is invalid_client (RFC 6749 5.2)', async () => {
    const path = freshPath('gone');
    const clientId = documents.document(path);
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const consent = await browser.fetch(authorizeUrl(t, clientId, { code_challenge: pkce.challenge }));
    const answer = await browser.postForm('/oauth/authorize', [...consentForm(await consent.text()), ['decision', 'approve']]);
    const code = new URL(answer.headers.get('location')!).searchParams.get('code')!;
    const token = (fields: Record<string, string>) => fetch(`${t.baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, client_id: clientId }),
    });
    const issued = await token({ grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1/callback', code_verifier: pkce.verifier });
    assert.equal(issued.status, 200);
    const { refresh_token: refreshToken } = await issued.json() as { refresh_token: string };
    // The document goes away, and its cached copy expires before the app refreshes.
    documents.answers.set(path, { status: 404, body: 'gone' });
    t.clock.advance(301_000);
    const response = await token({ grant_type: 'refresh_token', refresh_token: refreshToken });
    assert.equal(response.status, 401);
    const body = await response.json() as { error: string; error_description: string };
    assert.equal(body.error, 'invalid_client');
    assert.match(body.error_description, /answered HTTP 404/);
    // A failed fetch is kept a minute; then a document that breaks a rule is refused the same way,
    // its description in RFC 6749 5.2's characters whatever the document holds.
    documents.document(path, { redirect_uris: ['http://app.example/callback'], grant_types: ['\u202e"\\'] });
    t.clock.advance(61_000);
    const invalid = await token({ grant_type: 'refresh_token', refresh_token: refreshToken });
    assert.equal(invalid.status, 401);
    const refusal = await invalid.json() as { error: string; error_description: string };
    assert.equal(refusal.error, 'invalid_client');
    assert.match(refusal.error_description, /is not valid: redirect_uris\[0\] must use https/);
    assert.match(refusal.error_description, /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/);
  });

  /** A pushed authorization request (RFC 9126) of the app `clientId` names, accepted: it stores the app's row. Its request_uri. */
  async function push(clientId: string): Promise<string> {
    const response = await fetch(`${t.baseUrl}/api/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1/callback', scope: 'profile:read',
        code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }),
    });
    assert.equal(response.status, 201, await response.clone().text());
    return ((await response.json()) as { request_uri: string }).request_uri;
  }

  test('a pushed authorization request from a document\'s app is accepted, and its request_uri opens the consent page', async () => {
    const clientId = documents.document(freshPath('pushed'));
    const requestUri = await push(clientId);
    const { browser } = await signedInBrowser(t);
    const page = await browser.fetch(`/oauth/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`);
    assert.equal(page.status, 200);
    assert.ok(hiddenFields(await page.text()).length > 0);
  });

  test('the cache holds a bounded number of documents: 10,000 distinct ids leave at most its capacity', async () => {
    const prefix = `/many-${process.hrtime.bigint()}-`;
    const under = documents.documentsUnder(prefix, { client_name: 'One of many' });
    const ids = Array.from({ length: 10_000 }, (_, i) => `${under}${i}`);
    let next = 0;
    await Promise.all(Array.from({ length: DOCUMENT_FETCHES_PER_HOST }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        await t.deps.clientDocuments.resolve(t.deps.stores, id, { address: '127.0.0.1', fromBrowser: false });
        assert.ok(t.deps.clientDocuments.size <= DOCUMENT_CACHE_ENTRIES);
      }
    }));
    assert.equal(t.deps.clientDocuments.size, DOCUMENT_CACHE_ENTRIES);
    // The oldest were let go: asking for the first again fetches it again.
    const first = new URL(ids[0]!).pathname;
    assert.equal(documents.count(first), 1);
    await accepted(t, ids[0]!);
    assert.equal(documents.count(first), 2);
  });


  test('the janitor deletes a document\'s app that only pushed, a day after its document last refreshed it, and keeps one a member approved, an operator deactivated or staff verified', async () => {
    // Anyone can push for any URL that answers a valid document: each push stores a row.
    const pushedOnly = documents.document(freshPath('pushed-only'));
    const deactivated = documents.document(freshPath('deactivated'));
    const approved = documents.document(freshPath('approved'));
    const verified = documents.document(freshPath('verified-only'));
    await push(pushedOnly);
    await push(deactivated);
    await push(verified);
    await t.deps.stores.clients.setStatus(deactivated, 'deactivated', t.clock.now());
    const { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } = (await t.deps.stores.clients.findById(verified))!;
    assert.ok(await t.deps.stores.clients.setVerified(verified, { verified: true, reviewed: { name, description, homepageUrl, redirectUris, postLogoutRedirectUris, backchannelLogoutUri } }, t.clock.now()));
    const { browser } = await signedInBrowser(t);
    await approve(browser, new URL(authorizeUrl(t, approved)));
    t.clock.advance(DOCUMENT_CLIENT_GRACE_MS - 1000);
    await runJanitor(t.deps);
    assert.ok(await t.deps.stores.clients.findById(pushedOnly), 'kept within the grace period');
    t.clock.advance(2000);
    await runJanitor(t.deps);
    assert.equal(await t.deps.stores.clients.findById(pushedOnly), undefined, 'a push\'s leftover goes');
    assert.equal((await t.deps.stores.clients.findById(deactivated))?.status, 'deactivated', 'an operator\'s deactivation stays');
    assert.ok(await t.deps.stores.clients.findById(approved), 'an app a member approved stays');
    const kept = await t.deps.stores.clients.findById(verified);
    assert.ok(kept, 'an app staff verified stays');
    assert.notEqual(kept.verifiedAt, null, 'verified');
  });

  test('a push or approval rewrites the app\'s row only when its document changed or the row is older than half the grace, so a row in use outlives its last push by half the grace at least', async () => {
    const path = freshPath('rewritten');
    const clientId = documents.document(path);
    const written = async () => (await t.deps.stores.clients.findById(clientId))!;
    await push(clientId);
    const first = await written();
    t.clock.advance(1000);
    await push(clientId);
    assert.equal((await written()).updatedAt, first.updatedAt, 'the same document a second later: not written again');
    // The document changes; once its cached copy expires (5 minutes), the next push says so at once.
    documents.document(path, { client_name: 'Agent Jones', redirect_uris: ['http://127.0.0.1/callback', 'http://127.0.0.1/other'] });
    t.clock.advance(301_000);
    await push(clientId);
    const changed = await written();
    assert.deepEqual([changed.name, changed.redirectUris, changed.updatedAt], ['Agent Jones', ['http://127.0.0.1/callback', 'http://127.0.0.1/other'], t.clock.now()]);
    t.clock.advance(DOCUMENT_CLIENT_REFRESH_MS - 1000);
    await push(clientId);
    assert.equal((await written()).updatedAt, changed.updatedAt, 'unchanged and written less than half the grace ago: left as it is');
    t.clock.advance(2000);
    await push(clientId);
    const refreshed = await written();
    assert.equal(refreshed.updatedAt, t.clock.now(), 'older than half the grace: written again');
    // A push just before the next refresh writes nothing; the janitor still keeps the row for at
    // least the other half of the grace after it, so a pushed request never outlives its app's row.
    t.clock.advance(DOCUMENT_CLIENT_REFRESH_MS - 1000);
    await push(clientId);
    assert.equal((await written()).updatedAt, refreshed.updatedAt);
    t.clock.advance(DOCUMENT_CLIENT_GRACE_MS - DOCUMENT_CLIENT_REFRESH_MS - 1000);
    await runJanitor(t.deps);
    assert.ok(await t.deps.stores.clients.findById(clientId), 'kept half the grace after its last push');
    t.clock.advance(3000);
    await runJanitor(t.deps);
    assert.equal(await t.deps.stores.clients.findById(clientId), undefined, 'gone a whole grace after its last write');
  });
});

describe('Client ID metadata documents under stricter settings', () => {
  forEachDatabase('documents off, hosts limited, private addresses refused', (database) => {
    test('CLIENT_ID_METADATA_DOCUMENTS=off: a URL client_id names no app, nothing is fetched, discovery does not offer it', async () => {
      const t = await startOAuthApp(database, { env: { CLIENT_ID_METADATA_DOCUMENTS: 'off' } });
      try {
        const path = freshPath('off');
        const clientId = documents.document(path);
        assert.match(await refusedPage(t, clientId), /unknown or no longer active/);
        assert.equal(documents.count(path), 0);
        const metadata = await (await fetch(`${t.baseUrl}/.well-known/openid-configuration`)).json() as Record<string, unknown>;
        assert.equal('client_id_metadata_document_supported' in metadata, false);
        assert.doesNotMatch(await (await fetch(`${t.baseUrl}/docs`)).text(), /id="client-id-metadata-documents"/, '/docs does not offer it');
      } finally {
        await t.close();
      }
    });

    test('CLIENT_METADATA_HOSTS limits which hosts may name apps', async () => {
      const limited = await startOAuthApp(database, { env: { CLIENT_METADATA_HOSTS: 'agents.example,*.example.org' } });
      const allowing = await startOAuthApp(database, { env: { CLIENT_METADATA_HOSTS: '*.example.org, 127.0.0.1' } });
      try {
        const path = freshPath('hosts');
        const clientId = documents.document(path);
        assert.match(await refusedPage(limited, clientId), /does not accept apps described by documents on 127\.0\.0\.1/);
        assert.equal(documents.count(path), 0, 'nothing was fetched');
        await accepted(allowing, clientId);
        assert.equal(documents.count(path), 1);
      } finally {
        await limited.close();
        await allowing.close();
      }
    });

    test('with CLIENT_METADATA_ALLOW_PRIVATE=0 a private or loopback address is refused before any connection, by address and by name, and reads as a silent host', async () => {
      const t = await startOAuthApp(database, { env: { CLIENT_METADATA_ALLOW_PRIVATE: '0' } });
      try {
        const path = freshPath('private');
        documents.document(path);
        const port = new URL(documents.origin).port;
        assert.match(await refusedPage(t, documents.url(path)), /must use https/);
        const byAddress = `https://127.0.0.1:${port}${path}`;
        const byName = `https://localhost:${port}${path}`;
        const started = Date.now();
        const pages = await Promise.all([refusedPage(t, byAddress), refusedPage(t, byName)]);
        // The requester learns nothing of the address: the page reads as a silent host's, at the
        // same time; the operator reads why in the audit line.
        for (const page of pages) assert.match(page, /could not be fetched: no answer within 5 s/);
        assert.doesNotMatch(pages.join(), /127\.0\.0\.1,|::1|resolves|refused/);
        assert.ok(Date.now() - started >= 4900, 'held to the fetch limit like a silent host');
        const reasons = t.audit.flatMap((e) => (e.audit === 'client_document.unreachable' ? [[e.clientId, e.reason]] : []));
        assert.match(reasons.find(([id]) => id === byAddress)?.[1] ?? '', /refused: 127\.0\.0\.1, which is not a public address \(CLIENT_METADATA_ALLOW_PRIVATE is off\)/);
        assert.match(reasons.find(([id]) => id === byName)?.[1] ?? '', /refused: localhost resolves to (127\.0\.0\.1|::1), which is not a public address/);
        assert.equal(documents.count(path), 0, 'nothing reached the document server');
      } finally {
        await t.close();
      }
    });
  });
});
