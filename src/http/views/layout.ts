import type { User } from '../../core/accounts/ports.js';
import { Html, html } from './html.js';

export interface PageContext {
  /** The signed-in user, if any. */
  user?: Pick<User, 'username'> | undefined;
  /** The CSRF token for forms on this page (the sign-out button needs one). */
  csrf: string;
}

/**
 * The page frame: header with navigation, main content, footer. No script, except the one file
 * a page loads for passkeys, for a Copy button beside a secret shown once, or to post a
 * `form_post` authorization response (`script`, served from /static: the CSP forbids inline
 * script). Every page works without it.
 */
export function layout(title: string, context: PageContext, main: Html, options: { script?: 'webauthn' | 'copy' | 'form-post' | undefined } = {}): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Community</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="icon" href="data:,">
${options.script ? html`<script src="/static/${options.script}.js" defer></script>` : ''}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <a class="brand" href="/">Community</a>
  <nav aria-label="Main">
    <a href="/docs">Developers</a>
    ${context.user
      ? html`<a href="/u/${context.user.username}">${context.user.username}</a>
    <a href="/settings/tokens">Settings</a>
    <form method="post" action="/logout" class="inline"><input type="hidden" name="_csrf" value="${context.csrf}"><button type="submit" class="link">Sign out</button></form>`
      : html`<a href="/login">Sign in</a>`}
  </nav>
</header>
<main id="main">
${main}
</main>
<footer class="site-footer"><p>Community · <a href="/docs">API documentation</a></p></footer>
</body>
</html>
`;
}

/** A short page for an error a person meets: what went wrong, in words, and no redirect. */
export function errorPage(context: PageContext, heading: string, message: string): Html {
  return layout(heading, context, html`<section class="card narrow">
<h1>${heading}</h1>
<p>${message}</p>
<p><a href="/">Back to the home page</a></p>
</section>`);
}
