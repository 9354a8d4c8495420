/**
 * Issue 33 item 4, the proof with a real client: the official MCP TypeScript SDK's client
 * (`Client` + `StreamableHTTPClientTransport` with an `authProvider`, its `auth()` flow at its
 * defaults) connects to the MCP server from a cold start with no pre-registration, finding the
 * authorization server from the first 401's `resource_metadata` alone: once by RFC 7591 dynamic
 * registration, once by a client ID metadata document. A member signs in and approves in
 * Chromium, and the tools answer exactly what /me and /me/posts answer.
 *
 * The SDK takes a metadata document only at an `https://` URL (`isHttpsUrl` in its
 * client/auth.js), so the document is served over TLS on 127.0.0.1 with a certificate made for
 * this run, and the service runs as a process of its own (the compiled server, as operators run
 * it) trusting that certificate through Node's NODE_EXTRA_CA_CERTS.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type OAuthClientProvider, type OAuthDiscoveryState, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { type Browser } from 'playwright-core';
import { loadSettings } from '../../src/config/settings.js';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { NO_AUDIT } from '../../src/core/audit.js';
import { writePost } from '../../src/core/community/posts.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { createDeps, prepareDatabase } from '../../src/deps.js';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { forEachDatabase } from '../support/databases.js';
import { freePort } from '../support/instances.js';
import { compiled, run, type Running, SERVICE_ENTRY } from '../support/processes.js';

const USERNAME = 'agentowner';
const PASSWORD = 'correct horse battery staple';

/** The SDK's OAuthClientProvider as its simple OAuth client example writes it: all in memory. */
class InMemoryProvider implements OAuthClientProvider {
  private information: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier: string | undefined;
  /** The authorization URL the SDK asked the user agent to open. */
  authorizationUrl: URL | undefined;
  /**
   * What each discovery found. The SDK records `resourceMetadataUrl` only when it was handed one,
   * which is the 401's `resource_metadata`, not an address it guessed. (No `discoveryState()`:
   * every `auth()` discovers afresh, as the SDK does by default.)
   */
  readonly discoveries: OAuthDiscoveryState[] = [];

  constructor(readonly redirectUrl: string, readonly clientMetadata: OAuthClientMetadata, readonly clientMetadataUrl?: string) {}

  clientInformation() { return this.information; }
  saveClientInformation(information: OAuthClientInformationMixed) { this.information = information; }
  tokens() { return this.saved; }
  saveTokens(tokens: OAuthTokens) { this.saved = tokens; }
  redirectToAuthorization(url: URL) { this.authorizationUrl = url; }
  saveCodeVerifier(verifier: string) { this.verifier = verifier; }
  saveDiscoveryState(state: OAuthDiscoveryState) { this.discoveries.push(state); }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
}

/** A certificate for 127.0.0.1 made for this run, its own trust anchor. */
function loopbackCertificate(): { certPath: string; key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cimd-tls-'));
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyPath, '-out', certPath], { stdio: 'ignore' });
  return { certPath, key: readFileSync(keyPath), cert: readFileSync(certPath) };
}

const listen = (server: Server | ReturnType<typeof createTlsServer>) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
const close = (server: Server | ReturnType<typeof createTlsServer> | undefined) =>
  new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));

forEachDatabase('the MCP SDK client connects with no pre-registration', (database) => {
  let service: Running;
  let baseUrl: string;
  let browser: Browser;
  /** The agent's loopback callback: keeps the query each redirect brought. */
  let callback: Server;
  let callbackUrl: string;
  const landed: URLSearchParams[] = [];
  /** Serves the agent's client ID metadata document over TLS. */
  let documentServer: ReturnType<typeof createTlsServer>;
  let documentUrl: string;
  let documentFetches = 0;
  /**
   * The member's personal token for the API itself: the SDK's tokens are bound to the MCP
   * endpoint (it sends `resource`, RFC 8707), so /me would refuse them.
   */
  let apiToken: string;

  before(async () => {
    if (skipWithoutChromium) return;
    const seed = createDeps(loadSettings({ DATABASE_URL: database.url, BASE_URL: 'http://127.0.0.1', DEMO: '0', JANITOR_INTERVAL: '0' }), { audit: NO_AUDIT });
    await prepareDatabase(seed);
    const member = await createAccount(seed.stores, seed.clock, { username: USERNAME, password: PASSWORD, bio: 'Lets an agent read.' });
    for (const title of ['Hello, agents', 'Second thoughts', 'Third time']) {
      await writePost(seed.stores, seed.clock, { authorId: member.id, title, body: 'Some **words**.', category: 'General', status: 'published' });
    }
    apiToken = (await createPersonalToken(seed.stores, seed.clock, seed.tokenMarks, { userId: member.id, name: 'compare', scopes: ['profile:read', 'posts:read'], expiresInDays: 7 })).token;
    await seed.close();

    callback = createServer((req, res) => {
      landed.push(new URL(req.url!, 'http://127.0.0.1').searchParams);
      res.end('You may close this window.');
    });
    callbackUrl = `http://127.0.0.1:${await listen(callback)}/callback`;

    const tls = loopbackCertificate();
    documentServer = createTlsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      documentFetches += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({
        client_id: documentUrl, client_name: 'Document Agent', redirect_uris: [callbackUrl],
        grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
      }));
    });
    documentUrl = `https://127.0.0.1:${await listen(documentServer)}/agent/client.json`;

    compiled();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    service = run(process.execPath, [SERVICE_ENTRY], {
      DATABASE_URL: database.url, PORT: String(port), BASE_URL: baseUrl, DEMO: '0', LOG_LEVEL: 'warn', JANITOR_INTERVAL: '0',
      NODE_EXTRA_CA_CERTS: tls.certPath,
    });
    await service.waitFor(/Listening on/);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    service?.child.kill('SIGTERM');
    await service?.exited;
    await close(callback);
    await close(documentServer);
  });

  /** The member's part in Chromium: sign in, approve, and hand back the code the redirect brought. */
  async function signInAndApprove(authorizationUrl: URL, appName: string): Promise<string> {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(authorizationUrl.href);
      assert.equal(new URL(page.url()).pathname, '/login');
      await page.fill('#username', USERNAME);
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[type=submit]:has-text("Sign in")')]);
      assert.ok(await page.isVisible(`text=${appName}`), await page.content());
      const before = landed.length;
      await Promise.all([page.waitForURL((url) => url.href.startsWith(callbackUrl)), page.click('button[value=approve]')]);
      const query = landed[before] ?? new URL(page.url()).searchParams;
      assert.equal(query.get('iss'), baseUrl);
      return query.get('code')!;
    } finally {
      await context.close();
    }
  }

  /**
   * The SDK's own sequence: connect (the 401 starts discovery and registration, and ends at
   * redirectToAuthorization), the member approves, finishAuth with the code, connect again; then
   * the tools, compared with the API's own answers for the same member.
   */
  async function connectAndCompare(provider: InMemoryProvider, appName: string): Promise<void> {
    const mcpUrl = new URL(`${baseUrl}/api/open/v1/mcp`);
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await assert.rejects(new Client({ name: 'sdk-agent', version: '1.0.0' }).connect(first), UnauthorizedError);
    // Nothing but the MCP endpoint was given: the 401's resource_metadata led to the issuer.
    const [discovery] = provider.discoveries;
    assert.equal(discovery?.resourceMetadataUrl, `${baseUrl}/.well-known/oauth-protected-resource/api/open/v1/mcp`);
    assert.equal(new URL(discovery.authorizationServerUrl).href, new URL(baseUrl).href);
    assert.equal(discovery.authorizationServerMetadata?.issuer, baseUrl);
    const authorizationUrl = provider.authorizationUrl!;
    assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${baseUrl}/oauth/authorize`);
    // Discovery came from the 401's resource_metadata: the SDK names the MCP endpoint as the resource.
    assert.equal(authorizationUrl.searchParams.get('resource'), mcpUrl.href);
    await first.finishAuth(await signInAndApprove(authorizationUrl, appName));
    await first.close();

    const client = new Client({ name: 'sdk-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    try {
      const api = async (path: string) => (await fetch(`${baseUrl}/api/open/v1${path}`, { headers: { authorization: `Bearer ${apiToken}` } })).text();
      assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['get_profile', 'list_posts']);
      const profile = await client.callTool({ name: 'get_profile', arguments: {} });
      assert.equal(JSON.stringify(profile.structuredContent), await api('/me'));
      assert.equal((profile.structuredContent as { username: string }).username, USERNAME);
      const posts = await client.callTool({ name: 'list_posts', arguments: { page: 0, size: 2 } });
      assert.equal(JSON.stringify(posts.structuredContent), await api('/me/posts?page=0&size=2'));
      assert.equal((posts.structuredContent as { totalElements: number }).totalElements, 3);
    } finally {
      await client.close();
    }
  }

  test('by dynamic registration: the SDK registers itself at registration_endpoint, the member approves, the tools answer as /me and /me/posts', { skip: skipWithoutChromium }, async () => {
    const provider = new InMemoryProvider(callbackUrl, {
      client_name: 'Registered Agent', redirect_uris: [callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
    });
    assert.equal(provider.clientInformation(), undefined);
    await connectAndCompare(provider, 'Registered Agent');
    assert.equal(provider.discoveries[0]!.authorizationServerMetadata?.registration_endpoint, `${baseUrl}/api/oauth/register`);
    const registered = provider.clientInformation()!;
    assert.match(registered.client_id, /\S/);
    assert.ok(!registered.client_id.startsWith('https://'), 'a registered client id, not a document URL');
    assert.equal('client_secret' in registered ? registered.client_secret : undefined, undefined, 'a public client, as it asked');
  });

  test('by a client ID metadata document: the SDK names its document URL as client_id, the member approves, the tools answer as /me and /me/posts', { skip: skipWithoutChromium }, async () => {
    const provider = new InMemoryProvider(callbackUrl, {
      client_name: 'Document Agent', redirect_uris: [callbackUrl], token_endpoint_auth_method: 'none',
    }, documentUrl);
    await connectAndCompare(provider, 'Document Agent');
    // The SDK uses a document only where discovery says the server takes one.
    assert.equal(provider.discoveries[0]!.authorizationServerMetadata?.client_id_metadata_document_supported, true);
    assert.equal(provider.clientInformation()!.client_id, documentUrl);
    assert.ok(documentFetches >= 1, 'the service fetched the document');
  });
});
