/**
 * The developer documentation at /docs: everything an app developer needs to integrate in an
 * afternoon. Example answers are produced by the same core functions the API answers with,
 * so they show exactly the fields the API sends.
 */
import { API_WINDOW_SECONDS, MIN_FAILURES_PER_ADDRESS, RETRY_AFTER_SECONDS } from '../../core/api/limits.js';
import { API_REALM, BEARER_REFUSALS } from '../../core/api/bearer.js';
import { CLIENT_AUTH_CHECKS_AT_ONCE, CLIENT_AUTH_CHECKS_WAITING, CLIENT_AUTH_WINDOW_SECONDS } from '../../core/oauth/endpoint-limits.js';
import { DPOP_ALGS } from '../../core/oauth/dpop/proof.js';
import { SELF_REGISTERED_GRACE_MS } from '../../core/oauth/dynamic-registration.js';
import type { User } from '../../core/accounts/ports.js';
import type { PostSummary } from '../../core/community/ports.js';
import { DELIVERY_MAX_AGE_MS, SEND_TIMEOUT_MS } from '../../core/oidc/logout/delivery.js';
import { BACKCHANNEL_LOGOUT_EVENT, LOGOUT_TOKEN_LIFETIME_SECONDS } from '../../core/oidc/logout-token.js';
import { LEAK_REPORTS_PER_ADDRESS, MAX_REPORTED_CREDENTIALS } from '../../core/credentials/leaked-credentials.js';
import { DEFAULT_PERSONAL_TOKEN_DAYS } from '../../core/credentials/personal-tokens.js';
import { EXCERPT_MAX_LENGTH, excerpt } from '../../core/community/posts.js';
import {
  API_BASE_PATH, API_ENDPOINTS, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, postItemOf, profileOf, serviceInfo,
} from '../../core/api/views.js';
import { mcpResource, resourceMetadataUrl } from '../../core/api/resource.js';
import { RESOURCE_SCOPES, SCOPES } from '../../core/oauth/scopes.js';
import { siteUrls } from '../../core/urls.js';
import type { Settings } from '../../config/settings.js';
import { agentQuickStartSection, exampleQuickStartsSection } from './docs-examples.js';
import { libraryErrorsSection } from './docs-libraries.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';

const CREATED = Date.UTC(2026, 10, 22, 0, 30, 48);

const SAMPLE_USER: User = {
  id: 42, username: 'ada', nickname: 'Ada Lovelace', language: null, timeZone: null, status: 'active', bio: 'Writes about gardens and compilers.', member: true, level: 7, xp: 1280,
  createdAt: CREATED, updatedAt: CREATED, statusChangedAt: CREATED,
};

const SAMPLE_BODY = '## Still growing\n\nThe **greenhouse** kept them warm. Here is what I changed this year, and what I would do differently next spring when the seedlings go out again.';

const SAMPLE_POST: PostSummary = {
  id: 1001, authorId: 42, authorUsername: 'ada', authorNickname: 'Ada Lovelace', categoryId: 3, categoryName: 'Gardening',
  title: 'Tomatoes in November', status: 'published', likeCount: 12, commentCount: 3, viewCount: 240,
  excerpt: excerpt(SAMPLE_BODY), createdAt: CREATED + 86_400_000, updatedAt: CREATED + 86_400_000,
};

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

function code(text: string): Html {
  return html`<pre><code>${text}</code></pre>`;
}

/** A table of errors, by endpoint family. */
const API_ERRORS: Array<[string, number, string, string]> = [
  ['invalid_token', 401, 'No token, or a token that is malformed, unknown, expired or revoked, or whose account cannot be used (suspended, banned, deleted). A deactivated app and withdrawn consent also end its tokens. A token in the query string or a form body is not read, and a refresh token or id_token is not an access token.', 'Send the access token as Authorization: Bearer. Refresh, or send the user through authorization again; not for an account that is not active (its error_description says so): no authorization works until the site\'s staff make it active again.'],
  ['insufficient_scope', 403, 'The token lacks the scope the endpoint needs; WWW-Authenticate names it.', 'Ask for the scope in the authorization request (the user sees it on the consent page).'],
  ['invalid_request', 400, 'A query parameter is malformed, e.g. page=-1 or size=abc.', 'Fix the request.'],
  ['rate_limited', 429, `More than the per-token limit in one minute. Retry-After: ${RETRY_AFTER_SECONDS}.`, 'Wait, then retry. Spread requests out.'],
  ['not_found', 404, 'No such endpoint under /api/open/v1.', 'Check the path (see GET /api/open/v1/).'],
];

/** The table of contents: each section's anchor and its title in the catalogs. */
const CONTENTS: ReadonlyArray<{ id: string; key: string }> = [
  { id: 'quick-start', key: 'docs.quickStart' },
  { id: 'quick-starts', key: 'docs.quickStarts' },
  { id: 'mcp', key: 'docs.connectAgent' },
  { id: 'register', key: 'docs.register' },
  { id: 'authorize', key: 'docs.authorize' },
  { id: 'par', key: 'docs.par' },
  { id: 'token', key: 'docs.token' },
  { id: 'refresh', key: 'docs.refresh' },
  { id: 'revoke', key: 'docs.revoke' },
  { id: 'dpop', key: 'docs.dpop' },
  { id: 'openid', key: 'docs.openid' },
  { id: 'logout', key: 'docs.logout' },
  { id: 'personal', key: 'docs.personal' },
  { id: 'leaked', key: 'docs.leaked' },
  { id: 'scopes', key: 'docs.scopes' },
  { id: 'endpoints', key: 'docs.endpoints' },
  { id: 'errors', key: 'docs.errors' },
  { id: 'library-errors', key: 'docs.libraryErrors' },
  { id: 'limits', key: 'docs.limits' },
];

/** Apps named by their own metadata document (INTERFACE section 13), as MCP clients are: no registration at all. */
function clientMetadataDocumentsPart(settings: Settings): Html {
  const documentUrl = 'https://agent.example/oauth/client.json';
  const example = {
    client_id: documentUrl, client_name: 'Example Agent', client_uri: 'https://agent.example',
    redirect_uris: ['http://127.0.0.1/callback', 'https://agent.example/callback'], token_endpoint_auth_method: 'none',
  };
  const hosts = settings.clientMetadata.hosts;
  return html`<p id="client-id-metadata-documents"><strong>Apps named by their own metadata document</strong> (Client ID
Metadata Documents, how MCP clients name themselves): an app needs no registration at all when its <code>client_id</code>
is the https URL, with a path, of a JSON document it publishes. Discovery says <code>client_id_metadata_document_supported</code>.
For <code>client_id=${documentUrl}</code>, that URL serves:</p>
${code(JSON.stringify(example, null, 2))}
<p>The document's <code>client_id</code> must be its own URL, exactly; <code>redirect_uris</code> follow the rules above and
are matched exactly; <code>client_name</code> follows a self-registered app's rules; <code>token_endpoint_auth_method</code> is
<code>none</code> or left out: the app is public, and uses PKCE. It is fetched when the app first asks, from a public address,
following no redirect, within 5 seconds and at most 5 KB, and kept as its <code>Cache-Control</code> says (5 minutes to
24 hours)${hosts === undefined ? '' : html`, from ${hosts.map((host, i) => html`${i > 0 ? ', ' : ''}<code>${host}</code>`)} only`}.
A document that cannot be read or breaks a rule gets the error page, never a redirect. The consent page names the
document's host. With the MCP TypeScript SDK, give the <code>OAuthClientProvider</code> a <code>clientMetadataUrl</code>:
it is used instead of registering, and no per-address limit of registrations applies.</p>`;
}

export function docsPage(context: PageContext, settings: Settings): Html {
  const base = settings.baseUrl;
  const api = `${base}${API_BASE_PATH}`;
  const urls = siteUrls(base);
  const perMinute = settings.rateLimitPerMinute;
  const resetExample = Math.floor(CREATED / 1000 / 60) * 60 + 60;
  const postsExample = {
    items: [postItemOf(SAMPLE_POST, urls)],
    page: 0,
    size: DEFAULT_PAGE_SIZE,
    totalElements: 1,
    totalPages: 1,
  };
  // INTERFACE section 2: a rotated secret fails at once, unless the operator keeps it (PREVIOUS_CLIENT_SECRET_HOURS).
  const keptHours = settings.previousClientSecretHours;
  const rotatedSecret = keptHours === 0
    ? html`The old one stops working at once (a request with it gets <code>invalid_client</code>), so put the new one on
your servers right away.`
    : html`The old one keeps working for ${keptHours} hours, so you can put the new one on every server without downtime;
the page shows when it stops, and "Delete old secret" ends it at once (do that straight away if the old one may have
leaked). Rotating again ends the old one at once.`;
  const rateHeaders = `X-RateLimit-Limit: ${perMinute}\nX-RateLimit-Remaining: ${perMinute - 1}\nX-RateLimit-Reset: ${resetExample}`;

  const { t } = context;
  // INTERFACE section 12: the navigation speaks the reader's language; the body is English, and
  // says so, so a screen reader reads it in an English voice.
  // data-copy-*: public/copy.js puts a Copy button, in the reader's words, on every code block.
  return layout(t.text('docs.title'), context, html`<article class="docs" data-copy-code data-copy-label="${t.text('settings.copy')}" data-copied-label="${t.text('settings.copied')}" data-copy-failed="${t.text('settings.copyFailed')}">
<h1>${t.text('docs.title')}</h1>
${t.locale === 'en' ? '' : html`<p class="notice">${t.text('docs.englishOnly')}</p>`}
<div lang="en">
<p>Let people sign in to your app with their Community account, and read their profile and published
posts with the read-only API. This page takes you from nothing to a working integration. The machine-readable
description of the API is at <a href="${API_BASE_PATH}/openapi.json"><code>${api}/openapi.json</code></a> (OpenAPI 3.1);
the <a href="/docs/api">API reference</a> shows it as a page.</p>
</div>

<div class="docs-body">
<nav class="toc card" aria-label="${t.text('docs.onThisPage')}">
<h2>${t.text('docs.onThisPage')}</h2>
<ol>
  ${CONTENTS.map(({ id, key }) => html`<li><a href="#${id}">${t.text(key)}</a></li>`)}
</ol>
</nav>

<div lang="en" class="docs-content">
<section id="quick-start">
<h2>Quick start</h2>
<ol>
  <li>Register an app and note its <code>client_id</code> (and <code>client_secret</code> if it is confidential).</li>
  <li>Send the user's browser to <code>${base}/oauth/authorize</code> with <code>response_type=code</code>, your
    <code>redirect_uri</code>, the <code>scope</code> you need (<code>profile:read</code> for the profile,
    <code>posts:read</code> for the posts), a random <code>state</code> and a PKCE <code>code_challenge</code>.</li>
  <li>On your redirect URI, check <code>state</code>, then POST the <code>code</code> and your <code>code_verifier</code> to
    <code>${base}/api/oauth/token</code>.</li>
  <li>Call the API with <code>Authorization: Bearer &lt;access_token&gt;</code>: <code>GET ${api}/me</code> for the profile,
    <code>GET ${api}/me/posts</code> for the published posts.</li>
  <li>When the access token expires (after ${settings.accessTokenTtlSeconds} seconds), refresh it and <strong>store the new refresh token</strong>.</li>
</ol>
<p>Every address below is absolute under <code>${base}</code>. All token-endpoint requests use
<code>Content-Type: application/x-www-form-urlencoded</code>; every answer is JSON.</p>
<p>Using a client library? Start from its <a href="#quick-starts">quick start</a>: a complete app, tested against this service.</p>
<p>Building an AI agent? <a href="#mcp">Connect it through MCP</a>: the same API as tools, with the same tokens.</p>
</section>

${exampleQuickStartsSection(base)}

${agentQuickStartSection(base)}

<section id="register">
<h2>Register your app</h2>
<p>Sign in and open <a href="/settings/developers">Settings → Developer applications</a>
(<code>${base}/settings/developers</code>). Give the app a name, homepage and one or more redirect URIs, and choose its type:</p>
<table>
<thead><tr><th scope="col">Type</th><th scope="col">Use it for</th><th scope="col">Authenticates with</th></tr></thead>
<tbody>
<tr><td><code>confidential</code></td><td>A server-side app that can keep a secret.</td><td><code>client_id</code> + <code>client_secret</code> (in the form body, or HTTP Basic). PKCE recommended.</td></tr>
<tr><td><code>public</code></td><td>A browser-only or mobile app. It cannot keep a secret.</td><td><code>client_id</code> only. PKCE is required.</td></tr>
</tbody>
</table>
<p>The client secret (<code>svcs_…</code>) is shown once, on the app's page right after registering (a Copy button
beside it; reloading the page does not show it again). Keep it on your server only; never ship it to a browser or an app
store. "Rotate secret" on the same page asks first, then shows the new secret once. ${rotatedSecret}
The page also shows the issuer and the discovery address to give your library, with Copy buttons. Deactivating an app also asks first, and
ends every token it holds. An operator can also register an app from the command line:</p>
${code(`npm run --silent svc -- client create --name "My App" --type confidential \\
  --redirect-uri https://myapp.example/callback --homepage https://myapp.example --json`)}
<p><strong>Browser-only apps</strong> (a single-page app with no server of its own) register as <code>public</code> and
call the token, revocation, UserInfo and API endpoints straight from the page: they answer CORS for any origin, without
credentials (never send cookies with <code>credentials: 'include'</code>; the browser would refuse the answer). Discovery
and the key set answer CORS too.</p>
<p>Redirect URIs are compared as exact strings (scheme, host, port, path and query), with no normalisation.
They must be https, or http on a loopback address for local development. For a registered
<code>http://127.0.0.1/…</code> or <code>http://[::1]/…</code> URI any port is accepted (RFC 8252, for native apps).</p>
${settings.dynamicRegistration ? html`<p id="dynamic-registration"><strong>Apps and agents that register themselves</strong> (RFC 7591): POST the app's
metadata as JSON to <code>${base}/api/oauth/register</code> (discovery's <code>registration_endpoint</code>) and get a
<code>client_id</code>, and a <code>client_secret</code> unless <code>token_endpoint_auth_method</code> is <code>none</code>, at once:</p>
${code(`curl -s ${base}/api/oauth/register -H 'Content-Type: application/json' \
  -d '{"client_name": "My agent", "redirect_uris": ["http://127.0.0.1:33418/callback"], "token_endpoint_auth_method": "none"}'`)}
<p>The redirect URIs follow the rules above. Such an app has no owner and no page under Settings; its consent page tells
the user that it registered itself and that this site has not reviewed it; it is deleted when no one has authorized it
${SELF_REGISTERED_GRACE_MS / 86_400_000} days after it registered, unless the site's staff have verified it. Its <code>client_name</code> may not claim
this site's trust: no check mark, no word such as Verified or Official (官方, 认证), not the site's own name alone or with words that make it the site's own service. Each address (an IPv6 address by its /48) may register ${settings.registrationsPerHourPerAddress} apps an hour, counted apart for browsers (requests with <code>Origin</code>) and other programs. Errors are 400
<code>invalid_redirect_uri</code> or <code>invalid_client_metadata</code> with an <code>error_description</code> naming the field.</p>` : ''}
${settings.clientMetadata.enabled ? clientMetadataDocumentsPart(settings) : ''}
</section>

<section id="authorize">
<h2>Send the user to authorize (with PKCE)</h2>
<p>Make a random <code>code_verifier</code> (43 to 128 characters) and its <code>S256</code> challenge, and a random
<code>state</code>. Keep both in the user's session on your side. In Node:</p>
${code(`import { createHash, randomBytes } from 'node:crypto';
const codeVerifier = randomBytes(32).toString('base64url');
const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
const state = randomBytes(16).toString('base64url');`)}
<p>Then redirect the browser to:</p>
${code(`${base}/oauth/authorize?response_type=code
  &client_id=YOUR_CLIENT_ID
  &redirect_uri=https%3A%2F%2Fmyapp.example%2Fcallback
  &scope=profile%3Aread%20posts%3Aread
  &state=RANDOM_STATE
  &code_challenge=CODE_CHALLENGE
  &code_challenge_method=S256`)}
<table>
<thead><tr><th scope="col">Parameter</th><th scope="col">Required</th><th scope="col">Value</th></tr></thead>
<tbody>
<tr><td><code>response_type</code></td><td>yes</td><td><code>code</code></td></tr>
<tr><td><code>client_id</code></td><td>yes</td><td>Your app's identifier.</td></tr>
<tr><td><code>redirect_uri</code></td><td>yes</td><td>Exactly one of the registered redirect URIs.</td></tr>
<tr><td><code>scope</code></td><td>yes</td><td>Space-separated: <code>profile:read</code>, <code>posts:read</code>, and <code>openid</code> to sign in (with <code>profile</code>, <code>offline_access</code>; see <a href="#scopes">Scopes</a>).</td></tr>
<tr><td><code>state</code></td><td>yes, unless you send a <code>code_challenge</code></td><td>Random; comes back unchanged. Check it, against CSRF. With PKCE it may be left out (RFC 9700 2.1.1): the answer then has no <code>state</code>.</td></tr>
<tr><td><code>code_challenge</code></td><td>public apps: yes</td><td>The PKCE challenge.</td></tr>
<tr><td><code>code_challenge_method</code></td><td>with a challenge</td><td><code>S256</code> (the only method accepted).</td></tr>
<tr><td><code>nonce</code></td><td>with <code>openid</code>, unless you send a <code>code_challenge</code></td><td>Random; comes back inside the id_token. With PKCE it may be left out: the id_token then has no <code>nonce</code>.</td></tr>
<tr><td><code>prompt</code>, <code>max_age</code>, <code>login_hint</code></td><td>no</td><td>OpenID Connect: <code>prompt=none|login|consent</code>.</td></tr>
<tr><td><code>id_token_hint</code></td><td>no</td><td>An id_token you got: if someone else is signed in, the answer is <code>error=login_required</code>, never a code for them.</td></tr>
<tr><td><code>response_mode</code></td><td>no</td><td><code>query</code> (the default) or <code>form_post</code>: the answer is then posted to your redirect URI as a form (<code>code</code>, <code>state</code>, <code>iss</code>, or the error fields) instead of being in its address, so your callback must take a POST, and your own cookies need <code>SameSite=None</code> to come with it. Not for an app's own scheme.</td></tr>
<tr><td><code>resource</code></td><td>no</td><td>The API's identifier, <code>${api}</code>, or its MCP server's, <code>${mcpResource(base)}</code> (RFC 8707; see <a href="#mcp">Connect an AI agent</a>): the only two resources tokens are issued for. Any other value, or both at once, is refused with <code>invalid_target</code>. Without it the token is good at both, and at UserInfo with <code>openid</code>; introspection shows as <code>aud</code> the resource named, else the API. With it, the token is for that resource <em>alone</em>: the other one and UserInfo refuse it, so leave it out if your app also reads UserInfo.</td></tr>
</tbody>
</table>
<p>The user signs in if needed and sees a consent page naming your app and each scope. The sign-in page names your app
too (“Sign in to continue to <em>your app's registered name</em>”), and someone without an account can create one
there and comes straight on to your consent page: you need no sign-up link of your own. Consent is remembered, so a later
request for the same scopes goes straight back to you. The browser then returns to your redirect URI:</p>
${code(`https://myapp.example/callback?code=AUTHORIZATION_CODE&state=RANDOM_STATE&iss=${encodeURIComponent(base)}`)}
<p>Check that <code>state</code> is yours and <code>iss</code> is <code>${base}</code> (RFC 9207). On refusal or an error
you get <code>error</code>, <code>error_description</code>, <code>state</code> and <code>iss</code> instead, e.g.
<code>error=access_denied</code> or <code>error=invalid_scope</code>. An unknown <code>client_id</code> or an unregistered
<code>redirect_uri</code> is never redirected: the user sees an error page. Until this site's staff verify an app registered
under Settings or by itself, its errors other than the user's own refusal are shown on that page too, to anyone who has not
authorized the app yet (you, its owner, get them at your redirect URI): otherwise anyone could register an app and use this
site's address to send people anywhere (RFC 9700 4.11.2).</p>
</section>

<section id="par">
<h2>Pushed authorization requests</h2>
<p>Instead of putting the parameters in the browser's address, your app can push them first, from its server, to
<code>${base}/api/oauth/par</code> (RFC 9126), with the same client authentication as the token endpoint (a public app
sends its <code>client_id</code> alone). They are checked at once, and nobody can change them on the way.</p>
${code(`curl -X POST ${base}/api/oauth/par \
  -d response_type=code \
  -d client_id=YOUR_CLIENT_ID \
  -d client_secret=YOUR_CLIENT_SECRET \
  -d redirect_uri=https://myapp.example/callback \
  -d scope="profile:read posts:read" \
  -d state=RANDOM_STATE \
  -d code_challenge=CODE_CHALLENGE \
  -d code_challenge_method=S256`)}
<p>The answer is <code>201</code>:</p>
${code(json({ request_uri: 'urn:ietf:params:oauth:request_uri:…', expires_in: 60 }))}
<p>Then send the browser to <code>${base}/oauth/authorize?client_id=YOUR_CLIENT_ID&amp;request_uri=…</code> with nothing
else: the rest of the flow is the same. A <code>request_uri</code> works once, within 60 seconds, for your app only;
push a new one for every authorization. Errors come back from the PAR endpoint as JSON
(<code>invalid_client</code>, <code>invalid_request</code>, <code>invalid_scope</code>, <code>invalid_target</code>,
<code>request_not_supported</code> for a <code>request</code> object). Libraries do it for you: openid-client's
<code>buildAuthorizationUrlWithPAR</code>, oauth4webapi's <code>pushedAuthorizationRequest</code>; they find the endpoint
in discovery (<code>pushed_authorization_request_endpoint</code>). Past the <a href="#limits">limit on pushes</a>
the answer is <code>429</code> <code>rate_limited</code> with <code>Retry-After</code>. Under Settings → Developer applications you can
<strong>require</strong> pushed requests for your app: any authorization request for it that was not pushed is then
refused with <code>invalid_request</code>.</p>
</section>

<section id="token">
<h2>Exchange the code for tokens</h2>
<p>The code is valid for ${settings.codeTtlSeconds / 60} minutes and can be redeemed once. Redeeming it a second
time fails with <code>invalid_grant</code> <em>and</em> revokes every token the first exchange produced.</p>
${code(`curl -X POST ${base}/api/oauth/token \\
  -d grant_type=authorization_code \\
  -d code=AUTHORIZATION_CODE \\
  -d redirect_uri=https://myapp.example/callback \\
  -d client_id=YOUR_CLIENT_ID \\
  -d client_secret=YOUR_CLIENT_SECRET \\
  -d code_verifier=CODE_VERIFIER`)}
<p>A public app leaves out <code>client_secret</code>. The answer:</p>
${code(json({
  access_token: 'svco_…',
  token_type: 'Bearer',
  expires_in: settings.accessTokenTtlSeconds,
  refresh_token: 'svcr_…',
  scope: 'profile:read posts:read',
}))}
<p>Access tokens (<code>svco_…</code>) live ${settings.accessTokenTtlSeconds} seconds; refresh tokens
(<code>svcr_…</code>) ${Math.round(settings.refreshTokenTtlSeconds / 86_400)} days. Treat both as opaque strings and
keep them server-side. The token endpoint answers errors as <code>{"error", "error_description"}</code>:
<code>invalid_client</code> (401: wrong secret, a rotated one${keptHours === 0 ? '' : ` past its ${keptHours} hours or deleted`}, app deactivated), <code>invalid_grant</code> (400: code
expired or used, wrong <code>code_verifier</code> or <code>redirect_uri</code>, refresh token no longer valid),
<code>invalid_request</code> (400: a field missing), <code>unsupported_grant_type</code> (400) and
<code>rate_limited</code> (429, with <code>Retry-After</code>: too many failed client authentications, or too many at once, see
<a href="#limits">Limits</a>).</p>
</section>

<section id="refresh">
<h2>Refresh tokens (rotation)</h2>
${code(`curl -X POST ${base}/api/oauth/token \\
  -d grant_type=refresh_token \\
  -d refresh_token=svcr_… \\
  -d client_id=YOUR_CLIENT_ID \\
  -d client_secret=YOUR_CLIENT_SECRET`)}
<p>The answer has the same shape as the code exchange, with a <strong>new refresh token</strong>. Store it and drop the
old one: every refresh replaces the refresh token it used, at once, and the old one is then invalid. Presented again
(two tabs refreshing together, a retry after an answer lost on the network, or a thief), it fails with
<code>invalid_grant</code> and revokes the whole family of tokens of that authorization, so the user has to authorize
again. Refresh from one place at a time: a single-page app serialises its refreshes (oidc-client-ts does), a server
app holds a lock per user.</p>
${settings.refreshReplaySeconds > 0 ? html`<p>This deployment opens a replay window of ${settings.refreshReplaySeconds} seconds for
confidential apps (authenticated with their secret) and DPoP-bound tokens (with a proof of their key): within it, while
the new refresh token is unused, the old one presented again gets <strong>the same answer again</strong> (the same
tokens, <code>expires_in</code> counted from the first answer), never a second pair. A public app's bearer refresh
token never gets it.</p>
` : ''}</section>

<section id="revoke">
<h2>Revoke and introspect tokens</h2>
<p>When the user signs out of your app or disconnects it, revoke the refresh token (RFC 7009). That also ends the
access tokens of the same authorization.</p>
${code(`curl -X POST ${base}/api/oauth/revoke \\
  -d token=svcr_… \\
  -d client_id=YOUR_CLIENT_ID \\
  -d client_secret=YOUR_CLIENT_SECRET`)}
<p>The answer is <code>200</code> with the JSON body <code>{}</code>, also for a token that is unknown or already revoked.
To ask whether a token of your app is still active (RFC 7662), POST it to <code>${base}/api/oauth/introspect</code>
with the same client authentication; the answer is JSON with <code>active</code> (true or false) and, for an active
token, its details such as <code>scope</code>, <code>client_id</code> and <code>exp</code>.</p>
<p>When the user withdraws consent under Settings → Authorized applications, or their account is suspended, banned or
deleted, every token your app holds for them stops working at once: the API answers <code>401 invalid_token</code>.
Discard your local tokens and ask the user to authorize again, unless the account is not active, which the
<code>error_description</code> says (<q>${BEARER_REFUSALS.unusableAccount.description}</q>): such a user cannot sign in,
so asking again cannot help until the site's staff make the account active again.</p>
</section>

<section id="dpop">
<h2>Sender-constrained tokens (DPoP)</h2>
<p>A token that leaks (a log, a proxy, a compromised browser extension) works for whoever holds it. With DPoP
(RFC 9449) your app proves a private key it keeps with every request, and its tokens work only with that key.
Send a <code>DPoP</code> header with a proof (a JWT signed with your key: <code>typ</code> <code>dpop+jwt</code>,
the public key as <code>jwk</code>, <code>htm</code>, <code>htu</code>, <code>iat</code>, a new <code>jti</code>) to the
token endpoint, and the answer says <code>"token_type": "DPoP"</code>: both tokens are bound to your key. Then call the API
and UserInfo with <code>Authorization: DPoP &lt;token&gt;</code> and a new proof that also carries <code>ath</code> (the
base64url SHA-256 of the access token); sent as <code>Bearer</code>, a bound token is refused. A bound refresh token
refreshes only with a proof of the same key, and it still rotates. Without a proof everything stays Bearer.</p>
<p>Keys: ${DPOP_ALGS.map((alg, i) => html`${i > 0 ? ', ' : ''}<code>${alg}</code>`)} (metadata
<code>dpop_signing_alg_values_supported</code>). This server always asks for a <strong>nonce</strong>: the first proof
gets <code>400 {"error":"use_dpop_nonce"}</code> (the API: <code>401</code> with
<code>WWW-Authenticate: DPoP error="use_dpop_nonce"</code>) and a <code>DPoP-Nonce</code> header; make the proof again
with that <code>nonce</code> claim. Later answers bring a newer nonce in <code>DPoP-Nonce</code> when it rotates (every
minute; each lives three). openid-client retries by itself; with oauth4webapi, retry once when
<code>isDPoPNonceError(error)</code> is true. To bind the code too, send <code>dpop_jkt</code> (your key's RFC 7638
thumbprint) in the authorization request, or send a DPoP proof with a pushed request (as openid-client does).</p>
${code(`// openid-client v6
const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair());
const tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier }, undefined, { DPoP });
const me = await client.fetchProtectedResource(config, tokens.access_token,
  new URL('${api}/me'), 'GET', undefined, undefined, { DPoP });`)}
</section>

<section id="openid">
<h2>Sign users in with OpenID Connect</h2>
<p>To only sign users in, add <code>openid</code> to the scope and send a random <code>nonce</code> (required with
<code>openid</code> unless the request carries a PKCE <code>code_challenge</code>). The token response then also has an <code>id_token</code>: a JWT signed with RS256 (or ES256 if
your app was registered for it) carrying <code>iss</code>, <code>sub</code> (the user id as a string), <code>aud</code>
(your <code>client_id</code>), <code>azp</code>, <code>exp</code>, <code>iat</code>, <code>auth_time</code>,
<code>nonce</code>, <code>at_hash</code> and <code>sid</code> (the sign-in here it came from; see <a href="#logout">Sign users out</a>); with <code>profile:read</code> or <code>profile</code> also <code>preferred_username</code> (the username),
<code>name</code> (the nickname, in any script: not unique, so tell users apart by <code>sub</code>), <code>picture</code>, <code>profile</code>,
<code>locale</code> (the language the user chose, when they chose one) and <code>zoneinfo</code> (their time zone, else the site's).</p>
<p>Verify it offline: check the signature against the keys at <a href="/.well-known/jwks.json"><code>${base}/.well-known/jwks.json</code></a>,
that <code>iss</code> is <code>${base}</code>, <code>aud</code> is your <code>client_id</code>, <code>exp</code> is in
the future and <code>nonce</code> is the one you sent. Any OpenID Connect library does this for you from the discovery
document at <a href="/.well-known/openid-configuration"><code>${base}/.well-known/openid-configuration</code></a>
(also at <code>/.well-known/oauth-authorization-server</code>). Key sets are rotated; cache them by <code>kid</code> and
fetch again when you meet a new one.</p>
<p>With the access token, <code>GET</code> or <code>POST ${base}/api/oauth/userinfo</code> answers the same claims as
JSON (the token needs <code>openid</code>; without it the answer is <code>403 insufficient_scope</code>).</p>
${code(`curl ${base}/api/oauth/userinfo -H "Authorization: Bearer svco_…"`)}
</section>

<section id="logout">
<h2>Sign users out</h2>
<p>Two standards, both optional, both named in the discovery document: your app can sign the person out of Community
too when they sign out of your app (<em>RP-Initiated Logout</em>, <code>end_session_endpoint</code>), and Community can tell
your app when the person signs out here or takes your app's access away (<em>Back-Channel Logout</em>). Register the
addresses they need on your app's page under <a href="/settings/developers">Settings → Developer applications</a>
(“Sign-out”), or with <code>--post-logout-redirect-uri</code> and <code>--backchannel-logout-uri</code> on the command line.</p>

<h3 id="logout-redirect">Sign the person out of Community too</h3>
<p>After ending your own session, send the browser to <code>${base}/oauth/logout</code> (GET, or a form POST):</p>
${code(`${base}/oauth/logout?id_token_hint=ID_TOKEN
  &post_logout_redirect_uri=https%3A%2F%2Fmyapp.example%2Fsigned-out
  &state=RANDOM_STATE`)}
<table>
<thead><tr><th scope="col">Parameter</th><th scope="col">Value</th></tr></thead>
<tbody>
<tr><td><code>id_token_hint</code></td><td>The id_token you got for this person. With it, and when the person is still signed in here in the same session it came from, they are signed out at once. Without it (or for someone else, or from an earlier sign-in) they are asked first. It is also what lets us send the browser back to you: <strong>without it, there is no redirect</strong>. An expired id_token is fine; one that was altered or not issued by us is refused with an error page.</td></tr>
<tr><td><code>client_id</code></td><td>Your app's identifier; needed when you send no <code>id_token_hint</code>. With one, it must be the id_token's audience.</td></tr>
<tr><td><code>post_logout_redirect_uri</code></td><td>One of your registered post-logout redirect URIs, matched exactly like redirect URIs, sent with an <code>id_token_hint</code> issued to your app (RP-Initiated Logout 1.0 section 3). Any other value, or no hint, is never redirected to: the person sees a “you are signed out” page here instead, with a link to your app's homepage.</td></tr>
<tr><td><code>state</code></td><td>Random; comes back unchanged on the redirect. Check it.</td></tr>
</tbody>
</table>
<p>The browser then returns to <code>https://myapp.example/signed-out?state=RANDOM_STATE</code>. Libraries build this for you:
openid-client's <code>buildEndSessionUrl()</code>, oidc-client-ts's <code>signoutRedirect()</code>:</p>
${code(`import * as client from 'openid-client';
const url = client.buildEndSessionUrl(config, {
  id_token_hint: idToken,
  post_logout_redirect_uri: 'https://myapp.example/signed-out',
  state,
});
// end your own session, then redirect the browser to url.href`)}

<h3 id="logout-backchannel">Be told when the person signs out here</h3>
<p>With a back-channel logout URI registered (https; http on 127.0.0.1, [::1] or localhost while developing; no
fragment), Community POSTs <code>application/x-www-form-urlencoded</code> with one field, <code>logout_token</code>, when:</p>
<ul>
  <li>the person signs out of Community (every app they still have access with is told, with the <code>sid</code> of that sign-in);</li>
  <li>they withdraw your app's access under Settings → Authorized applications, or their account is suspended, banned or deleted
    (no <code>sid</code>: end every session of that person);</li>
  <li>your app revokes its refresh token, presents a rotated refresh token again, or a code twice (the authorization that ended).</li>
</ul>
<p>A deactivated app is told nothing. The logout token is a JWT signed like your id_tokens (same keys, same algorithm), with the
header <code>typ: logout+jwt</code> and these claims:</p>
${code(json({
  iss: base,
  aud: 'YOUR_CLIENT_ID',
  iat: 1795000000,
  exp: 1795000000 + LOGOUT_TOKEN_LIFETIME_SECONDS,
  jti: 'unique per logout, the same on every retry',
  sub: '42',
  sid: 'the sid claim of the id_tokens of that sign-in',
  events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
}))}
<p>Verify it as you verify an id_token: the signature against <code>${base}/.well-known/jwks.json</code>, <code>iss</code>, <code>aud</code>,
<code>typ</code>, that <code>events</code> holds the back-channel logout event and that there is no <code>nonce</code>; refuse a
<code>jti</code> you have already taken. Then end your sessions whose id_token had that <code>sid</code> (or, without <code>sid</code>, every
session of <code>sub</code>), and answer <code>200</code> (or <code>204</code>) within ${SEND_TIMEOUT_MS / 1000} seconds. Any other answer, a
redirect, or no answer counts as not delivered: the token is sent again, further apart each time (from seconds to an hour), for
up to ${DELIVERY_MAX_AGE_MS / 3_600_000} hours, so an app that is down for a while still hears of it, possibly more than once. Each attempt carries a
freshly signed token (new <code>iat</code> and <code>exp</code>, same <code>jti</code>). In Node with jose:</p>
${code(`import { createRemoteJWKSet, jwtVerify } from 'jose';
const jwks = createRemoteJWKSet(new URL('${base}/.well-known/jwks.json'));

app.post('/backchannel-logout', async (req, res) => {
  const { payload } = await jwtVerify(req.body.logout_token, jwks, {
    issuer: '${base}', audience: 'YOUR_CLIENT_ID', typ: 'logout+jwt',
  });
  if (!payload.events?.['${BACKCHANNEL_LOGOUT_EVENT}'] || 'nonce' in payload) return res.status(400).end();
  // end sessions with this payload.sid, or of payload.sub when there is no sid
  res.status(200).set('cache-control', 'no-store').end();
});`)}
<p>The service sends logout tokens only to public internet addresses unless its operator allows private ones (the default on a
developer's machine), and never follows a redirect.</p>
</section>

<section id="personal">
<h2>Personal tokens</h2>
<p>For your own scripts you do not need an app: create a personal token (<code>svcp_…</code>) under
<a href="/settings/tokens">Settings → API tokens</a>. Choose its name, its scopes (<code>profile:read</code>,
<code>posts:read</code>) and its lifetime: 7, 30, ${DEFAULT_PERSONAL_TOKEN_DAYS} (the default) or 365 days, or no expiry.
It is shown once, with a Copy button; use it exactly like an access token. It has no refresh token; revoke it on the
same page when you no longer need it (the page asks first). The page shows when each token was last used (updated at most once a minute).
Only a successful request counts as a use: one answered with a 2xx status that is not a refusal. A request refused or failed
(401, 403, 429, any other 4xx or 5xx, or an MCP error or tool error answered 200) leaves the time as it was.</p>
${code(`curl ${api}/me -H "Authorization: Bearer svcp_…"`)}
</section>

<section id="leaked">
<h2>Leaked credentials</h2>
<p>Found a token or client secret of this service where it should not be (a repository, a paste, a log)? Report it, even
if it is not yours: every live access token (<code>svco_</code>), refresh token (<code>svcr_</code>), personal token
(<code>svcp_</code>) or client secret (<code>svcs_</code>) in the list is revoked at once, and its owner is told in the
security log of their account. No authentication; up to ${MAX_REPORTED_CREDENTIALS} strings a report,
${LEAK_REPORTS_PER_ADDRESS} reports an hour per address. The answer is always <code>202</code> with <code>{}</code>: it does
not say which strings were valid.</p>
${code(`curl -X POST ${base}/api/credentials/revoke \\
  -H "Content-Type: application/json" \\
  -d '{"credentials": ["svcp_…", "svcs_…"]}'`)}
<p>What it means for your app: a reported refresh token ends that user's authorization (ask them again); a reported client
secret deactivates the whole app (register a new one and keep its secret on your server only). Secret scanners that speak
GitHub's partner format can send signed alerts to <code>${base}/api/credentials/secret-scanning</code> when the operator
configured their keys.</p>
</section>

<section id="scopes">
<h2>Scopes</h2>
<table>
<thead><tr><th scope="col">Scope</th><th scope="col">Allows reading</th><th scope="col">Does not allow reading</th></tr></thead>
<tbody>
${RESOURCE_SCOPES.map((scope) => html`<tr><td><code>${scope}</code></td><td>${SCOPES[scope].allows}</td><td>${SCOPES[scope].doesNotAllow}</td></tr>`)}
<tr><td><code>openid</code></td><td>Signing the user in: an id_token with their user id (see above).</td><td>${SCOPES.openid.doesNotAllow}</td></tr>
<tr><td><code>profile</code></td><td>With <code>openid</code>: <code>preferred_username</code>, <code>name</code>, <code>picture</code>, <code>profile</code>, <code>locale</code> and <code>zoneinfo</code> in the id_token and from UserInfo. ${SCOPES.profile.allows}</td><td>${SCOPES.profile.doesNotAllow} It gives no access to the API: <code>GET ${API_BASE_PATH}/me</code> needs <code>profile:read</code>.</td></tr>
<tr><td><code>offline_access</code></td><td>Accepted and granted; every app gets a refresh token anyway, so it changes nothing but the consent page, which says so.</td><td>${SCOPES.offline_access.doesNotAllow}</td></tr>
</tbody>
</table>
<p>Ask only for what you use; the user sees each scope on the consent page. OpenID's <code>email</code>, <code>address</code>
and <code>phone</code> are accepted in a request (many libraries ask for <code>openid profile email</code>) but never
granted: they are left out of the grant, and the <code>scope</code> of the token response says what was granted
(e.g. <code>openid profile</code>). Any other scope is <code>invalid_scope</code>.</p>
</section>

<section id="endpoints">
<h2>API endpoints</h2>
<p>Base address: <code>${api}</code>. Every call is a <code>GET</code> with <code>Authorization: Bearer &lt;token&gt;</code>
(an access token or a personal token) and answers JSON with status 200. Answers carry
<code>Cache-Control: no-store</code> and the rate-limit headers. Timestamps are ISO-8601 local times in UTC+8 without an
offset, e.g. <code>2026-11-22T08:30:48</code>.</p>
<table>
<thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Scope</th></tr></thead>
<tbody>
${API_ENDPOINTS.map((e) => html`<tr><td>${e.method}</td><td class="links"><a href="#${e.path === `${API_BASE_PATH}/` ? 'get-info' : e.path.endsWith('/posts') ? 'get-posts' : 'get-me'}"><code>${e.path}</code></a></td><td>${e.scope === '' ? 'any valid token' : html`<code>${e.scope}</code>`}</td></tr>`)}
</tbody>
</table>

<h3 id="get-me">GET ${API_BASE_PATH}/me</h3>
<p>The profile of the user the token belongs to. Needs <code>profile:read</code>. It never contains the e-mail
address, account status or other private fields; <code>bio</code> is an empty string when unset. <code>username</code> is
the display name, the nickname the user chose in any script (the username when they chose none): it is not unique, so
identify users by <code>id</code>; <code>profileUrl</code> carries the username.</p>
${code(`curl ${api}/me -H "Authorization: Bearer svco_…"`)}
${code(`HTTP/1.1 200 OK
Content-Type: application/json; charset=utf-8
${rateHeaders}

${json(profileOf(SAMPLE_USER, urls))}`)}

<h3 id="get-posts">GET ${API_BASE_PATH}/me/posts</h3>
<p>The user's published posts (never drafts), newest first; posts published at the same second are ordered by id,
higher first. Needs <code>posts:read</code>.</p>
<table>
<thead><tr><th scope="col">Query parameter</th><th scope="col">Value</th></tr></thead>
<tbody>
<tr><td><code>page</code></td><td>Zero-based page index, a whole number ≥ 0. Default 0. A page past the end answers an empty <code>items</code>.</td></tr>
<tr><td><code>size</code></td><td>Posts per page, a whole number ≥ 1. Default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE}: a larger value is taken as ${MAX_PAGE_SIZE}, and <code>size</code> in the answer says so.</td></tr>
</tbody>
</table>
<p>Anything else (negative, fractional, not a number, empty) is <code>400 invalid_request</code>. Post bodies are
Markdown (CommonMark, with tables and strikethrough; HTML in a body is shown as typed, not interpreted). <code>excerpt</code>
is the plain text a reader sees on the post page, at most ${EXCERPT_MAX_LENGTH} characters; a shortened one is cut at a
word and ends with “…”. It is made when the post is written, and again when its author edits it. With no posts, <code>totalElements</code> and <code>totalPages</code> are 0.</p>
<p>Posts change after you read them. A draft joins the list when its author publishes it, with <code>createdAt</code>
the moment of publication, so it is at the top of page 0. An edited post keeps its <code>id</code> and <code>createdAt</code>
but may have a new <code>title</code>, <code>excerpt</code> and <code>categoryName</code>. A deleted post leaves the list and
<code>totalElements</code>, and its <code>url</code> answers 404: an app that keeps copies should drop the ones no longer listed.</p>
${code(`curl "${api}/me/posts?page=0&size=${DEFAULT_PAGE_SIZE}" -H "Authorization: Bearer svco_…"`)}
${code(`HTTP/1.1 200 OK
Content-Type: application/json; charset=utf-8
${rateHeaders}

${json(postsExample)}`)}

<h3 id="get-info">GET ${API_BASE_PATH}/</h3>
<p>Service info, answered to any valid token whatever its scopes: use it to check that a token works. <code>scopes</code>
lists the scopes the token holds; <code>endpoints</code> lists every endpoint with its full path and the scope it needs
(an empty string: none).</p>
${code(`curl ${api}/ -H "Authorization: Bearer svco_…"`)}
${code(`HTTP/1.1 200 OK
Content-Type: application/json; charset=utf-8
${rateHeaders}

${json(serviceInfo(['profile:read', 'posts:read'], urls))}`)}
</section>

<section id="errors">
<h2>Errors</h2>
<p>API errors are JSON <code>{"error": CODE, "error_description": TEXT}</code> with <code>Cache-Control: no-store</code>.
Decide on <code>error</code> (and the status); the description is for people and may change.</p>
<table>
<thead><tr><th scope="col">Status</th><th scope="col"><code>error</code></th><th scope="col">When</th><th scope="col">What to do</th></tr></thead>
<tbody>
${API_ERRORS.map(([error, status, when, action]) => html`<tr><td>${status}</td><td><code>${error}</code></td><td>${when}</td><td>${action}</td></tr>`)}
</tbody>
</table>
<p>401 and 403 answers carry a <code>WWW-Authenticate</code> challenge (RFC 6750); every 401 also offers DPoP
(<code>DPoP realm="${API_REALM}", algs="${DPOP_ALGS.join(' ')}"</code>, left out below). Without any token:
<code>Bearer realm="${API_REALM}"</code>. With a bad one: <code>Bearer realm="${API_REALM}", error="invalid_token"</code>.
With a missing scope: <code>Bearer realm="${API_REALM}", error="insufficient_scope", scope="posts:read"</code>.
Each challenge also names the API's metadata (RFC 9728), <code>resource_metadata="${resourceMetadataUrl(base)}"</code>:
which authorization server issues its tokens, and for which scopes.</p>
${code(`HTTP/1.1 401 Unauthorized
WWW-Authenticate: Bearer realm="${API_REALM}", error="invalid_token", resource_metadata="${resourceMetadataUrl(base)}", DPoP realm="${API_REALM}", algs="${DPOP_ALGS.join(' ')}", resource_metadata="${resourceMetadataUrl(base)}"
Content-Type: application/json; charset=utf-8
Cache-Control: no-store

${json({ error: 'invalid_token', error_description: BEARER_REFUSALS.expired.description })}`)}
</section>

${libraryErrorsSection(base, api)}

<section id="limits">
<h2>Limits</h2>
<table>
<thead><tr><th scope="col">Limit</th><th scope="col">Value</th></tr></thead>
<tbody>
<tr><td>API requests</td><td>${perMinute} per minute per token (an access token or a personal token), across all our servers. The minute windows start on the full minute. Every request that sends the token counts, whatever it asks for: an address that does not exist, or the OpenAPI document, which needs no token (fetched without one, it is not counted).</td></tr>
<tr><td>Unknown, expired or revoked tokens</td><td>At least ${MIN_FAILURES_PER_ADDRESS} per minute per client address; past that, until the minute ends, the address gets 429 for every request but the OpenAPI document fetched without a token and those whose token this service issued, which go on working (another site's page cannot cut your app off by making its visitors' browsers send made-up tokens).</td></tr>
<tr><td>Failed client authentications (token, PAR, revocation, introspection)</td><td>${settings.clientAuthFailuresPerAddress} per app per ${CLIENT_AUTH_WINDOW_SECONDS / 60} minutes per client address, then that address is refused for that app, while other apps at the same address (a shared NAT or proxy) go on; an address that fails for more than ${settings.clientAuthClientsPerAddress} apps in the window is refused for every app. Both are counted apart for browsers (requests with <code>Origin</code>) and other programs, so a page that makes its visitors' browsers send wrong secrets cannot lock out your backend at their address; past ${settings.clientAuthFailuresPerClient} for one app, each address that fails for it is refused for that app until the window ends. Successful requests never count. At most ${CLIENT_AUTH_CHECKS_AT_ONCE} requests from one address are checked at once; the rest wait their turn (past ${CLIENT_AUTH_CHECKS_WAITING} waiting, 429). Refused: 429 <code>rate_limited</code> with <code>Retry-After</code>, the right secret included. A public app's requests (<code>client_id</code> alone) offer no secret: they never count and are never refused.</td></tr>
<tr><td>Pushed authorization requests</td><td>${settings.pushesPerMinutePerClient} per minute per confidential app; for public apps ${settings.pushesPerMinutePerAddress} per minute per client address (an IPv6 address by its /64; by its /48 for an app the site's staff have not verified and its operators did not register), counted apart for browsers (requests with <code>Origin</code>) and other programs, so a page that makes its visitors' browsers push cannot refuse your native app at their address.</td></tr>
<tr><td>Page size</td><td>Default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE}.</td></tr>
<tr><td>Authorization code</td><td>${settings.codeTtlSeconds} seconds, single use.</td></tr>
<tr><td>Access token</td><td>${settings.accessTokenTtlSeconds} seconds.</td></tr>
<tr><td>Refresh token</td><td>${Math.round(settings.refreshTokenTtlSeconds / 86_400)} days; single use (rotated on every refresh).</td></tr>
</tbody>
</table>
<p>Every answer to a valid token carries the rate-limit headers; <code>X-RateLimit-Reset</code> is when the current
window ends, in epoch seconds. The same numbers come as the IETF fields of draft-ietf-httpapi-ratelimit-headers-11:
<code>RateLimit-Policy: "per-token";q=LIMIT;w=${API_WINDOW_SECONDS}</code> and <code>RateLimit: "per-token";r=REMAINING;t=SECONDS</code>
(seconds until the window ends), which generic HTTP client libraries understand. Past the limit the answer is:</p>
${code(`HTTP/1.1 429 Too Many Requests
Retry-After: ${RETRY_AFTER_SECONDS}
X-RateLimit-Limit: ${perMinute}
X-RateLimit-Remaining: 0
X-RateLimit-Reset: ${resetExample}
RateLimit-Policy: "per-token";q=${perMinute};w=${API_WINDOW_SECONDS}
RateLimit: "per-token";r=0;t=${API_WINDOW_SECONDS}

${json({ error: 'rate_limited', error_description: `This token made more than ${perMinute} requests this minute; retry after the window resets.` })}`)}
<p>Back off as <code>Retry-After</code> says (or until <code>X-RateLimit-Reset</code>). Cache what you read: profiles and
post lists change slowly. The window is ${API_WINDOW_SECONDS} seconds.</p>
</section>

<section id="versioning">
<h2>Versioning</h2>
<p>The API is version <code>v1</code>: it is in the path (<code>${API_BASE_PATH}</code>) and in the <code>version</code>
field of <code>GET ${API_BASE_PATH}/</code>. A change that would break clients comes as a new version in the path.</p>
</section>
</div>
</div>
</article>`, { script: 'copy' });
}
