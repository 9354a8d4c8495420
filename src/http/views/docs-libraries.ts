/**
 * "Common errors per library" on /docs (issue 17.6): what goes wrong with each popular client
 * library's defaults against this server, and what to set. Every claim was checked against the
 * library's own source at the version named (docs/oauth.md, "Refusals that teach"); when a
 * library changes, check again before editing a line here.
 */
import { type Html, html } from './html.js';

interface Pitfall {
  /** What happens with the library's default. */
  readonly problem: Html;
  /** What to set or do. */
  readonly fix: Html;
}

interface Library {
  readonly id: string;
  /** The folder of its tested app under examples/, shown on /docs as `#example-{name}`. */
  readonly example: string;
  readonly name: string;
  /** The version whose source the claims were checked against. */
  readonly checked: string;
  readonly pitfalls: readonly Pitfall[];
  /** The settings that matter, as code. */
  readonly settings: string;
}

function libraries(base: string, api: string): Library[] {
  return [
    {
      id: 'lib-openid-client',
      example: 'openid-client',
      name: 'openid-client (Node)',
      checked: '6.8',
      pitfalls: [
        {
          problem: html`<code>discovery()</code> throws “only requests to HTTPS are allowed” for an <code>http://</code> issuer.`,
          fix: html`In local development only, pass <code>{ execute: [client.allowInsecureRequests] }</code> as its options.`,
        },
        {
          problem: html`Its quick start sends no <code>state</code> when the server supports PKCE (we do), and no <code>nonce</code>.`,
          fix: html`Nothing: both are accepted with PKCE. If you do send a <code>state</code> or a <code>nonce</code>, pass
            <code>expectedState</code> and <code>expectedNonce</code> to <code>authorizationCodeGrant()</code>, or it refuses the answer.`,
        },
        {
          problem: html`<code>authorizationCodeGrant(config, currentUrl)</code> takes <code>redirect_uri</code> from <code>currentUrl</code>
            without its query. Behind a proxy that is your internal address: <code>invalid_grant</code>, “The redirect_uri differs”.`,
          fix: html`Build <code>currentUrl</code> from the public callback address you registered, plus the query you received.`,
        },
        {
          problem: html`<code>fetchUserInfo()</code> needs the subject it expects.`,
          fix: html`Pass <code>tokens.claims().sub</code> (or <code>client.skipSubjectCheck</code>).`,
        },
        {
          problem: html`A secret given to <code>discovery()</code> is sent in the body (<code>client_secret_post</code>).`,
          fix: html`Fine; <code>client.ClientSecretBasic(secret)</code> as the fourth argument works too.`,
        },
      ],
      settings: `import * as client from 'openid-client';
const config = await client.discovery(new URL('${base}'), CLIENT_ID, CLIENT_SECRET);
const verifier = client.randomPKCECodeVerifier();
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: 'https://yourapp.example/callback', scope: 'openid profile profile:read',
  code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
});
// on the callback, with the public address:
const tokens = await client.authorizationCodeGrant(config, new URL(req.url, 'https://yourapp.example'), { pkceCodeVerifier: verifier });
const me = await client.fetchUserInfo(config, tokens.access_token, tokens.claims().sub);`,
    },
    {
      id: 'lib-oauth4webapi',
      example: 'oauth4webapi-spa',
      name: 'oauth4webapi (browser or Node)',
      checked: '3.8',
      pitfalls: [
        {
          problem: html`Every function refuses an <code>http://</code> address (“only requests to HTTPS are allowed”).`,
          fix: html`In local development only, add <code>[oauth.allowInsecureRequests]: true</code> to the options of each call.`,
        },
        {
          problem: html`<code>validateAuthResponse()</code> expects no <code>state</code> unless you pass one.`,
          fix: html`With PKCE and no state, pass <code>oauth.expectNoState</code>; if you sent a state, pass it.`,
        },
        {
          problem: html`<code>processUserInfoResponse()</code> needs the subject it expects.`,
          fix: html`Pass the id_token's <code>sub</code>, or <code>oauth.skipSubjectCheck</code>.`,
        },
        {
          problem: html`With a <code>DPoP</code> handle, the first token request and the first API call are refused with
            <code>use_dpop_nonce</code>: this server always asks for a DPoP nonce.`,
          fix: html`Make the call again when <code>oauth.isDPoPNonceError(error)</code> is true: the handle has kept the nonce.`,
        },
        {
          problem: html`Client authentication is yours to choose.`,
          fix: html`<code>oauth.None()</code> for a public (browser) app; <code>oauth.ClientSecretPost(secret)</code> or
            <code>oauth.ClientSecretBasic(secret)</code> for a confidential one.`,
        },
      ],
      settings: `const issuer = new URL('${base}');
const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer));
const client = { client_id: CLIENT_ID };
const params = oauth.validateAuthResponse(as, client, new URL(location.href), oauth.expectNoState);
const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT_URI, verifier);
const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);`,
    },
    {
      id: 'lib-oidc-client-ts',
      example: 'oidc-client-ts',
      name: 'oidc-client-ts (browser)',
      checked: '3.5',
      pitfalls: [
        {
          problem: html`The default <code>scope</code> is <code>openid</code> alone: the user's profile holds only <code>sub</code>.`,
          fix: html`Set <code>scope: 'openid profile'</code> for <code>preferred_username</code>, <code>picture</code> and <code>profile</code>,
            and add <code>profile:read</code> or <code>posts:read</code> to call the API.`,
        },
        {
          problem: html`It sends no <code>nonce</code>.`,
          fix: html`Nothing, as long as PKCE stays on (the default; do not set <code>disablePKCE</code>).`,
        },
        {
          problem: html`<code>revokeTokensOnSignout</code> is <code>false</code>: signing out leaves the refresh token alive.`,
          fix: html`Set <code>revokeTokensOnSignout: true</code>; revoking the refresh token also ends its access tokens.`,
        },
        {
          problem: html`With <code>fetchRequestCredentials: 'include'</code> the browser refuses every answer, because they allow any origin
            without credentials.`,
          fix: html`Keep the default, <code>'same-origin'</code>.`,
        },
        {
          problem: html`<code>loadUserInfo</code> is <code>false</code>.`,
          fix: html`Fine: the id_token carries the same claims as UserInfo.`,
        },
      ],
      settings: `import { UserManager } from 'oidc-client-ts';
const users = new UserManager({
  authority: '${base}',
  client_id: CLIENT_ID,                       // a public app: no secret
  redirect_uri: 'https://spa.example/callback',
  scope: 'openid profile profile:read',
  revokeTokensOnSignout: true,
});`,
    },
    {
      id: 'lib-authjs',
      example: 'authjs',
      name: 'Auth.js (@auth/core)',
      checked: '0.41',
      pitfalls: [
        {
          problem: html`An <code>oidc</code> provider asks for <code>openid profile email</code>.`,
          fix: html`Accepted and granted as <code>openid profile</code>: there is no e-mail to share, so <code>user.email</code> stays empty.
            <code>name</code> comes from <code>preferred_username</code>, <code>image</code> from <code>picture</code>.`,
        },
        {
          problem: html`Its default checks are <code>["pkce"]</code>: no <code>state</code>, no <code>nonce</code>.`,
          fix: html`Nothing: accepted with PKCE.`,
        },
        {
          problem: html`It authenticates with HTTP Basic, also for an app that has no secret.`,
          fix: html`Register a confidential app; for a public one set <code>client: { token_endpoint_auth_method: 'none' }</code>.`,
        },
        {
          problem: html`The redirect URI is <code>{origin}{basePath}/callback/{id}</code>, and @auth/core's <code>basePath</code> is <code>/auth</code>.`,
          fix: html`Register exactly that address, with your framework's <code>basePath</code>.`,
        },
        {
          problem: html`Its own sign-in page shows <code>https://authjs.dev/img/providers/{id}.svg</code> on the button of a provider
            that has no logo. There is none for your provider's id, so the browser reports a failed image on every sign-in.`,
          fix: html`Give the provider <code>style: { logo: '/your-logo.svg' }</code>, an image your app serves.`,
        },
        {
          problem: html`It neither keeps nor refreshes the access token.`,
          fix: html`Keep <code>account.access_token</code>, <code>refresh_token</code> and <code>expires_at</code> in the <code>jwt</code>
            callback and refresh yourself (Auth.js's “Refresh Token Rotation” guide). Store the new refresh token every time: reusing an
            old one ends the authorization.`,
        },
      ],
      settings: `providers: [{
  id: 'community', name: 'Community', type: 'oidc',
  issuer: '${base}',
  clientId: process.env.COMMUNITY_CLIENT_ID,
  clientSecret: process.env.COMMUNITY_CLIENT_SECRET,
  authorization: { params: { scope: 'openid profile profile:read' } },
  style: { logo: '/community.svg' },
}]
// redirect URI to register: https://yourapp.example/auth/callback/community`,
    },
    {
      id: 'lib-passport-oauth2',
      example: 'passport-oauth2',
      name: 'passport-oauth2 (Express)',
      checked: '1.8, with oauth 0.10',
      pitfalls: [
        {
          problem: html`It sends neither <code>state</code> nor PKCE by default, so the authorization request is refused:
            <code>invalid_request</code>, “The state parameter is required without PKCE”.`,
          fix: html`Set <code>state: true</code> and <code>pkce: true</code> (PKCE needs <code>state: true</code>, which needs express-session).`,
        },
        {
          problem: html`<code>userProfile()</code> returns <code>{}</code>, and <code>this._oauth2.get()</code> sends the token as
            <code>?access_token=</code> in the query string, which the API refuses (401, “Tokens in the query string … are not accepted”).`,
          fix: html`Call <code>strategy._oauth2.useAuthorizationHeaderforGET(true)</code>, then read <code>${api}/me</code> in
            <code>userProfile()</code>.`,
        },
        {
          problem: html`It neither refreshes nor revokes tokens.`,
          fix: html`Refresh with the strategy's own client: <code>strategy._oauth2.getOAuthAccessToken(refreshToken, { grant_type:
            'refresh_token' }, callback)</code>, and keep the new refresh token; revoke with a POST to <code>${base}/api/oauth/revoke</code>.`,
        },
        {
          problem: html`It sends <code>client_id</code> and <code>client_secret</code> in the body; for a public app the secret is empty.`,
          fix: html`Fine: an empty <code>client_secret</code> counts as none.`,
        },
      ],
      settings: `const strategy = new OAuth2Strategy({
  authorizationURL: '${base}/oauth/authorize',
  tokenURL: '${base}/api/oauth/token',
  clientID: CLIENT_ID, clientSecret: CLIENT_SECRET,
  callbackURL: 'https://yourapp.example/auth/callback',
  scope: 'profile:read', state: true, pkce: true,
}, (accessToken, refreshToken, profile, done) => done(null, profile));
strategy._oauth2.useAuthorizationHeaderforGET(true);
strategy.userProfile = function (accessToken, done) {
  this._oauth2.get('${api}/me', accessToken, (err, body) => done(err, body && JSON.parse(body)));
};`,
    },
    {
      id: 'lib-arctic',
      example: 'arctic',
      name: 'arctic (Node, Bun, Deno)',
      checked: '3.7',
      pitfalls: [
        {
          problem: html`<code>createAuthorizationURL()</code> sends no PKCE: refused for a public app, and with <code>openid</code> it needs a
            <code>nonce</code> it does not add.`,
          fix: html`Use <code>createAuthorizationURLWithPKCE()</code> with <code>CodeChallengeMethod.S256</code>
            (<code>Plain</code> is refused).`,
        },
        {
          problem: html`<code>refreshAccessToken(endpoint, token, scopes)</code> sends the scopes you list; more than was granted is
            <code>invalid_scope</code>.`,
          fix: html`Pass <code>[]</code> to keep what was granted.`,
        },
        {
          problem: html`<code>decodeIdToken()</code> only decodes; it checks no signature.`,
          fix: html`Take the id_token only straight from the token response, or verify it against <code>${base}/.well-known/jwks.json</code>.`,
        },
      ],
      settings: `const oauth = new OAuth2Client(CLIENT_ID, CLIENT_SECRET /* null for a public app */, 'https://yourapp.example/callback');
const url = oauth.createAuthorizationURLWithPKCE('${base}/oauth/authorize', state, CodeChallengeMethod.S256, verifier, ['profile:read']);
const tokens = await oauth.validateAuthorizationCode('${base}/api/oauth/token', code, verifier);
const refreshed = await oauth.refreshAccessToken('${base}/api/oauth/token', tokens.refreshToken(), []);
await oauth.revokeToken('${base}/api/oauth/revoke', refreshed.refreshToken());`,
    },
    {
      id: 'lib-simple-oauth2',
      example: 'simple-oauth2',
      name: 'simple-oauth2 (Node)',
      checked: '5.1',
      pitfalls: [
        {
          problem: html`Its default paths are <code>/oauth/token</code> and <code>/oauth/revoke</code>: there is nothing there.`,
          fix: html`Set <code>tokenPath: '/api/oauth/token'</code> and <code>revokePath: '/api/oauth/revoke'</code>
            (<code>authorizePath</code>'s default, <code>/oauth/authorize</code>, is right).`,
        },
        {
          problem: html`It authenticates with HTTP Basic; without a secret it sends the word <code>undefined</code> as one:
            <code>invalid_client</code>, “this application is public”.`,
          fix: html`For a public app set <code>options: { authorizationMethod: 'body' }</code> and no secret.`,
        },
        {
          problem: html`Parameters are sent under the names you give them, and it has no PKCE helper.`,
          fix: html`Use <code>redirect_uri</code>, <code>code_challenge</code>, <code>code_challenge_method</code> and <code>code_verifier</code>
            as written in RFC 6749 and 7636.`,
        },
        {
          problem: html`<code>revoke()</code> throws on an answer that is not JSON.`,
          fix: html`Nothing: revocation answers <code>{}</code> as <code>application/json</code>.`,
        },
      ],
      settings: `const client = new AuthorizationCode({
  client: { id: CLIENT_ID, secret: CLIENT_SECRET },
  auth: { tokenHost: '${base}', tokenPath: '/api/oauth/token', revokePath: '/api/oauth/revoke' },
});
const url = client.authorizeURL({ redirect_uri, scope: 'profile:read', state, code_challenge, code_challenge_method: 'S256' });
const token = await client.getToken({ code, redirect_uri, code_verifier });`,
    },
  ];
}

/** A library without a quick start here: what its defaults meet, and the setting that fixes it. */
interface OtherLibrary {
  readonly name: string;
  /** The version tried against this service. */
  readonly checked: string;
  readonly problem: Html;
  readonly fix: Html;
}

/**
 * Libraries tried against this service at their defaults, without an app under examples/. Those
 * marked in docs/oauth.md ("Examples") are also tested in process (`test/examples/*-library.test.ts`).
 * Most fail for one rule: `openid` needs a `nonce` unless PKCE is sent (INTERFACE section 3).
 */
const OTHER_LIBRARIES: readonly OtherLibrary[] = [
  {
    name: 'express-openid-connect (Auth0, Node)', checked: '3.4',
    problem: html`Asks for <code>response_type=id_token</code> by <code>form_post</code>; only the code flow is offered, so the
      <code>unsupported_response_type</code> error is posted to its callback, where the library raises “authorization response from
      the server is an error” with our <code>error_description</code>.`,
    fix: html`<code>authorizationParams: { response_type: 'code', scope: 'openid profile' }</code> and <code>clientSecret</code>. It then sends
      PKCE, <code>state</code> and <code>nonce</code>; <code>idpLogout: true</code> signs out here too.`,
  },
  {
    name: 'openid-client 5 (Node)', checked: '5.7',
    problem: html`Works at its defaults. An app registered for ES256 id_tokens gets “unexpected JWT alg received, expected RS256”.`,
    fix: html`For such an app, <code>id_token_signed_response_alg: 'ES256'</code> in the client's metadata.`,
  },
  {
    name: 'NextAuth.js 4 (Node)', checked: '4.24',
    problem: html`Its default <code>checks: ['state']</code> sends <code>openid</code> with neither PKCE nor a nonce:
      <code>invalid_request</code>, shown as <code>?error=Callback</code>.`,
    fix: html`<code>checks: ['pkce', 'state']</code> and <code>idToken: true</code> on the provider.`,
  },
  {
    name: 'passport-openidconnect (Node)', checked: '0.1',
    problem: html`No PKCE, and no nonce unless asked: <code>openid</code> is refused with <code>invalid_request</code>.`,
    fix: html`Its <code>nonce</code> option (any value) in the strategy's options.`,
  },
  {
    name: '@badgateway/oauth2-client (Node, browser)', checked: '3.3',
    problem: html`Works at its defaults (metadata from <code>/.well-known/oauth-authorization-server</code>, PKCE, Basic).`,
    fix: html`Nothing.`,
  },
  {
    name: 'grant (Node)', checked: '5.4',
    problem: html`Joins scopes with commas (<code>invalid_scope</code>: RFC 6749 3.3 separates them by spaces) and sends no <code>state</code>.`,
    fix: html`<code>scope_delimiter: ' '</code> and <code>pkce: true</code>.`,
  },
  {
    name: 'client-oauth2 (Node)', checked: '4.3',
    problem: html`Sends an empty <code>state</code> and no PKCE: <code>invalid_request</code>.`,
    fix: html`A fresh <code>state</code> per sign-in; with <code>openid</code>, also <code>query: { nonce }</code>.`,
  },
  {
    name: '@hapi/bell (Node)', checked: '13.2',
    problem: html`With <code>openid</code> and no PKCE the request is refused, and bell, which ignores <code>error</code> on its callback,
      sends the browser back to sign in again and again.`,
    fix: html`<code>pkce: 'S256'</code> in the provider.`,
  },
  {
    name: 'Authlib (Python)', checked: '1.2',
    problem: html`A bare <code>OAuth2Session</code> sends <code>state</code> only: <code>openid</code> is refused. Its Flask and Django
      integrations with <code>server_metadata_url</code> add a nonce and work at their defaults.`,
    fix: html`<code>code_challenge_method='S256'</code> on the session (and <code>code_verifier</code> to <code>fetch_token</code>), or a <code>nonce</code>.`,
  },
  {
    name: 'requests-oauthlib (Python)', checked: '1.3',
    problem: html`Sends <code>state</code> only: <code>openid</code> is refused, which oauthlib reports as <code>InvalidClientIdError</code>
      though the answer is <code>invalid_request</code> about the nonce.`,
    fix: html`<code>nonce=…</code> (or <code>code_challenge</code> and <code>code_challenge_method='S256'</code>) to <code>authorization_url</code>.`,
  },
  {
    name: 'go-oidc with golang.org/x/oauth2 (Go)', checked: 'go-oidc 2.1, x/oauth2 0.3',
    problem: html`The README's <code>AuthCodeURL(state)</code> sends <code>state</code> only: <code>openid</code> is refused.`,
    fix: html`<code>oidc.Nonce(nonce)</code> as an option to <code>AuthCodeURL</code>, checked against the id_token's <code>nonce</code>;
      or PKCE (<code>oauth2.S256ChallengeOption</code>, x/oauth2 0.13 and later).`,
  },
];

/** The section, with `base` (the issuer) and `api` (the resource API's root) filled in. */
export function libraryErrorsSection(base: string, api: string): Html {
  const all = libraries(base, api);
  return html`<section id="library-errors">
<h2>Common errors per library</h2>
<p>What goes wrong with each library's defaults here, and what to set. Each was checked against the library's source at the
version named. Every refusal also says what to send instead in its <code>error_description</code>; read it before anything else.</p>
<ul class="links">
${all.map((library) => html`<li><a href="#${library.id}">${library.name}</a></li>`)}
<li><a href="#lib-others">Other libraries</a></li>
</ul>
${all.map((library) => html`<h3 id="${library.id}">${library.name} <span class="muted">(checked: ${library.checked})</span></h3>
<table>
<thead><tr><th scope="col">With the defaults</th><th scope="col">What to set</th></tr></thead>
<tbody>
${library.pitfalls.map((pitfall) => html`<tr><td>${pitfall.problem}</td><td>${pitfall.fix}</td></tr>`)}
</tbody>
</table>
<pre><code>${library.settings}</code></pre>
<p>A complete app with these settings, tested against this service: <a href="#example-${library.example}">its quick start</a>.</p>
`)}
<h3 id="lib-others">Other libraries</h3>
<p>Tried against this service at their defaults. Most that fail do so for one rule: with <code>openid</code>, send a
<code>nonce</code> or PKCE (both, ideally).</p>
<table>
<thead><tr><th scope="col">Library (version tried)</th><th scope="col">With the defaults</th><th scope="col">What to set</th></tr></thead>
<tbody>
${OTHER_LIBRARIES.map((other) => html`<tr><td>${other.name} <span class="muted">(${other.checked})</span></td><td>${other.problem}</td><td>${other.fix}</td></tr>`)}
</tbody>
</table>
</section>`;
}
