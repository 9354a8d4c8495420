/**
 * Sign in with Community from a Node server app, with openid-client and its defaults:
 * the authorization code flow with PKCE (its quick start), /me and /me/posts with the access token, a refresh,
 * revocation, sign-out through the end_session_endpoint, and back-channel logout verified
 * with jose against the JWKS.
 *
 *   ISSUER=http://localhost:3000 CLIENT_ID=… CLIENT_SECRET=… node examples/openid-client/server.mjs
 *
 * Register the app with redirect URI {APP_URL}/callback, post-logout redirect URI
 * {APP_URL}/signed-out and back-channel logout URI {APP_URL}/backchannel-logout
 * (examples/README.md). APP_URL defaults to http://localhost:PORT (PORT 4001).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';

const ISSUER = process.env.ISSUER ?? 'http://localhost:3000';
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET;
const PORT = Number(process.env.PORT ?? 4001);
const APP_URL = process.env.APP_URL ?? `http://localhost:${PORT}`;
const SCOPE = 'openid profile profile:read posts:read';
const COOKIE = 'openid_client_example';
const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
if (!CLIENT_ID || !CLIENT_SECRET) {
  console.error('Set CLIENT_ID and CLIENT_SECRET (examples/README.md says how to register the app).');
  process.exit(2);
}

// Discovery. openid-client allows only https; http is for a service on your own machine.
const config = await client.discovery(new URL(ISSUER), CLIENT_ID, CLIENT_SECRET, undefined,
  new URL(ISSUER).protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined);
const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri));

/** The app's own sessions, by the random value of its cookie. */
const sessions = new Map();
/** Logout tokens already taken (`jti`), so a repeat is recognised. */
const seenLogouts = new Set();

function sessionOf(request, response) {
  const id = /(?:^|;\s*)openid_client_example=([\w-]+)/.exec(request.headers.cookie ?? '')?.[1];
  if (id && sessions.has(id)) return sessions.get(id);
  const fresh = randomBytes(24).toString('base64url');
  const session = {};
  sessions.set(fresh, session);
  response.setHeader('set-cookie', `${COOKIE}=${fresh}; Path=/; HttpOnly; SameSite=Lax`);
  return session;
}

/** GET {path} of the API with the access token. */
async function readApi(accessToken, path) {
  const response = await client.fetchProtectedResource(config, accessToken, new URL(`${ISSUER}/api/open/v1${path}`), 'GET');
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** The person's profile (scope profile:read) and the first page of their published posts (posts:read). */
async function readAccount(accessToken) {
  return { me: await readApi(accessToken, '/me'), posts: await readApi(accessToken, '/me/posts') };
}

const routes = {
  'GET /': (request, response, session) => {
    if (!session.tokens) {
      return page(response, 'openid-client example', `${notice(session)}
<form method="get" action="/login"><button>Sign in with Community</button></form>`);
    }
    return page(response, `Signed in as ${session.claims.preferred_username}`, `${notice(session)}
<h2>GET /api/open/v1/me</h2><pre id="me">${escape(JSON.stringify(session.me, null, 2))}</pre>
<h2>GET /api/open/v1/me/posts</h2><pre id="posts">${escape(JSON.stringify(session.posts, null, 2))}</pre>
<h2>id_token claims</h2><pre id="claims">${escape(JSON.stringify(session.claims, null, 2))}</pre>
<form method="post" action="/refresh"><button>Refresh tokens</button></form>
<form method="post" action="/logout"><button>Sign out</button></form>`);
  },

  'GET /login': async (request, response, session) => {
    const codeVerifier = client.randomPKCECodeVerifier();
    const parameters = {
      redirect_uri: `${APP_URL}/callback`, scope: SCOPE,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
    };
    // As in openid-client's quick start: state only when the server does not support PKCE (ours does).
    let state;
    if (!config.serverMetadata().supportsPKCE()) parameters.state = state = client.randomState();
    session.pending = { codeVerifier, state };
    redirect(response, client.buildAuthorizationUrl(config, parameters).href);
  },

  'GET /callback': async (request, response, session) => {
    const pending = session.pending;
    delete session.pending;
    if (!pending) return redirect(response, '/');
    // The public address of this page plus the query the browser brought back.
    const currentUrl = new URL(request.url, APP_URL);
    const tokens = await client.authorizationCodeGrant(config, currentUrl, {
      pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state, idTokenExpected: true,
    });
    Object.assign(session, { tokens, claims: tokens.claims() }, await readAccount(tokens.access_token));
    redirect(response, '/');
  },

  'POST /refresh': async (request, response, session) => {
    if (!session.tokens) return redirect(response, '/');
    // Every refresh rotates the refresh token: keep the new one.
    session.tokens = await client.refreshTokenGrant(config, session.tokens.refresh_token);
    Object.assign(session, await readAccount(session.tokens.access_token));
    session.notice = 'Tokens refreshed; /me and /me/posts read again with the new access token.';
    redirect(response, '/');
  },

  'POST /logout': async (request, response, session) => {
    if (!session.tokens) return redirect(response, '/');
    // Revoking the refresh token ends the access tokens of the same sign-in too.
    await client.tokenRevocation(config, session.tokens.refresh_token);
    const state = client.randomState();
    const endSession = client.buildEndSessionUrl(config, {
      id_token_hint: session.tokens.id_token, post_logout_redirect_uri: `${APP_URL}/signed-out`, state,
    });
    for (const key of Object.keys(session)) delete session[key];
    session.logoutState = state;
    redirect(response, endSession.href);
  },

  'GET /signed-out': (request, response, session) => {
    const state = new URL(request.url, APP_URL).searchParams.get('state');
    const expected = session.logoutState;
    delete session.logoutState;
    if (!expected || state !== expected) return page(response, 'Sign-out not recognised', '<p>This sign-out did not start here.</p>', 400);
    page(response, 'Signed out', '<p>Signed out of this app and of Community.</p><p><a href="/">Home</a></p>');
  },

  // Back-Channel Logout 1.0: Community tells the app that the person signed out there.
  'POST /backchannel-logout': async (request, response) => {
    const logoutToken = new URLSearchParams(await body(request)).get('logout_token');
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(logoutToken ?? '', jwks, {
        issuer: config.serverMetadata().issuer, audience: CLIENT_ID, typ: 'logout+jwt', requiredClaims: ['iat', 'jti'],
      }));
    } catch {
      return answer(response, 400, { error: 'invalid_request' });
    }
    if (!claims.events?.[BACKCHANNEL_LOGOUT_EVENT] || 'nonce' in claims || (!claims.sid && !claims.sub)) {
      return answer(response, 400, { error: 'invalid_request' });
    }
    if (!seenLogouts.has(claims.jti)) {
      seenLogouts.add(claims.jti);
      for (const session of sessions.values()) {
        if (!session.claims || session.claims.sub !== claims.sub || (claims.sid && session.claims.sid !== claims.sid)) continue;
        for (const key of Object.keys(session)) delete session[key];
        session.notice = 'You signed out at Community, so this app signed you out (back-channel logout).';
      }
    }
    answer(response, 200);
  },
};

createServer(async (request, response) => {
  const path = new URL(request.url, APP_URL).pathname;
  const route = routes[`${request.method} ${path}`];
  if (!route) return page(response, 'Not found', '', 404);
  try {
    // The back-channel is called by Community's server, never by a browser: it has no session.
    await route(request, response, path === '/backchannel-logout' ? undefined : sessionOf(request, response));
  } catch (error) {
    console.error(error);
    page(response, 'Something went wrong', `<pre id="error">${escape(String(error?.message ?? error))}</pre><p><a href="/">Home</a></p>`, 500);
  }
}).listen(PORT, process.env.HOST ?? '127.0.0.1', () => console.log(`openid-client example listening on ${APP_URL}`));

function notice(session) {
  const text = session.notice;
  delete session.notice;
  return text ? `<p role="status">${escape(text)}</p>` : '';
}

function page(response, title, content, status = 200) {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>${escape(title)}</title></head><body><h1>${escape(title)}</h1>${content}</body></html>`);
}

function redirect(response, location) {
  response.writeHead(303, { location }).end();
}

function answer(response, status, json) {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(json ? JSON.stringify(json) : '');
}

async function body(request) {
  let text = '';
  for await (const chunk of request) text += chunk;
  return text;
}

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
