/**
 * The page of a `form_post` authorization response (OAuth 2.0 Form Post Response Mode 2): hidden
 * fields the browser posts to the app's redirect URI. `/static/form-post.js` sends them as the page
 * loads (the CSP forbids inline script); without JavaScript, its button does.
 */
import type { AuthorizationResponse } from '../../core/oauth/authorize/request.js';
import { percentEncodeNonAscii } from '../../core/urls.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { appName, appNameInTitle, rich } from './words.js';

export function formPostPage(context: PageContext, response: AuthorizationResponse): Html {
  const { t } = context;
  const fields = Object.entries(response.parameters).filter((field): field is [string, string] => field[1] !== null);
  return layout(t.text('consent.backToTitle', { app: appNameInTitle(t, response.clientName) }).trim(), context, html`<section class="card narrow">
<h1>${rich(t, 'consent.backTo', { app: response.clientName, b: appName })}</h1>
<form method="post" action="${percentEncodeNonAscii(response.redirectUri)}" id="authorization-response">
${fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<p>${t.text('consent.takingYouBack')}</p>
<div class="actions"><button type="submit">${t.text('consent.continue')}</button></div>
</form>
</section>`, { script: 'form-post' });
}
