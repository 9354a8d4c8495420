/**
 * The resource API for agents (INTERFACE section 13): POST /api/open/v1/mcp, an MCP server over
 * Streamable HTTP, driven by the official SDK's client with a token from the code flow. Its tools
 * answer exactly what /me and /me/posts answer; its challenges, audience, limit and refusals are
 * the API's; bad input is a JSON-RPC or HTTP error, never a 500.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { writePost } from '../../src/core/community/posts.js';
import type { User } from '../../src/core/accounts/ports.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { dpopKey, dpopProof } from '../support/dpop.js';
import { firstAnswerHead } from '../support/raw-socket.js';
import {
  type TestClient, clientFields, codeExchangeFields, introspect, newClient, obtainCode, obtainTokens, pkcePair, signedInBrowser, startOAuthApp, tokenRequest,
} from '../oauth/helpers.js';

const ACCEPT = 'application/json, text/event-stream';

forEachDatabase('the resource API for agents (MCP)', (database) => {
  let t: TestApp;
  let mcp: string;
  let metadataUrl: string;
  let app: TestClient;
  before(async () => {
    t = await startOAuthApp(database);
    mcp = `${t.baseUrl}/api/open/v1/mcp`;
    metadataUrl = `${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1/mcp`;
    app = await newClient(t);
  });
  after(() => t.close());

  /** A signed-in user with posts, and an access token from the code flow. */
  async function userWithToken(scope = 'profile:read posts:read', extra: Record<string, string> = {}): Promise<{ user: User; token: string; refreshToken: string }> {
    const { browser, user } = await signedInBrowser(t);
    for (const [i, title] of ['First', 'Second', 'Third'].entries()) {
      await writePost(t.deps.stores, t.clock, { authorId: user.id, title, body: `Post **${i}**, with “quotes” and 中文.`, category: 'General', status: 'published' });
    }
    const tokens = await obtainTokens(t, browser, app, { scope, extra });
    return { user, token: tokens.access_token, refreshToken: tokens.refresh_token };
  }

  /**
   * The SDK's client connected with the token in its Authorization header. `version`: the protocol
   * revision it asks for (the client asks for its latest; an older one is asked by rewriting the
   * initialize request on its way, as an older client would send it).
   */
  async function connect(token: string, version?: string): Promise<Client> {
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    const fetchAsking: typeof fetch = async (url, init) => {
      if (version !== undefined && typeof init?.body === 'string' && init.body.includes('"initialize"')) {
        const message = JSON.parse(init.body) as { params: { protocolVersion: string } };
        message.params.protocolVersion = version;
        return fetch(url, { ...init, body: JSON.stringify(message) });
      }
      return fetch(url, init);
    };
    const transport = new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { authorization: `Bearer ${token}` } }, fetch: fetchAsking });
    await client.connect(transport);
    return client;
  }

  const api = (path: string, token: string) => fetch(`${t.baseUrl}/api/open/v1${path}`, { headers: { authorization: `Bearer ${token}` } });

  /** One JSON-RPC message posted as the protocol asks, with `headers` besides. */
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(mcp, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body });
  const call = (token: string, name: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }), { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25', ...headers });

  for (const version of ['2025-11-25', '2025-06-18']) {
    test(`the SDK's client (protocol ${version}) lists both tools and their answers are exactly /me and /me/posts`, async () => {
      const { token } = await userWithToken();
      const client = await connect(token, version);
      try {
        assert.equal(client.getServerVersion()?.name, 'Community Open API');
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((tool) => tool.name), ['get_profile', 'list_posts']);
        for (const tool of tools) {
          assert.equal(tool.outputSchema?.type, 'object', `${tool.name} has an output schema`);
          assert.equal(tool.annotations?.readOnlyHint, true);
        }
        const profile = await client.callTool({ name: 'get_profile', arguments: {} });
        assert.equal(JSON.stringify(profile.structuredContent), await (await api('/me', token)).text());
        assert.deepEqual(profile.content, [{ type: 'text', text: JSON.stringify(profile.structuredContent) }]);
        const posts = await client.callTool({ name: 'list_posts', arguments: { page: 1, size: 2 } });
        assert.equal(JSON.stringify(posts.structuredContent), await (await api('/me/posts?page=1&size=2', token)).text());
        const defaults = await client.callTool({ name: 'list_posts', arguments: {} });
        assert.equal(JSON.stringify(defaults.structuredContent), await (await api('/me/posts', token)).text());
        assert.equal((defaults.structuredContent as { totalElements: number }).totalElements, 3);
      } finally {
        await client.close();
      }
    });
  }

  test('list_posts refuses page and size as /me/posts does, with its error, as a tool error the model can read', async () => {
    const { token } = await userWithToken();
    const client = await connect(token);
    try {
      for (const args of [{ page: -1 }, { size: 0 }, { size: 2.5 }, { page: '1e3' }, { page: [1] }, { size: null }, { page: 1_000_000_000 }]) {
        const query = new URLSearchParams(Object.entries(args).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
        const fromApi = await api(`/me/posts?${query}`, token);
        assert.equal(fromApi.status, 400, JSON.stringify(args));
        const result = await client.callTool({ name: 'list_posts', arguments: args });
        assert.equal(result.isError, true, JSON.stringify(args));
        assert.equal(result.structuredContent, undefined);
        assert.deepEqual(result.content, [{ type: 'text', text: await fromApi.text() }], JSON.stringify(args));
      }
      // Above 50 the size in effect is 50, and the envelope says so, as /me/posts.
      const capped = await client.callTool({ name: 'list_posts', arguments: { size: 500 } });
      assert.equal((capped.structuredContent as { size: number }).size, 50);
    } finally {
      await client.close();
    }
  });

  test('list_posts refuses an argument nested too deep to write as JSON as a tool error, never a 500', async () => {
    const { token } = await userWithToken('posts:read');
    // 20,000 levels parse (JSON.parse) but overflow the stack of JSON.stringify; the body is under 64 KiB.
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    for (const argument of [deep, `{"a":${deep}}`]) {
      const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_posts","arguments":{"page":${argument}}}}`;
      const response = await post(body, { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25' });
      assert.equal(response.status, 200);
      const { result } = (await response.json()) as { result: { isError: boolean; content: Array<{ text: string }> } };
      assert.equal(result.isError, true);
      assert.equal((JSON.parse(result.content[0]!.text) as { error: string }).error, 'invalid_request');
    }
    assert.equal((await call(token, 'list_posts')).status, 200, 'the next call is served');
  });

  test('concurrent calls with the same JSON-RPC id from different users each get their own answer', async () => {
    const users = await Promise.all(Array.from({ length: 8 }, () => userWithToken('profile:read')));
    const answers = await Promise.all(users.flatMap(({ token }) => [1, 2].map(async () => {
      const response = await call(token, 'get_profile');
      assert.equal(response.status, 200);
      return { token, answer: (await response.json()) as { id: number; result: { structuredContent: { id: number } } } };
    })));
    for (const { token, answer } of answers) {
      assert.equal(answer.id, 1);
      assert.equal(answer.result.structuredContent.id, users.find((u) => u.token === token)!.user.id);
    }
  });

  test('concurrent requests of one client with the same JSON-RPC id each get the answer to their own method', async () => {
    const { user, token } = await userWithToken();
    const auth = { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25' };
    const messages = {
      profile: { method: 'tools/call', params: { name: 'get_profile' } },
      posts: { method: 'tools/call', params: { name: 'list_posts', arguments: { size: 2 } } },
      tools: { method: 'tools/list' },
      ping: { method: 'ping' },
      unknown: { method: 'resources/list' },
    };
    const rounds = await Promise.all(Array.from({ length: 4 }, () => Promise.all(Object.values(messages).map(async (message) => {
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 'same', ...message }), auth);
      assert.equal(response.status, 200);
      return (await response.json()) as { id: string; result?: { structuredContent?: { id?: number; size?: number }; tools?: unknown[] }; error?: { code: number } };
    }))));
    for (const [profile, posts, tools, ping, unknown] of rounds) {
      for (const answer of [profile, posts, tools, ping, unknown]) assert.equal(answer!.id, 'same');
      assert.equal(profile!.result?.structuredContent?.id, user.id);
      assert.equal(posts!.result?.structuredContent?.size, 2);
      assert.equal(tools!.result?.tools?.length, 2);
      assert.deepEqual(ping!.result, {});
      assert.equal(unknown!.error?.code, -32601);
    }
  });

  test('a request without a token is 401 with a Bearer challenge naming the MCP metadata (resource_metadata)', async () => {
    const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    assert.equal(response.status, 401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer /);
    assert.doesNotMatch(challenge.split(', DPoP')[0]!, /error=/);
    assert.ok(challenge.startsWith(`Bearer realm="api", resource_metadata="${metadataUrl}"`), challenge);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_token');
    // The SDK's client meets the same 401 and says so.
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(mcp))), (error: unknown) => error instanceof StreamableHTTPError && error.code === 401);
  });

  test('the MCP metadata (RFC 9728) names the MCP endpoint, this authorization server, header tokens and both scopes', async () => {
    const response = await fetch(metadataUrl);
    assert.equal(response.status, 200);
    const metadata = (await response.json()) as Record<string, unknown>;
    assert.equal(metadata.resource, mcp);
    assert.deepEqual(metadata.authorization_servers, [t.baseUrl]);
    assert.deepEqual(metadata.scopes_supported, ['profile:read', 'posts:read']);
    assert.deepEqual(metadata.bearer_methods_supported, ['header']);
  });

  test('calling a tool whose scope the token lacks is 403 insufficient_scope naming that scope; the token still lists and calls the other', async () => {
    const { token } = await userWithToken('profile:read');
    const refused = await call(token, 'list_posts');
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('www-authenticate'), `Bearer realm="api", error="insufficient_scope", scope="posts:read", resource_metadata="${metadataUrl}"`);
    assert.equal(((await refused.json()) as { error: string }).error, 'insufficient_scope');
    const client = await connect(token);
    try {
      assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['get_profile', 'list_posts']);
      assert.equal(JSON.stringify((await client.callTool({ name: 'get_profile' })).structuredContent), await (await api('/me', token)).text());
      await assert.rejects(client.callTool({ name: 'list_posts' }), (error: unknown) => error instanceof StreamableHTTPError && error.code === 403);
    } finally {
      await client.close();
    }
    const postsOnly = await userWithToken('posts:read');
    const noProfile = await call(postsOnly.token, 'get_profile');
    assert.equal(noProfile.status, 403);
    assert.match(noProfile.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="profile:read"/);
  });

  test('a tool whose scope the token lacks is refused however the body is written: one only the SDK\'s parser reads (a leading byte order mark) is a parse error, never a call', async () => {
    const { token } = await userWithToken('posts:read');
    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_profile', arguments: {} } });
    const answer = await post(`\uFEFF${message}`, { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25' });
    assert.equal(answer.status, 400);
    const body = await answer.json() as { result?: unknown; error: { code: number } };
    assert.equal(body.result, undefined, 'no tool ran');
    assert.equal(body.error.code, -32700);
  });

  test('a tool that meets the database unavailable is answered 503 as the API answers it, while a call beside it gets its own answer', async () => {
    const { user, token } = await userWithToken();
    const posts = t.deps.stores.posts;
    const listPublishedByAuthor = posts.listPublishedByAuthor;
    // SQLite's "database is locked": a backend that may serve again soon (src/http/plugins/errors.ts).
    posts.listPublishedByAuthor = async () => { throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }); };
    try {
      const [failed, profile] = await Promise.all([call(token, 'list_posts'), call(token, 'get_profile')]);
      assert.equal(failed.status, 503);
      assert.ok(failed.headers.get('retry-after'));
      const body = (await failed.json()) as Record<string, unknown>;
      assert.equal(body.error, 'temporarily_unavailable');
      assert.equal(body.jsonrpc, undefined, 'the API\'s answer, not a JSON-RPC error');
      assert.doesNotMatch(JSON.stringify(body), /locked/);
      assert.equal(profile.status, 200);
      assert.equal(((await profile.json()) as { result: { structuredContent: { id: number } } }).result.structuredContent.id, user.id);
    } finally {
      posts.listPublishedByAuthor = listPublishedByAuthor;
    }
    assert.equal((await call(token, 'list_posts')).status, 200, 'the next call is served');
  });

  test('a revoked token is 401 invalid_token from the next request on', async () => {
    const { token } = await userWithToken();
    assert.equal((await call(token, 'get_profile')).status, 200);
    const revoked = await fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token, ...clientFields(app) }),
    });
    assert.equal(revoked.status, 200);
    const refused = await call(token, 'get_profile');
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer realm="api", error="invalid_token", resource_metadata="/);
  });

  test('a personal token works as at the API, its scopes as fixed when it was made', async () => {
    const { user } = await userWithToken();
    const { token } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'agent', scopes: ['posts:read'], expiresInDays: 30 });
    const client = await connect(token);
    try {
      const posts = await client.callTool({ name: 'list_posts', arguments: { size: 1 } });
      assert.equal(JSON.stringify(posts.structuredContent), await (await api('/me/posts?size=1', token)).text());
    } finally {
      await client.close();
    }
    const refused = await call(token, 'get_profile');
    assert.equal(refused.status, 403);
    assert.match(((await refused.json()) as { error_description: string }).error_description, /personal token/);
  });

  test('a DPoP-bound token needs Authorization: DPoP and a proof for this endpoint; as Bearer it is 401 on the DPoP challenge', async () => {
    const key = await dpopKey();
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const code = await obtainCode(browser, app, { pkce });
    const fields = codeExchangeFields(app, code, pkce);
    const tokenUrl = `${t.baseUrl}/api/oauth/token`;
    const asked = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl, nowMs: t.clock.now() }) });
    const nonce = asked.headers.get('dpop-nonce')!;
    const issued = (await (await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl, nowMs: t.clock.now(), nonce }) })).json()) as { access_token: string; token_type: string };
    assert.equal(issued.token_type, 'DPoP');
    const token = issued.access_token;
    const proof = await dpopProof(key, { htm: 'POST', htu: mcp, nowMs: t.clock.now(), accessToken: token, nonce });
    const ok = await call(token, 'get_profile', {}, { authorization: `DPoP ${token}`, dpop: proof });
    assert.equal(ok.status, 200, await ok.clone().text());
    const asBearer = await call(token, 'get_profile');
    assert.equal(asBearer.status, 401);
    assert.match(asBearer.headers.get('www-authenticate') ?? '', new RegExp(`^DPoP realm="api", algs="[^"]+", error="invalid_token", resource_metadata="${metadataUrl}"`));
    const replayed = await call(token, 'get_profile', {}, { authorization: `DPoP ${token}`, dpop: proof });
    assert.equal(replayed.status, 401, 'a proof is good for one request');
  });

  test('the per-token limit is one count shared with the API: 60 a minute in all, then 429', async () => {
    const { token } = await userWithToken();
    for (let i = 0; i < 30; i++) assert.equal((await api('/me', token)).status, 200);
    for (let i = 1; i <= 30; i++) {
      const response = await call(token, 'get_profile');
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-ratelimit-remaining'), String(30 - i));
    }
    const limited = await call(token, 'get_profile');
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '60');
    assert.equal((await api('/me', token)).status, 429);
    t.clock.advance(60_000);
  });

  test('a token issued for the MCP server (RFC 8707 resource) works there alone; one issued for the API is refused there', async () => {
    const forMcp = await userWithToken('profile:read posts:read', { resource: mcp });
    assert.equal((await introspect(t, app, forMcp.token)).aud, mcp);
    assert.equal((await call(forMcp.token, 'get_profile')).status, 200);
    const atApi = await api('/me', forMcp.token);
    assert.equal(atApi.status, 401);
    assert.match(atApi.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const forApi = await userWithToken('profile:read posts:read', { resource: `${t.baseUrl}/api/open/v1` });
    assert.equal((await api('/me', forApi.token)).status, 200);
    const atMcp = await call(forApi.token, 'get_profile');
    assert.equal(atMcp.status, 401);
    assert.match(atMcp.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    // Its refresh keeps the MCP server as audience; a token request may not widen it to the API.
    const refreshedForApi = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: forMcp.refreshToken, resource: `${t.baseUrl}/api/open/v1`, ...clientFields(app) });
    assert.equal(refreshedForApi.status, 400);
    assert.equal(((await refreshedForApi.json()) as { error: string }).error, 'invalid_target');
    const refreshed = (await (await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: forMcp.refreshToken, ...clientFields(app) })).json()) as { access_token: string };
    assert.equal((await introspect(t, app, refreshed.access_token)).aud, mcp);
  });

  test('the server answers the version asked when it is 2025-06-18 or 2025-11-25, else its latest; another version header is 400', async () => {
    const { token } = await userWithToken();
    const initialize = (protocolVersion: string) => post(JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }), { authorization: `Bearer ${token}` });
    for (const [asked, answered] of [['2025-06-18', '2025-06-18'], ['2025-11-25', '2025-11-25'], ['2025-03-26', '2025-11-25'], ['2024-11-05', '2025-11-25'], ['1999-01-01', '2025-11-25']]) {
      const response = await initialize(asked!);
      assert.equal(response.status, 200, asked);
      const answer = (await response.json()) as { result: { protocolVersion: string; capabilities: Record<string, unknown> } };
      assert.equal(answer.result.protocolVersion, answered, asked);
      assert.ok(answer.result.capabilities.tools, 'tools capability');
      assert.equal(response.headers.get('mcp-session-id'), null, 'stateless: no session');
    }
    const old = await call(token, 'get_profile', {}, { 'mcp-protocol-version': '2025-03-26' });
    assert.equal(old.status, 400);
    assert.equal(((await old.json()) as { error: { code: number } }).error.code, -32600);
  });

  test('GET and DELETE are 405 with Allow: POST (no SSE stream, no session to end)', async () => {
    const { token } = await userWithToken();
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcp, { method, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get('allow'), 'POST', method);
    }
  });

  test('GET and DELETE with a token issued for the MCP server are 405, counted; a bad token is refused with the MCP metadata', async () => {
    // The SDK's transport opens its SSE stream with GET and the token it got for this resource
    // (RFC 8707): a 401 there sends it back to authorization, a 405 means "no stream".
    const { token } = await userWithToken('profile:read posts:read', { resource: mcp });
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcp, { method, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get('allow'), 'POST', method);
      assert.ok(response.headers.get('x-ratelimit-limit'), `${method}: counted, with its rate-limit fields`);
      const refused = await fetch(mcp, { method, headers: { authorization: 'Bearer svco_not-a-real-token', accept: 'text/event-stream' } });
      assert.equal(refused.status, 401, method);
      assert.match(refused.headers.get('www-authenticate') ?? '', new RegExp(`resource_metadata="${metadataUrl}"`), method);
      const anonymous = await fetch(mcp, { method, headers: { accept: 'text/event-stream' } });
      assert.equal(anonymous.status, 405, `${method} without a token`);
    }
  });

  test('without the Authorization header, a method the MCP endpoint does not take is 405 with Allow: POST whatever the query or body holds; a form POSTed to it is still the gate\'s 401', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const [method, query, body] of [['GET', '?access_token=svco_x'], ['DELETE', '?access_token=svco_x'], ['PUT', '', 'access_token=svco_x'], ['PATCH', '?access_token=svco_x', 'a=b']] as const) {
      const asked = `${method} ${query} ${body ?? ''}`;
      const answer = await fetch(`${mcp}${query}`, { method, headers: form, ...(body === undefined ? {} : { body }) });
      assert.equal(answer.status, 405, asked);
      assert.equal(answer.headers.get('allow'), 'POST', asked);
      assert.equal(answer.headers.get('www-authenticate'), null, asked);
      assert.deepEqual(Object.keys(await answer.json() as object).sort(), ['error', 'error_description'], asked);
    }
    const posted = await fetch(mcp, { method: 'POST', headers: form, body: 'a=b' });
    assert.equal(posted.status, 401);
    assert.match(posted.headers.get('www-authenticate') ?? '', new RegExp(`resource_metadata="${metadataUrl}"`));
  });

  test('a method the MCP endpoint does not take is answered 405 without its body read, as at the API: an anonymous PUT of JSON costs no read of up to 64 KiB', async () => {
    // The headers announce a body of 64 KiB and not one byte of it is sent: the 405 comes only if
    // nothing waits for the body first (else the answer is the server's timeout, or none).
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const { host } = new URL(t.baseUrl);
      const head = await firstAnswerHead(t.baseUrl, `${method} ${new URL(mcp).pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n`);
      assert.match(head, /^HTTP\/1\.1 405 /, `${method}: ${head.split('\r\n')[0]}`);
      assert.match(head, /\r\nallow: POST\r\n/i, method);
    }
  });

  test('bad input is a JSON-RPC or HTTP error, never a 500: invalid JSON, a batch, an unknown method or tool, a huge body, a wrong Accept or type', async () => {
    const { token } = await userWithToken();
    const auth = { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25' };
    const jsonRpcError = async (response: Response) => ((await response.json()) as { jsonrpc: string; error: { code: number } }).error.code;

    const invalid = await post('{"jsonrpc": "2.0", "id": 1, "method": ', auth);
    assert.equal(invalid.status, 400);
    assert.equal(await jsonRpcError(invalid), -32700);

    const batch = await post(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_profile' } }]), auth);
    assert.equal(batch.status, 400);
    assert.equal(await jsonRpcError(batch), -32600);

    const notJsonRpc = await post(JSON.stringify({ hello: 'world' }), auth);
    assert.equal(notJsonRpc.status, 400);

    const unknownMethod = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list' }), auth);
    assert.equal(unknownMethod.status, 200);
    assert.equal(await jsonRpcError(unknownMethod), -32601);

    const unknownTool = await call(token, 'delete_everything');
    assert.equal(unknownTool.status, 200);
    assert.equal(await jsonRpcError(unknownTool), -32602);

    const huge = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { padding: 'x'.repeat(100_000) } }), auth);
    assert.equal(huge.status, 413);

    const wrongAccept = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { ...auth, accept: 'text/html' });
    assert.equal(wrongAccept.status, 406);

    const wrongType = await fetch(mcp, { method: 'POST', headers: { ...auth, accept: ACCEPT, 'content-type': 'text/plain' }, body: 'tools/list' });
    assert.equal(wrongType.status, 415);

    const empty = await fetch(mcp, { method: 'POST', headers: { ...auth, accept: ACCEPT } });
    assert.ok(empty.status >= 400 && empty.status < 500, String(empty.status));

    const notification = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), auth);
    assert.equal(notification.status, 202);
  });

  test('an unknown tool\'s JSON-RPC error says its words once: the SDK\'s client, which prefixes "MCP error <code>: " itself, shows that prefix once', async () => {
    const { token } = await userWithToken();
    const client = await connect(token);
    try {
      await assert.rejects(client.callTool({ name: 'delete_everything', arguments: {} }), (error: Error) => {
        assert.equal(error.message, 'MCP error -32602: Unknown tool: "delete_everything"; the tools are get_profile, list_posts.');
        return true;
      });
    } finally {
      await client.close();
    }
  });

  test('a tools/call with params.task (MCP 2025-11-25 tasks) is answered as the call without it: this server declares no tasks capability, so it ignores the field', async () => {
    const { token } = await userWithToken();
    const client = await connect(token);
    try {
      // Sent as the request's params, not through the SDK's task options, which refuse on the
      // client's side a server that declares no tasks capability; an agent on another SDK sends it.
      const asTask = await client.request({ method: 'tools/call', params: { name: 'get_profile', arguments: {}, task: { ttl: 60_000 } } }, CallToolResultSchema);
      assert.equal(asTask.isError, undefined);
      assert.equal(JSON.stringify(asTask.structuredContent), await (await api('/me', token)).text());
    } finally {
      await client.close();
    }
    // Whatever it holds: the field is ignored, never read.
    for (const task of [{ ttl: 'soon' }, 'a task', null]) {
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_profile', arguments: {}, task } }), { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25' });
      const body = await response.json() as { result?: { structuredContent: unknown }; error?: unknown };
      assert.equal(body.error, undefined, `task ${JSON.stringify(task)}: ${JSON.stringify(body.error)}`);
      assert.equal(JSON.stringify(body.result?.structuredContent), await (await api('/me', token)).text());
    }
  });

  test('params of the wrong shape are JSON-RPC -32602 Invalid params, naming the first field at fault in a line, with the request\'s id', async () => {
    const { token } = await userWithToken();
    const cases: Array<[string, unknown]> = [
      ['tools/call', { name: 42 }],
      ['tools/call', { name: 'get_profile', arguments: 'all of it' }],
      ['tools/call', { name: 'list_posts', arguments: [1, 2] }],
      ['initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: 'an agent' }],
    ];
    for (const [method, params] of cases) {
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 'bad-7', method, params }), { authorization: `Bearer ${token}` });
      assert.equal(response.status, 200);
      const body = await response.json() as { id: unknown; error: { code: number; message: string } };
      assert.equal(body.id, 'bad-7');
      assert.equal(body.error.code, -32602, `${method} ${JSON.stringify(params)}: ${body.error.message}`);
      assert.match(body.error.message, /^Invalid params: params\.\w+: /);
      assert.ok(body.error.message.length < 300 && !body.error.message.includes('\n'), body.error.message);
    }
  });

  test('JSON that is no JSON-RPC message is -32600 Invalid Request with its id when it has one, and a request whose params are no object -32602 with its id', async () => {
    const { token } = await userWithToken();
    const auth = { authorization: `Bearer ${token}` };
    const cases: Array<[unknown, number, number, string | number | null, RegExp]> = [
      [{ jsonrpc: '2.0', id: 3, method: 'tools/list', params: [1, 2] }, 200, -32602, 3, /^Invalid params: params: /],
      [{ jsonrpc: '2.0', id: 'm', method: 'tools/call', params: 'x' }, 200, -32602, 'm', /^Invalid params: params: /],
      [{ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'get_profile', _meta: 5 } }, 200, -32602, 'a', /^Invalid params: params\._meta: /],
      [{ jsonrpc: '2.0', id: 4, method: 'ping', extra: 1 }, 400, -32600, 4, /^Invalid Request: message: .*extra/],
      [{ jsonrpc: '1.0', id: 5, method: 'ping' }, 400, -32600, 5, /^Invalid Request: jsonrpc: /],
      [{ jsonrpc: '2.0', id: null, method: 'ping' }, 400, -32600, null, /^Invalid Request: id: /],
      [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, 400, -32600, null, /^Invalid Request: id: /],
      [{ hello: 'world' }, 400, -32600, null, /^Invalid Request: /],
      ['x', 400, -32600, null, /^Invalid Request: message: /],
      [{ jsonrpc: '2.0', id: 6, result: 'not an object' }, 400, -32600, 6, /^Invalid Request: /],
      // An id JSON-RPC's numbers cannot hold exactly is not echoed as another number.
      [{ jsonrpc: '2.0', id: 12345678901234567890, method: 'ping' }, 400, -32600, null, /^Invalid Request: id: /],
      // A method this server has not is -32601 whatever its params, as the Server answers it.
      [{ jsonrpc: '2.0', id: 7, method: 'nope', params: 1 }, 200, -32601, 7, /^Method not found$/],
      [{ jsonrpc: '2.0', id: 8, method: '__proto__', params: 5 }, 200, -32601, 8, /^Method not found$/],
      // A key holding a line break or a direction override is escaped: the message stays one line, its words in order.
      [{ jsonrpc: '2.0', id: 9, method: 'ping', 'bad\nkey\u2028\u202e': 5 }, 400, -32600, 9, /^Invalid Request: message: Unrecognized key: "bad\\u\{a\}key\\u\{2028\}\\u\{202e\}"$/],
    ];
    for (const [message, status, code, id, words] of cases) {
      const response = await post(JSON.stringify(message), auth);
      const body = await response.json() as { jsonrpc: string; id: unknown; result?: unknown; error: { code: number; message: string } };
      const what = JSON.stringify(message);
      assert.equal(response.status, status, what);
      assert.deepEqual([body.jsonrpc, body.id, body.error.code, body.result], ['2.0', id, code, undefined], what);
      assert.match(body.error.message, words, what);
      assert.ok(body.error.message.length < 300 && !/[\n\u2028\u202e]/.test(body.error.message), body.error.message);
    }
  });

  test('a browser agent may post from its own origin: the preflight allows POST and the protocol header', async () => {
    const response = await fetch(mcp, { method: 'OPTIONS', headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' } });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.equal(response.headers.get('access-control-allow-methods'), 'POST');
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /Authorization.*Mcp-Protocol-Version/);
  });
});
