/**
 * Community's API from a Node server app with simple-oauth2's AuthorizationCode and its defaults
 * (HTTP Basic client authentication), the paths set as its docs say: the authorization code
 * flow with PKCE (S256, made with node:crypto: the library has no helper) and state, /me and /me/posts with the
 * access token, a refresh, and revocation of both tokens when the person signs out.
 * simple-oauth2 has no OpenID Connect sign-out, so the person stays signed in at Community.
 *
 *   ISSUER=http://localhost:3000 CLIENT_ID=… CLIENT_SECRET=… node examples/simple-oauth2/server.mjs
 *
 * Register a confidential app with redirect URI {APP_URL}/callback (examples/README.md). APP_URL
 * defaults to http://localhost:PORT (PORT 4007).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { AuthorizationCode } from 'simple-oauth2';

const ISSUER = process.env.ISSUER ?? 'http://localhost:3000';
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET;
const PORT = Number(process.env.PORT ?? 4007);
const APP_URL = process.env.APP_URL ?? `http://localhost:${PORT}`;
const COOKIE = 'simple_oauth2_example';
if (!CLIENT_ID || !CLIENT_SECRET) {
  console.error('Set CLIENT_ID and CLIENT_SECRET (examples/README.md says how to register the app).');
  process.exit(2);
}

const REDIRECT_URI = `${APP_URL}/callback`;
const oauth = new AuthorizationCode({
  client: { id: CLIENT_ID, secret: CLIENT_SECRET },
  // authorizePath's default, /oauth/authorize, is right; the token and revocation paths are not.
  auth: { tokenHost: ISSUER, tokenPath: '/api/oauth/token', revokePath: '/api/oauth/revoke' },
});

/** The app's own sessions, by the random value of its cookie. */
const sessions = new Map();

function sessionOf(request, response) {
  const id = /(?:^|;\s*)simple_oauth2_example=([\w-]+)/.exec(request.headers.cookie ?? '')?.[1];
  if (id && sessions.has(id)) return sessions.get(id);
  const fresh = randomBytes(24).toString('base64url');
  const session = {};
  sessions.set(fresh, session);
  response.setHeader('set-cookie', `${COOKIE}=${fresh}; Path=/; HttpOnly; SameSite=Lax`);
  return session;
}

/** GET {path} of the API with the access token. */
async function readApi(accessToken, path) {
  const response = await fetch(`${ISSUER}/api/open/v1${path}`, { headers: { authorization: `Bearer ${accessToken}` } });
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
      return page(response, 'simple-oauth2 example', `${notice(session)}
<form method="get" action="/login"><button>Sign in with Community</button></form>`);
    }
    return page(response, `Signed in as ${session.me.username}`, `${notice(session)}
<h2>GET /api/open/v1/me</h2><pre id="me">${escape(JSON.stringify(session.me, null, 2))}</pre>
<h2>GET /api/open/v1/me/posts</h2><pre id="posts">${escape(JSON.stringify(session.posts, null, 2))}</pre>
<form method="post" action="/refresh"><button>Refresh tokens</button></form>
<form method="post" action="/logout"><button>Sign out</button></form>`);
  },

  'GET /login': (request, response, session) => {
    const state = randomBytes(16).toString('base64url');
    const codeVerifier = randomBytes(32).toString('base64url');
    session.pending = { state, codeVerifier };
    redirect(response, oauth.authorizeURL({
      redirect_uri: REDIRECT_URI, scope: 'profile:read posts:read', state,
      code_challenge: createHash('sha256').update(codeVerifier).digest('base64url'), code_challenge_method: 'S256',
    }));
  },

  'GET /callback': async (request, response, session) => {
    const pending = session.pending;
    delete session.pending;
    const query = new URL(request.url, APP_URL).searchParams;
    if (!pending || query.get('state') !== pending.state) return page(response, 'Sign-in not recognised', '<p>This sign-in did not start here.</p>', 400);
    if (query.has('error')) return page(response, 'Sign-in refused', `<p>${escape(query.get('error_description') ?? query.get('error'))}</p>`, 400);
    session.tokens = await oauth.getToken({ code: query.get('code') ?? '', redirect_uri: REDIRECT_URI, code_verifier: pending.codeVerifier });
    Object.assign(session, await readAccount(session.tokens.token.access_token));
    redirect(response, '/');
  },

  'POST /refresh': async (request, response, session) => {
    if (!session.tokens) return redirect(response, '/');
    // Every refresh rotates the refresh token: keep the new AccessToken, it holds the new one.
    session.tokens = await session.tokens.refresh();
    Object.assign(session, await readAccount(session.tokens.token.access_token));
    session.notice = 'Tokens refreshed; /me and /me/posts read again with the new access token.';
    redirect(response, '/');
  },

  'POST /logout': async (request, response, session) => {
    if (!session.tokens) return redirect(response, '/');
    // Revokes the access token, then the refresh token (which alone would end both).
    await session.tokens.revokeAll();
    for (const key of Object.keys(session)) delete session[key];
    redirect(response, '/signed-out');
  },

  'GET /signed-out': (request, response) => {
    page(response, 'Signed out', '<p>Signed out of this app; its tokens were revoked.</p><p><a href="/">Home</a></p>');
  },
};

createServer(async (request, response) => {
  const route = routes[`${request.method} ${new URL(request.url, APP_URL).pathname}`];
  if (!route) return page(response, 'Not found', '', 404);
  try {
    await route(request, response, sessionOf(request, response));
  } catch (error) {
    console.error(error);
    page(response, 'Something went wrong', `<pre id="error">${escape(String(error?.message ?? error))}</pre><p><a href="/">Home</a></p>`, 500);
  }
}).listen(PORT, process.env.HOST ?? '127.0.0.1', () => console.log(`simple-oauth2 example listening on ${APP_URL}`));

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

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
