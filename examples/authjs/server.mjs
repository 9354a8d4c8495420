/**
 * Sign in with Community from a Node server app with Auth.js (@auth/core) and its defaults: an
 * `oidc` provider found by discovery, checks ["pkce"], HTTP Basic client authentication, its own
 * sign-in and sign-out pages, a JWT session cookie. /me and /me/posts with the access token; refresh and
 * revocation as Auth.js's "Refresh Token Rotation" guide does them (the library does neither):
 * the `jwt` callback refreshes when asked through a session update, and the `signOut` event
 * revokes. Auth.js has no OpenID Connect sign-out, so the person stays signed in at Community.
 *
 *   ISSUER=http://localhost:3000 CLIENT_ID=… CLIENT_SECRET=… node examples/authjs/server.mjs
 *
 * Register a confidential app with redirect URI {APP_URL}/auth/callback/community
 * (examples/README.md). APP_URL defaults to http://localhost:PORT (PORT 4004). AUTH_SECRET
 * encrypts the session cookie (a random one is made at start: sessions then end on restart).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { Auth } from '@auth/core';
import { getToken } from '@auth/core/jwt';

const ISSUER = process.env.ISSUER ?? 'http://localhost:3000';
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET;
const PORT = Number(process.env.PORT ?? 4004);
const APP_URL = process.env.APP_URL ?? `http://localhost:${PORT}`;
const AUTH_SECRET = process.env.AUTH_SECRET ?? randomBytes(32).toString('base64url');
if (!CLIENT_ID || !CLIENT_SECRET) {
  console.error('Set CLIENT_ID and CLIENT_SECRET (examples/README.md says how to register the app).');
  process.exit(2);
}

const metadata = await (await fetch(new URL('/.well-known/openid-configuration', ISSUER))).json();
const basic = `Basic ${btoa(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`)}`;

/** POSTs a form to one of the service's endpoints with the app's credentials (as Auth.js does at the token endpoint). */
async function post(endpoint, fields) {
  const response = await fetch(endpoint, { method: 'POST', headers: { authorization: basic }, body: new URLSearchParams(fields) });
  const body = await response.json();
  if (!response.ok) throw new Error(`${endpoint} answered ${response.status}: ${body.error_description ?? body.error}`);
  return body;
}

const authConfig = {
  basePath: '/auth',
  trustHost: true,
  secret: AUTH_SECRET,
  providers: [{
    id: 'community', name: 'Community', type: 'oidc', issuer: metadata.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET,
    // Auth.js's default scope (openid profile email) and the API's profile:read and posts:read; email is dropped by the service.
    authorization: { params: { scope: 'openid profile email profile:read posts:read' } },
    // The sign-in page's button shows https://authjs.dev/img/providers/{id}.svg unless given a logo,
    // and there is none for "community": the browser reports the failed image.
    style: { logo: '/community.svg' },
  }],
  callbacks: {
    async jwt({ token, account, trigger, session }) {
      if (account) {
        return { ...token, accessToken: account.access_token, refreshToken: account.refresh_token, expiresAt: account.expires_at };
      }
      if (trigger !== 'update' || session !== 'refresh') return token;
      // Every refresh rotates the refresh token: keep the new one.
      const tokens = await post(metadata.token_endpoint, { grant_type: 'refresh_token', refresh_token: token.refreshToken });
      return { ...token, accessToken: tokens.access_token, refreshToken: tokens.refresh_token, expiresAt: Math.floor(Date.now() / 1000) + tokens.expires_in };
    },
    // What the browser may read at /auth/session: never the tokens.
    session: ({ session }) => session,
  },
  events: {
    // Revoking the refresh token ends the access tokens of the same sign-in too.
    async signOut({ token }) {
      if (token?.refreshToken) await post(metadata.revocation_endpoint, { token: token.refreshToken });
    },
  },
};

const LOGO = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="10" fill="#2b5fd9"/></svg>';

/** Runs a request through Auth.js (a Web Request in, a Web Response out). */
function auth(path, { method = 'GET', cookie = '', json } = {}) {
  const headers = new Headers({ cookie });
  if (json) headers.set('content-type', 'application/json');
  return Auth(new Request(new URL(path, APP_URL), { method, headers, body: json ? JSON.stringify(json) : undefined }), authConfig);
}

/** The session's JWT with the tokens, read on the server (`getToken`), or null. */
function sessionToken(request) {
  return getToken({ req: { headers: { cookie: request.headers.cookie ?? '' } }, secret: AUTH_SECRET, secureCookie: APP_URL.startsWith('https:') });
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
  'GET /': async (request, response) => {
    const token = await sessionToken(request);
    const refreshed = new URL(request.url, APP_URL).searchParams.has('refreshed');
    if (!token) {
      return page(response, 'Auth.js example', '<p><a href="/auth/signin?callbackUrl=%2F">Sign in</a></p>');
    }
    const { me, posts } = await readAccount(token.accessToken);
    page(response, `Signed in as ${token.name}`, `${refreshed ? '<p role="status">Tokens refreshed; /me and /me/posts read again with the new access token.</p>' : ''}
<h2>GET /api/open/v1/me</h2><pre id="me">${escape(JSON.stringify(me, null, 2))}</pre>
<h2>GET /api/open/v1/me/posts</h2><pre id="posts">${escape(JSON.stringify(posts, null, 2))}</pre>
<form method="post" action="/refresh"><button>Refresh tokens</button></form>
<p><a href="/auth/signout?callbackUrl=%2Fsigned-out">Sign out</a></p>`);
  },

  // A session update, as Auth.js's client-side update() sends it: the jwt callback refreshes.
  'POST /refresh': async (request, response) => {
    const cookies = new Map(parseCookies(request.headers.cookie));
    const csrf = await auth('/auth/csrf', { cookie: request.headers.cookie });
    for (const setCookie of csrf.headers.getSetCookie()) cookies.set(...setCookie.split(';')[0].split(/=(.*)/s, 2));
    const { csrfToken } = await csrf.json();
    const updated = await auth('/auth/session', {
      method: 'POST', cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '), json: { csrfToken, data: 'refresh' },
    });
    response.setHeader('set-cookie', [...csrf.headers.getSetCookie(), ...updated.headers.getSetCookie()]);
    redirect(response, updated.ok ? '/?refreshed' : '/');
  },

  'GET /community.svg': (request, response) => {
    response.writeHead(200, { 'content-type': 'image/svg+xml', 'cache-control': 'max-age=86400' });
    response.end(LOGO);
  },

  // Auth.js's own pages name no icon, so the browser asks for this one.
  'GET /favicon.ico': (request, response) => {
    response.writeHead(204, { 'cache-control': 'max-age=86400' }).end();
  },

  'GET /signed-out': (request, response) => {
    page(response, 'Signed out', '<p>Signed out of this app; its tokens were revoked.</p><p><a href="/">Home</a></p>');
  },
};

createServer(async (request, response) => {
  const path = new URL(request.url, APP_URL).pathname;
  try {
    if (path.startsWith('/auth/')) return await send(response, await Auth(await webRequest(request), authConfig));
    const route = routes[`${request.method} ${path}`];
    if (!route) return page(response, 'Not found', '', 404);
    await route(request, response);
  } catch (error) {
    console.error(error);
    page(response, 'Something went wrong', `<pre id="error">${escape(String(error?.message ?? error))}</pre><p><a href="/">Home</a></p>`, 500);
  }
}).listen(PORT, process.env.HOST ?? '127.0.0.1', () => console.log(`Auth.js example listening on ${APP_URL}`));

/** Node's request as a Web Request, for Auth(). */
async function webRequest(request) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  let body;
  if (request.method === 'POST') {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    body = Buffer.concat(chunks);
  }
  return new Request(new URL(request.url, APP_URL), { method: request.method, headers, body });
}

/** A Web Response from Auth() written to Node's response, every Set-Cookie kept apart. */
async function send(response, answer) {
  for (const [name, value] of answer.headers) if (name !== 'set-cookie') response.setHeader(name, value);
  const cookies = answer.headers.getSetCookie();
  if (cookies.length > 0) response.setHeader('set-cookie', cookies);
  response.writeHead(answer.status);
  response.end(Buffer.from(await answer.arrayBuffer()));
}

function parseCookies(header = '') {
  return header.split(/;\s*/).filter(Boolean).map((pair) => pair.split(/=(.*)/s, 2));
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
