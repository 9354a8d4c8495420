/**
 * Community's API from an Express app with passport-oauth2. Its defaults send neither state nor
 * PKCE, which the service refuses (RFC 9700 asks for one of them), so this sets the strategy's own
 * options `state: true` and `pkce: true` (both kept in express-session; its README names neither,
 * its source and CHANGELOG do), and node-oauth's `useAuthorizationHeaderforGET(true)` so the
 * profile request sends the token in a header rather than the query string.
 * /me and /me/posts with the access token, a refresh through the strategy's own OAuth2 client (node-oauth), and
 * revocation when the person signs out. passport has no OpenID Connect sign-out, so the person
 * stays signed in at Community.
 *
 *   ISSUER=http://localhost:3000 CLIENT_ID=… CLIENT_SECRET=… node examples/passport-oauth2/server.mjs
 *
 * Register a confidential app with redirect URI {APP_URL}/callback (examples/README.md). APP_URL
 * defaults to http://localhost:PORT (PORT 4005). SESSION_SECRET signs the session cookie.
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import OAuth2Strategy from 'passport-oauth2';

const ISSUER = process.env.ISSUER ?? 'http://localhost:3000';
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET;
const PORT = Number(process.env.PORT ?? 4005);
const APP_URL = process.env.APP_URL ?? `http://localhost:${PORT}`;
const API = `${ISSUER}/api/open/v1`;
if (!CLIENT_ID || !CLIENT_SECRET) {
  console.error('Set CLIENT_ID and CLIENT_SECRET (examples/README.md says how to register the app).');
  process.exit(2);
}

const strategy = new OAuth2Strategy({
  authorizationURL: `${ISSUER}/oauth/authorize`,
  tokenURL: `${ISSUER}/api/oauth/token`,
  clientID: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  callbackURL: `${APP_URL}/callback`,
  scope: 'profile:read posts:read',
  state: true,
  pkce: true,
}, (accessToken, refreshToken, profile, done) => done(null, { profile, accessToken, refreshToken }));
// node-oauth sends ?access_token= on GET unless told to use the Authorization header; the API reads only the header.
strategy._oauth2.useAuthorizationHeaderforGET(true);
// The default userProfile() returns {}: read the person's profile and published posts instead.
strategy.userProfile = (accessToken, done) => readAccount(accessToken).then((account) => done(null, account), done);
passport.use('community', strategy);
passport.serializeUser((user, done) => done(null, user));
passport.deserializeUser((user, done) => done(null, user));

/** Refresh with the strategy's OAuth2 client: the same client authentication as the code exchange. */
function refresh(refreshToken) {
  return new Promise((resolve, reject) => {
    strategy._oauth2.getOAuthAccessToken(refreshToken, { grant_type: 'refresh_token' }, (error, accessToken, newRefreshToken) => {
      if (error) reject(new Error(`refresh answered ${error.statusCode}: ${error.data}`));
      else resolve({ accessToken, refreshToken: newRefreshToken });
    });
  });
}

/** GET {path} of the API with the strategy's OAuth2 client (the token in the Authorization header). */
function readApi(accessToken, path) {
  return new Promise((resolve, reject) => strategy._oauth2.get(`${API}${path}`, accessToken, (error, body) => {
    if (error) reject(new Error(`${path} answered ${error.statusCode}: ${error.data}`));
    else resolve(JSON.parse(body));
  }));
}

/** The person's profile (scope profile:read) and the first page of their published posts (posts:read). */
async function readAccount(accessToken) {
  return { me: await readApi(accessToken, '/me'), posts: await readApi(accessToken, '/me/posts') };
}

/** passport-oauth2 has no revocation: RFC 7009 with the same client credentials in the body. */
async function revoke(token) {
  const response = await fetch(`${ISSUER}/api/oauth/revoke`, {
    method: 'POST',
    body: new URLSearchParams({ token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
  });
  if (!response.ok) throw new Error(`revocation answered ${response.status}: ${await response.text()}`);
}

const app = express();
app.use(session({
  name: 'passport_example', secret: process.env.SESSION_SECRET ?? randomBytes(32).toString('hex'),
  resave: false, saveUninitialized: false, cookie: { httpOnly: true, sameSite: 'lax' },
}));
app.use(passport.session());

app.get('/', (request, response) => {
  const notice = request.session.notice;
  delete request.session.notice;
  const status = notice ? `<p role="status">${escape(notice)}</p>` : '';
  if (!request.user) {
    return page(response, 'passport-oauth2 example', `${status}
<form method="get" action="/login"><button>Sign in with Community</button></form>`);
  }
  page(response, `Signed in as ${request.user.profile.me.username}`, `${status}
<h2>GET /api/open/v1/me</h2><pre id="me">${escape(JSON.stringify(request.user.profile.me, null, 2))}</pre>
<h2>GET /api/open/v1/me/posts</h2><pre id="posts">${escape(JSON.stringify(request.user.profile.posts, null, 2))}</pre>
<form method="post" action="/refresh"><button>Refresh tokens</button></form>
<form method="post" action="/logout"><button>Sign out</button></form>`);
});

app.get('/login', passport.authenticate('community'));
app.get('/callback', passport.authenticate('community', { failureRedirect: '/', failureMessage: true }), (request, response) => response.redirect(303, '/'));

app.post('/refresh', async (request, response) => {
  if (!request.user) return response.redirect(303, '/');
  // Every refresh rotates the refresh token: keep the new one.
  const tokens = await refresh(request.user.refreshToken);
  const profile = await readAccount(tokens.accessToken);
  await new Promise((resolve, reject) => request.login({ profile, ...tokens }, (error) => (error ? reject(error) : resolve())));
  request.session.notice = 'Tokens refreshed; /me and /me/posts read again with the new access token.';
  response.redirect(303, '/');
});

app.post('/logout', async (request, response) => {
  if (!request.user) return response.redirect(303, '/');
  // Revoking the refresh token ends the access tokens of the same authorization too.
  await revoke(request.user.refreshToken);
  await new Promise((resolve, reject) => request.logout((error) => (error ? reject(error) : resolve())));
  response.redirect(303, '/signed-out');
});

app.get('/signed-out', (request, response) => {
  page(response, 'Signed out', '<p>Signed out of this app; its tokens were revoked.</p><p><a href="/">Home</a></p>');
});

app.use((error, request, response, next) => {
  console.error(error);
  page(response.status(500), 'Something went wrong', `<pre id="error">${escape(String(error?.message ?? error))}</pre><p><a href="/">Home</a></p>`);
});

app.listen(PORT, process.env.HOST ?? '127.0.0.1', () => console.log(`passport-oauth2 example listening on ${APP_URL}`));

function page(response, title, content) {
  response.set('cache-control', 'no-store').type('html').send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>${escape(title)}</title></head><body><h1>${escape(title)}</h1>${content}</body></html>`);
}

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
