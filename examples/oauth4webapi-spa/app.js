// A browser-only app (a public client, no secret) that signs in with Community through
// oauth4webapi, following the library's own code-flow example: PKCE, and state and nonce only
// when the server does not support PKCE (ours does). Tokens live in sessionStorage.
// Served by server.mjs, which writes config.js from ISSUER and CLIENT_ID.
import * as oauth from '/vendor/oauth4webapi.js';
import config from './config.js';

const issuer = new URL(config.issuer);
const client = { client_id: config.clientId };
const clientAuth = oauth.None();
const redirectUri = `${location.origin}/callback`;
// oauth4webapi refuses http:// addresses; this documented option allows them for a service on your own machine.
const options = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};
const store = window.sessionStorage;

const heading = document.querySelector('h1');
const status = document.querySelector('[role="status"]');
const main = document.querySelector('main');

function show(title, ...children) {
  heading.textContent = title;
  main.replaceChildren(...children);
}

function say(text) {
  status.textContent = text;
  status.hidden = false;
}

function element(tag, properties = {}, ...children) {
  const node = Object.assign(document.createElement(tag), properties);
  node.append(...children);
  return node;
}

function button(label, onClick) {
  return element('button', { type: 'button', onclick: () => onClick().catch(failed) }, label);
}

async function discover() {
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
}

function saved() {
  const text = store.getItem('tokens');
  return text ? JSON.parse(text) : undefined;
}

async function signIn() {
  const as = await discover();
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', 'openid profile profile:read posts:read');
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set('code_challenge_method', 'S256');
  const pending = { codeVerifier };
  if (as.code_challenge_methods_supported?.includes('S256') !== true) {
    pending.state = oauth.generateRandomState();
    pending.nonce = oauth.generateRandomNonce();
    url.searchParams.set('state', pending.state);
    url.searchParams.set('nonce', pending.nonce);
  }
  store.setItem('pending', JSON.stringify(pending));
  location.assign(url.href);
}

async function callback() {
  const pending = JSON.parse(store.getItem('pending') ?? 'null');
  store.removeItem('pending');
  if (!pending) throw new Error('No sign-in was started here.');
  const as = await discover();
  const params = oauth.validateAuthResponse(as, client, new URL(location.href), pending.state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, pending.codeVerifier, options);
  const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: pending.nonce, requireIdToken: true });
  keep(result, oauth.getValidatedIdTokenClaims(result));
}

function keep(result, claims) {
  const before = saved();
  store.setItem('tokens', JSON.stringify({
    accessToken: result.access_token,
    // Every refresh rotates the refresh token: keep the new one.
    refreshToken: result.refresh_token,
    idToken: result.id_token ?? before?.idToken,
    claims: claims ?? before?.claims,
  }));
}

/** GET {path} of the API with the access token. */
async function readApi(tokens, path) {
  const response = await oauth.protectedResourceRequest(tokens.accessToken, 'GET', new URL(`/api/open/v1${path}`, issuer), undefined, undefined, options);
  if (!response.ok) throw new Error(`${path} answered ${response.status}`);
  return response.json();
}

async function refresh() {
  const as = await discover();
  const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth, saved().refreshToken, options);
  const result = await oauth.processRefreshTokenResponse(as, client, response);
  keep(result, result.id_token ? oauth.getValidatedIdTokenClaims(result) : undefined);
}

async function signOut() {
  const tokens = saved();
  const as = await discover();
  // Revoking the refresh token ends the access tokens of the same sign-in too.
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, tokens.refreshToken, options));
  store.removeItem('tokens');
  // RP-Initiated Logout: oauth4webapi has no helper, the address comes from discovery.
  const state = oauth.generateRandomState();
  store.setItem('logout', state);
  const url = new URL(as.end_session_endpoint);
  url.searchParams.set('id_token_hint', tokens.idToken);
  url.searchParams.set('post_logout_redirect_uri', `${location.origin}/signed-out`);
  url.searchParams.set('state', state);
  location.assign(url.href);
}

async function home() {
  const tokens = saved();
  if (!tokens) {
    show('oauth4webapi example', button('Sign in with Community', signIn));
    return;
  }
  const me = await readApi(tokens, '/me');
  const posts = await readApi(tokens, '/me/posts');
  show(`Signed in as ${tokens.claims.preferred_username}`,
    element('h2', {}, 'GET /api/open/v1/me'),
    element('pre', { id: 'me' }, JSON.stringify(me, null, 2)),
    element('h2', {}, 'GET /api/open/v1/me/posts'),
    element('pre', { id: 'posts' }, JSON.stringify(posts, null, 2)),
    element('h2', {}, 'id_token claims'),
    element('pre', { id: 'claims' }, JSON.stringify(tokens.claims, null, 2)),
    button('Refresh tokens', async () => {
      await refresh();
      await home();
      say('Tokens refreshed; /me and /me/posts read again with the new access token.');
    }),
    button('Sign out', signOut));
}

function failed(error) {
  show('Something went wrong', element('pre', { id: 'error' }, String(error?.message ?? error)));
  console.error(error);
}

async function route() {
  if (location.pathname === '/callback') {
    await callback();
    history.replaceState(null, '', '/');
    return home();
  }
  if (location.pathname === '/signed-out') {
    const expected = store.getItem('logout');
    store.removeItem('logout');
    if (!expected || new URL(location.href).searchParams.get('state') !== expected) throw new Error('This sign-out did not start here.');
    show('Signed out', element('p', {}, 'Signed out of this app and of Community; the tokens were revoked.'));
    return;
  }
  return home();
}

route().catch(failed);
