/**
 * "Quick starts per library" on /docs (issue 17), and "Connect an AI agent (MCP)" (issue 33): each
 * library's app and the agent under `examples/`, shown as they are in the repository, so the code
 * on the page is the code `npm test` runs end to end (test/examples/). Only the issuer, `npm
 * start`'s address, is replaced with this service's BASE_URL.
 */
import { readFileSync } from 'node:fs';
import { MCP_PROTOCOL_VERSIONS, MCP_TOOLS } from '../../core/api/mcp.js';
import { MCP_PATH } from '../../core/api/resource.js';
import { API_BASE_PATH } from '../../core/api/views.js';
import { type Html, html } from './html.js';

/** The issuer every example falls back to when ISSUER is unset: `npm start`'s address. */
export const EXAMPLE_DEFAULT_ISSUER = 'http://localhost:3000';

export interface Example {
  /** The folder under `examples/`, and the anchor `example-{name}`. */
  readonly name: string;
  readonly title: string;
  /** The anchor of the library in "Common errors per library". */
  readonly library: string;
  readonly type: 'confidential' | 'public';
  /** The files to save, in the order to read them. */
  readonly files: readonly string[];
  /** What `npm install` needs. */
  readonly packages: string;
  readonly port: number;
  /** Paths under the app's address to register. */
  readonly redirectPath: string;
  readonly postLogoutPath?: string;
  readonly backchannelPath?: string;
  /** One sentence: what the app shows, and how it signs out. */
  readonly does: string;
}

export const EXAMPLES: readonly Example[] = [
  {
    name: 'openid-client', title: 'openid-client (Node server)', library: 'lib-openid-client', type: 'confidential',
    files: ['server.mjs'], packages: 'openid-client jose', port: 4001,
    redirectPath: '/callback', postLogoutPath: '/signed-out', backchannelPath: '/backchannel-logout',
    does: 'Signs in with OpenID Connect and PKCE, reads /me and /me/posts, refreshes, revokes, signs out of Community through the end-session endpoint, and takes back-channel logouts verified with jose.',
  },
  {
    name: 'oidc-client-ts', title: 'oidc-client-ts (browser app)', library: 'lib-oidc-client-ts', type: 'public',
    files: ['app.js', 'index.html', 'server.mjs'], packages: 'oidc-client-ts', port: 4002,
    redirectPath: '/callback', postLogoutPath: '/signed-out',
    does: 'A single-page app with no server side: signs in with PKCE, reads /me and /me/posts from the page, refreshes, revokes and signs out with signoutRedirect(). server.mjs only serves the files and the library’s own browser build.',
  },
  {
    name: 'oauth4webapi-spa', title: 'oauth4webapi (browser app)', library: 'lib-oauth4webapi', type: 'public',
    files: ['app.js', 'index.html', 'server.mjs'], packages: 'oauth4webapi', port: 4003,
    redirectPath: '/callback', postLogoutPath: '/signed-out',
    does: 'A single-page app that imports oauth4webapi as an ES module (no bundler): signs in with PKCE, reads /me and /me/posts, refreshes, revokes and signs out through the end-session endpoint.',
  },
  {
    name: 'authjs', title: 'Auth.js (@auth/core, Node server)', library: 'lib-authjs', type: 'confidential',
    files: ['server.mjs'], packages: '@auth/core', port: 4004, redirectPath: '/auth/callback/community',
    does: 'An oidc provider with Auth.js’s own sign-in and sign-out pages; reads /me and /me/posts, refreshes and revokes as Auth.js’s “Refresh Token Rotation” guide does.',
  },
  {
    name: 'passport-oauth2', title: 'passport-oauth2 (Express)', library: 'lib-passport-oauth2', type: 'confidential',
    files: ['server.mjs'], packages: 'express express-session passport passport-oauth2', port: 4005, redirectPath: '/callback',
    does: 'Express with passport-oauth2, state and PKCE on; reads /me and /me/posts with the token in the Authorization header, refreshes and revokes.',
  },
  {
    name: 'arctic', title: 'arctic (Node server)', library: 'lib-arctic', type: 'confidential',
    files: ['server.mjs'], packages: 'arctic', port: 4006, redirectPath: '/callback',
    does: 'arctic’s generic OAuth2Client with PKCE: reads /me and /me/posts, refreshes and revokes.',
  },
  {
    name: 'simple-oauth2', title: 'simple-oauth2 (Node server)', library: 'lib-simple-oauth2', type: 'confidential',
    files: ['server.mjs'], packages: 'simple-oauth2', port: 4007, redirectPath: '/callback',
    does: 'simple-oauth2’s AuthorizationCode with PKCE: reads /me and /me/posts, refreshes and revokes both tokens.',
  },
];

const EXAMPLES_DIR = new URL('../../../examples/', import.meta.url);
const sources = new Map<string, string | undefined>();

/** A file of an example as the repository has it (read once), or `undefined` where the examples were not shipped. */
export function exampleSource(name: string, file: string): string | undefined {
  const key = `${name}/${file}`;
  if (!sources.has(key)) {
    try {
      sources.set(key, readFileSync(new URL(key, EXAMPLES_DIR), 'utf8'));
    } catch {
      sources.set(key, undefined);
    }
  }
  return sources.get(key);
}

/** The file as /docs shows it: the issuer (its default, and in the comments) is this service. */
export function shownSource(source: string, base: string): string {
  return source.replaceAll(EXAMPLE_DEFAULT_ISSUER, base);
}

/** The addresses to register, as code: copied as they are, and wrapped on a phone instead of widening the page. */
function registration(example: Example): Html {
  const app = `http://localhost:${example.port}`;
  const parts = [html`redirect URI <code>${app}${example.redirectPath}</code>`];
  if (example.postLogoutPath) parts.push(html`post-logout redirect URI <code>${app}${example.postLogoutPath}</code>`);
  if (example.backchannelPath) parts.push(html`back-channel logout URI <code>${app}${example.backchannelPath}</code>`);
  return html`${parts.map((part, i) => html`${i > 0 ? ', ' : ''}${part}`)}`;
}

export function exampleQuickStartsSection(base: string): Html {
  return html`<section id="quick-starts">
<h2>Quick starts per library</h2>
<p>One small, complete app per client library, each with the library's defaults and only the settings its own documentation
names. Each one is run against this service by our test suite on every change: it signs in through the real sign-in and consent
pages, asks for <code>profile:read</code> and <code>posts:read</code>, calls <code>/me</code> and <code>/me/posts</code>, refreshes, revokes and signs out. They are in the <code>examples/</code> folder of the service's
source, with a README; the issuer below is already this service.</p>
<ul class="links">
${EXAMPLES.map((example) => html`<li><a href="#example-${example.name}">${example.title}</a></li>`)}
</ul>
${EXAMPLES.map((example) => html`<h3 id="example-${example.name}">${example.title}</h3>
<p>${example.does} What to watch for: <a href="#${example.library}">common errors with this library</a>.</p>
<ol>
  <li>Register a <code>${example.type}</code> app under <a href="/settings/developers">Settings → Developer applications</a> with
    ${registration(example)}.</li>
  <li>In an empty folder: <code>npm install ${example.packages}</code>, and save ${example.files.map((file, i) => html`${i > 0 ? ', ' : ''}<code>${file}</code>`)} below.</li>
  <li>Run <code>CLIENT_ID=… ${example.type === 'confidential' ? 'CLIENT_SECRET=… ' : ''}node server.mjs</code> and open
    <code>http://localhost:${example.port}</code>.</li>
</ol>
${example.files.map((file) => {
    const source = exampleSource(example.name, file);
    return source === undefined
      ? html`<p><code>examples/${example.name}/${file}</code> is in the service's source.</p>`
      : html`<details><summary><code>${file}</code> (examples/${example.name}/${file})</summary>
<pre><code>${shownSource(source, base)}</code></pre>
</details>`;
  })}`)}
</section>`;
}

/** "Connect an AI agent (MCP)": an agent with the official MCP SDK's client, under `examples/` with the apps, tested the same way. */
export const AGENT_EXAMPLE = { name: 'mcp-agent', file: 'agent.mjs', packages: '@modelcontextprotocol/sdk' } as const;

/** The MCP server for agents (INTERFACE section 13): what it is, its tools, and the tested agent to copy. */
export function agentQuickStartSection(base: string): Html {
  const api = `${base}${API_BASE_PATH}`;
  const endpoint = `${base}${MCP_PATH}`;
  const source = exampleSource(AGENT_EXAMPLE.name, AGENT_EXAMPLE.file);
  return html`<section id="mcp">
<h2>Connect an AI agent (MCP)</h2>
<p>The API is also a <a href="https://modelcontextprotocol.io/">Model Context Protocol</a> server, so an AI agent can read a
user's profile and posts as tools: <code>POST ${endpoint}</code>, Streamable HTTP, protocol versions
${MCP_PROTOCOL_VERSIONS.map((version, i) => html`${i > 0 ? ' and ' : ''}<code>${version}</code>`)}, stateless (no session,
JSON answers). Its two tools only read, and answer exactly what the endpoints answer, in <code>structuredContent</code> and
as JSON text:</p>
<table>
<thead><tr><th scope="col">Tool</th><th scope="col">Arguments</th><th scope="col">Scope</th><th scope="col">Answers</th></tr></thead>
<tbody>
<tr><td><code>get_profile</code></td><td>none</td><td><code>${MCP_TOOLS.get_profile.scope}</code></td><td>the object of <a href="#get-me"><code>GET ${API_BASE_PATH}/me</code></a></td></tr>
<tr><td><code>list_posts</code></td><td><code>page</code>, <code>size</code>, as the query of <code>/me/posts</code></td><td><code>${MCP_TOOLS.list_posts.scope}</code></td><td>the page of <a href="#get-posts"><code>GET ${API_BASE_PATH}/me/posts</code></a></td></tr>
</tbody>
</table>
<p>Authenticate as for any API call: <code>Authorization: Bearer</code> with a personal token or an access token of your app
(DPoP-bound tokens with <code>Authorization: DPoP</code> and a proof). The per-token limit is the API's, one count for both.
A request without a token is answered <code>401</code> with
<code>WWW-Authenticate: Bearer resource_metadata="${base}/.well-known/oauth-protected-resource${MCP_PATH}"</code>: that
document (RFC 9728) names this service as the authorization server and the scopes, which is how an agent that does OAuth
itself finds its way. The tool list shows both tools whatever the token's scopes; calling one whose scope the token lacks is
<code>403</code> with <code>WWW-Authenticate: Bearer error="insufficient_scope", scope="…"</code>, naming the scope the tool needs
(RFC 6750 3.1), so the agent knows what to ask the user for: it authorizes again with the scopes it holds and the one named.
A refresh cannot widen a grant (RFC 6749 6): the MCP TypeScript SDK, holding a refresh token, refreshes first and then stops
with <code>Server returned 403 after trying upscoping</code>, so such an agent clears its tokens and starts the
authorization again with both scopes. Arguments the API would refuse (<code>page: -1</code>) come back as a tool error (<code>isError</code>) whose
text is the API's error JSON, for the model to read and correct. An app that wants a token for the agent alone names
<code>resource=${endpoint}</code> at the authorization and token endpoints: such a token is refused by <code>${api}</code>,
and one issued for <code>${api}</code> alone is refused here.</p>
<ol>
  <li>Create a personal token under <a href="/settings/tokens">Settings → API tokens</a> with <code>profile:read</code> and
    <code>posts:read</code>.</li>
  <li>In an empty folder: <code>npm install ${AGENT_EXAMPLE.packages}</code>, and save <code>${AGENT_EXAMPLE.file}</code> below.</li>
  <li>Run <code>ACCESS_TOKEN=svcp_… node ${AGENT_EXAMPLE.file}</code>: it lists the tools and prints what each answers.</li>
</ol>
${source === undefined
    ? html`<p><code>examples/${AGENT_EXAMPLE.name}/${AGENT_EXAMPLE.file}</code> is in the service's source.</p>`
    : html`<details><summary><code>${AGENT_EXAMPLE.file}</code> (examples/${AGENT_EXAMPLE.name}/${AGENT_EXAMPLE.file})</summary>
<pre><code>${shownSource(source, base)}</code></pre>
</details>`}
<p>An agent app that connects to remote MCP servers needs the same two things: the address <code>${endpoint}</code> and the
header <code>Authorization: Bearer svcp_…</code>.</p>
</section>`;
}
