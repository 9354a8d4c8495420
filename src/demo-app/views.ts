/** The demo app's pages: its own look, a banner saying it is an example, in the reader's language. */
import type { Translator } from '../core/locales.js';
import { type Html, html } from '../http/views/html.js';
import { rich } from '../http/views/words.js';
import type { DemoSession } from './plugin.js';

function page(t: Translator, title: string, main: Html): string {
  return html`<!doctype html>
<html lang="${t.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t.text('demo-app.pageTitle', { title })}</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="icon" href="data:,">
</head>
<body>
<header class="site-header"><a class="brand" href="/demo-app">${t.text('demo-app.appName')}</a><nav aria-label="${t.text('demo-app.navLabel')}"><a href="/">${t.text('demo-app.backToCommunity')}</a></nav></header>
<main id="main">
<p class="demo-banner" role="note">${rich(t, 'demo-app.banner', { b: (chunks) => html`<strong>${chunks}</strong>` })}</p>
${main}
</main>
</body>
</html>
`.value;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function demoAppPage(t: Translator, state: { configured: boolean; session: DemoSession | undefined; scope: string }): string {
  if (!state.configured) {
    return page(t, t.text('demo-app.notConfiguredTitle'), html`<section class="card"><h1>${t.text('demo-app.appName')}</h1>
<p>${rich(t, 'demo-app.notConfigured', { command: html`<code>npm start</code>`, file: html`<code>data/demo-credentials.json</code>` })}</p></section>`);
  }
  const signedIn = state.session?.signedIn;
  if (!signedIn) {
    const notice = state.session?.notice;
    return page(t, t.text('demo-app.signInTitle'), html`<section class="card"><h1>${t.text('demo-app.appName')}</h1>
${notice === 'back-channel logout' ? html`<p class="notice" role="status">${t.text('demo-app.backchannelNotice')}</p>` : ''}
<p>${rich(t, 'demo-app.signInIntro', { scope: html`<code>${state.scope}</code>` })}</p>
<p><a class="button" href="/demo-app/login">${t.text('demo-app.signInButton')}</a></p></section>`);
  }
  const name = String(signedIn.claims.preferred_username ?? signedIn.claims.sub ?? '?');
  return page(t, t.text('demo-app.signedInTitle'), html`<section class="card"><h1>${t.text('demo-app.signedInAs', { name })}</h1>
<p>${rich(t, 'demo-app.grantedScopes', { scope: html`<code>${signedIn.scope}</code>` })}</p>
<form method="post" action="/demo-app/logout"><input type="hidden" name="csrf" value="${state.session?.csrf ?? ''}"><button type="submit" class="secondary">${t.text('demo-app.signOut')}</button></form>
<p class="hint">${t.text('demo-app.signOutHint')}</p>
</section>
<section class="card" aria-labelledby="profile-heading"><h2 id="profile-heading">${rich(t, 'demo-app.profileHeading', { request: html`<code>GET /api/open/v1/me</code>` })}</h2><pre>${json(signedIn.profile)}</pre></section>
<section class="card" aria-labelledby="posts-heading"><h2 id="posts-heading">${rich(t, 'demo-app.postsHeading', { request: html`<code>GET /api/open/v1/me/posts</code>` })}</h2><pre>${json(signedIn.posts)}</pre></section>
<section class="card" aria-labelledby="claims-heading"><h2 id="claims-heading">${t.text('demo-app.claimsHeading')}</h2><pre>${json(signedIn.claims)}</pre></section>`);
}

/**
 * Where the service sends the browser back after a sign-out. Only a return carrying the state the
 * app sent says the member signed out of the site (SITE_NAME): any page may link here (attack81), and the
 * member it reaches may well still be signed in, which is then said with the alert.
 */
export function demoSignedOutPage(t: Translator, outcome: 'signed out' | 'not signed in' | 'still signed in'): string {
  if (outcome === 'still signed in') {
    return page(t, t.text('demo-app.signOutUnconfirmedTitle'), html`<section class="card"><h1>${t.text('demo-app.signOutUnconfirmedTitle')}</h1>
<p class="alert" role="alert">${t.text('demo-app.stateMismatch')}</p>
<p>${t.text('demo-app.stillSignedIn')}</p>
<p class="links"><a href="/demo-app">${t.text('demo-app.backToDemoApp')}</a></p></section>`);
  }
  return page(t, t.text('demo-app.signedOutTitle'), html`<section class="card"><h1>${t.text('demo-app.signedOutTitle')}</h1>
<p role="status">${t.text(outcome === 'signed out' ? 'demo-app.signedOut' : 'demo-app.notSignedIn')}</p>
<p class="links"><a href="/demo-app">${t.text('demo-app.backToDemoApp')}</a></p></section>`);
}

export function demoErrorPage(t: Translator, message: string | Html): string {
  return page(t, t.text('demo-app.problemTitle'), html`<section class="card"><h1>${t.text('demo-app.problemTitle')}</h1><p role="alert">${message}</p>
<p class="links"><a href="/demo-app">${t.text('demo-app.backToDemoApp')}</a></p></section>`);
}
