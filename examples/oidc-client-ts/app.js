// A browser-only app (a public client, no secret) that signs in with Community through
// oidc-client-ts, with its defaults: the code flow with PKCE, tokens kept in sessionStorage.
// Served by server.mjs, which writes config.js from ISSUER and CLIENT_ID.
import config from './config.js';

const { UserManager } = window.oidc;

const users = new UserManager({
  authority: config.issuer,
  client_id: config.clientId,
  redirect_uri: `${location.origin}/callback`,
  post_logout_redirect_uri: `${location.origin}/signed-out`,
  // The default is `openid` alone; profile:read lets the app read /me, posts:read /me/posts.
  scope: 'openid profile profile:read posts:read',
  // Documented option: signing out revokes the access and refresh tokens first.
  revokeTokensOnSignout: true,
});

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

/** GET {path} of the API with the user's access token. */
async function readApi(user, path) {
  const response = await fetch(`${config.issuer}/api/open/v1${path}`, { headers: { authorization: `Bearer ${user.access_token}` } });
  if (!response.ok) throw new Error(`${path} answered ${response.status}`);
  return response.json();
}

async function home() {
  const user = await users.getUser();
  if (!user) {
    show('oidc-client-ts example', button('Sign in with Community', () => users.signinRedirect()));
    return;
  }
  const me = await readApi(user, '/me');
  const posts = await readApi(user, '/me/posts');
  show(`Signed in as ${user.profile.preferred_username}`,
    element('h2', {}, 'GET /api/open/v1/me'),
    element('pre', { id: 'me' }, JSON.stringify(me, null, 2)),
    element('h2', {}, 'GET /api/open/v1/me/posts'),
    element('pre', { id: 'posts' }, JSON.stringify(posts, null, 2)),
    element('h2', {}, 'id_token claims'),
    element('pre', { id: 'claims' }, JSON.stringify(user.profile, null, 2)),
    button('Refresh tokens', async () => {
      // With a refresh token, signinSilent() uses it (no iframe); the new refresh token is kept.
      await users.signinSilent();
      await home();
      say('Tokens refreshed; /me and /me/posts read again with the new access token.');
    }),
    button('Sign out', () => users.signoutRedirect()));
}

function failed(error) {
  show('Something went wrong', element('pre', { id: 'error' }, String(error?.message ?? error)));
  console.error(error);
}

async function route() {
  if (location.pathname === '/callback') {
    await users.signinRedirectCallback();
    history.replaceState(null, '', '/');
    return home();
  }
  if (location.pathname === '/signed-out') {
    await users.signoutRedirectCallback();
    show('Signed out', element('p', {}, 'Signed out of this app and of Community; the tokens were revoked.'));
    return;
  }
  return home();
}

route().catch(failed);
