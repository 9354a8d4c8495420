import type { User } from '../../core/accounts/ports.js';
import { LOCALES, LOCALE_NAMES } from '../../core/locales.js';
import { PROFILE_SETTINGS_PATH } from '../../core/urls.js';
import { type Html, html } from './html.js';
import { type Reader, personName } from './words.js';

export interface PageContext extends Reader {
  /** The signed-in user, if any. */
  user?: Pick<User, 'username' | 'nickname'> | undefined;
  /** The CSRF token for forms on this page (the sign-out button needs one). */
  csrf: string;
  /** This page's path and query: where the language picker comes back to. */
  path: string;
}

/**
 * The page frame: header with navigation, main content, footer with the language picker. No
 * script, except the one file a page loads for passkeys, for a Copy button beside a secret shown
 * once or a code block, to show a password as it is typed, to post a `form_post` authorization
 * response, or to draw the API reference
 * (`script`, served from /static: the CSP forbids inline script). Every page works without it.
 */
export function layout(title: string, context: PageContext, main: Html, options: { script?: 'webauthn' | 'copy' | 'form-post' | 'show-password' | 'api-reference' | undefined } = {}): Html {
  const { t } = context;
  return html`<!doctype html>
<html lang="${t.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${t.text('common.siteName')}</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="icon" href="data:,">
${options.script ? html`<script src="/static/${options.script}.js" defer></script>` : ''}
</head>
<body>
<a class="skip-link" href="#main">${t.text('common.skipToContent')}</a>
<header class="site-header">
  <a class="brand" href="/">${t.text('common.siteName')}</a>
  <nav aria-label="${t.text('common.mainNavigation')}">
    <a href="/docs">${t.text('common.developers')}</a>
    ${context.user
      ? html`<a class="person" href="/u/${context.user.username}">${personName(context.user)}</a>
    <a href="${PROFILE_SETTINGS_PATH}">${t.text('common.settings')}</a>
    <form method="post" action="/logout" class="inline"><input type="hidden" name="_csrf" value="${context.csrf}"><button type="submit" class="link">${t.text('common.signOut')}</button></form>`
      : html`<a href="/login">${t.text('common.signIn')}</a>`}
  </nav>
</header>
<main id="main">
${main}
</main>
<footer class="site-footer">
<p>${t.text('common.siteName')} · <a href="/docs">${t.text('common.apiDocumentation')}</a></p>
${languagePicker(context)}
</footer>
</body>
</html>
`;
}

/**
 * INTERFACE section 12: a form on every page that sets the `lang` cookie and comes back here. It
 * has no hidden field, so a script that gathers a page's hidden fields for its main form (the
 * consent form, say) gathers none of the picker's.
 */
function languagePicker(context: PageContext): Html {
  const { t } = context;
  return html`<form method="post" action="/language?${new URLSearchParams({ return_to: context.path }).toString()}" class="language-picker">
<label for="language-picker">${t.text('common.language')}</label>
<select id="language-picker" name="lang">
${LOCALES.map((locale) => html`<option value="${locale}" lang="${locale}"${locale === t.locale ? html` selected` : ''}>${LOCALE_NAMES[locale]}</option>`)}
</select>
<button type="submit" class="secondary">${t.text('common.changeLanguage')}</button>
</form>`;
}

/** What frames a page's main content: the site's `layout`, or a part of the site's own (the staff console's `consoleLayout`). */
export type PageFrame = (title: string, main: Html) => Html;

/**
 * A short page for an error a person meets: what went wrong, in words, and no redirect.
 * `details`: the error's English description, for the developer of the app that sent the person
 * here, under its own heading on a page in another language (protocol text stays English).
 * `back`: the way out, the home page unless the error is met somewhere with a home of its own (the
 * staff console), whose pages are framed by its own `frame`.
 */
export function errorPage(context: PageContext, heading: string, message: string | Html,
  options: { details?: { summary: string; text: string }; back?: { href: string; words: string }; frame?: PageFrame | undefined } = {}): Html {
  const { t } = context;
  const { details, back = { href: '/', words: t.text('common.backHome') }, frame = (title, main) => layout(title, context, main) } = options;
  return frame(heading, html`<section class="card narrow">
<h1>${heading}</h1>
<p>${message}</p>
${details === undefined ? '' : html`<details><summary>${details.summary}</summary><p><code lang="en">${details.text}</code></p></details>`}
<p class="links"><a href="${back.href}">${back.words}</a></p>
</section>`);
}
