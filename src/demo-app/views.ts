/** The demo app's pages: its own look, and a banner saying it is an example. */
import { type Html, html } from '../http/views/html.js';
import type { DemoSession } from './plugin.js';

function page(title: string, main: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Demo App (example)</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="icon" href="data:,">
</head>
<body>
<header class="site-header"><a class="brand" href="/demo-app">Demo App</a><nav aria-label="Demo app"><a href="/">Back to Community</a></nav></header>
<main id="main">
<p class="demo-banner" role="note"><strong>This is an example third-party application.</strong> It is not part of Community: it signs you in with
OpenID Connect (authorization code flow with PKCE) and reads your data only through the public API, as any other app would.</p>
${main}
</main>
</body>
</html>
`.value;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function demoAppPage(state: { configured: boolean; session: DemoSession | undefined; scope: string }): string {
  if (!state.configured) {
    return page('Not configured', html`<section class="card"><h1>Demo App</h1>
<p>The demo app has no client credentials. <code>npm start</code> on a new embedded database registers the demo client and writes them to <code>data/demo-credentials.json</code>.</p></section>`);
  }
  const signedIn = state.session?.signedIn;
  if (!signedIn) {
    return page('Sign in', html`<section class="card"><h1>Demo App</h1>
${state.session?.notice ? html`<p class="notice" role="status">${state.session.notice}</p>` : ''}
<p>Sign in with your Community account. The app will ask for: <code>${state.scope}</code>.</p>
<p><a class="button" href="/demo-app/login">Sign in with Community</a></p></section>`);
  }
  return page('Signed in', html`<section class="card"><h1>Signed in as ${String(signedIn.claims.preferred_username ?? signedIn.claims.sub ?? 'someone')}</h1>
<p>Granted scopes: <code>${signedIn.scope}</code></p>
<form method="post" action="/demo-app/logout"><input type="hidden" name="csrf" value="${state.session?.csrf ?? ''}"><button type="submit" class="secondary">Sign out</button></form>
<p class="hint">Signs you out of the demo app and then of Community (OpenID RP-Initiated Logout). If you sign out of Community instead, Community tells this app at once (Back-Channel Logout).</p>
</section>
<section class="card" aria-labelledby="profile-heading"><h2 id="profile-heading">Profile (GET /api/open/v1/me)</h2><pre>${json(signedIn.profile)}</pre></section>
<section class="card" aria-labelledby="posts-heading"><h2 id="posts-heading">Posts (GET /api/open/v1/me/posts)</h2><pre>${json(signedIn.posts)}</pre></section>
<section class="card" aria-labelledby="claims-heading"><h2 id="claims-heading">id_token claims</h2><pre>${json(signedIn.claims)}</pre></section>`);
}

export function demoSignedOutPage(state: { stateMatched: boolean }): string {
  return page('Signed out', html`<section class="card"><h1>Signed out</h1>
<p role="status">You are signed out of the demo app and of Community.</p>
${state.stateMatched ? '' : html`<p class="alert" role="alert">This return did not carry the state the demo app sent, so it was not started here.</p>`}
<p><a href="/demo-app">Back to the demo app</a></p></section>`);
}

export function demoErrorPage(message: string): string {
  return page('Sign-in problem', html`<section class="card"><h1>Sign-in problem</h1><p role="alert">${message}</p>
<p><a href="/demo-app">Back to the demo app</a></p></section>`);
}
