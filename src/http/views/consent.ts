/** The consent page (INTERFACE section 10): who asks, for what, and where the answer goes. */
import type { AuthorizationRequest } from '../../core/oauth/authorize/request.js';
import { redirectTarget } from '../../core/oauth/clients.js';
import { SCOPES } from '../../core/oauth/scopes.js';
import { html } from './html.js';
import { type PageContext, layout } from './layout.js';

export interface ConsentView {
  request: AuthorizationRequest;
  owner: string | null;
  username: string;
  fields: Array<[string, string]>;
}

export function consentPage(context: PageContext, view: ConsentView) {
  const { client } = view.request;
  const redirectHost = redirectTarget(view.request.redirectUri);
  return layout(`Allow ${client.name}?`, context, html`<section class="card narrow consent">
<h1>Allow <strong>${client.name}</strong> to use your account?</h1>
<p>Signed in as <strong>${view.username}</strong>.</p>
<p class="muted">${client.name} is made by ${view.owner ? html`<strong>${view.owner}</strong>` : 'the site operators'}${client.homepageUrl
    ? html` · <a href="${client.homepageUrl}" rel="noopener noreferrer">${client.homepageUrl}</a>` : ''}.</p>
${client.description ? html`<p>${client.description}</p>` : ''}
<h2>It will be able to read</h2>
<ul class="scopes">
${view.request.scopes.map((scope) => html`<li><strong>${scope}</strong>: ${SCOPES[scope].allows}
  <br><span class="muted">Not: ${SCOPES[scope].doesNotAllow}</span></li>`)}
</ul>
${view.request.droppedScopes.length > 0
    ? html`<p class="muted">It also asked for ${view.request.droppedScopes.map((s, i) => html`${i > 0 ? ' and ' : ''}<code>${s}</code>`)}.
  This site never shares ${view.request.droppedScopes.length > 1 ? 'these' : 'that'} with applications, so it will not get ${view.request.droppedScopes.length > 1 ? 'them' : 'it'}.</p>` : ''}
${view.request.scopes.includes('offline_access') ? '' : html`<p class="muted">Every application that you allow keeps this access while you are not using it, until you withdraw it.</p>`}
<p>After you answer you will be sent to <strong>${redirectHost}</strong>.</p>
<form method="post" action="/oauth/authorize">
  <input type="hidden" name="_csrf" value="${context.csrf}">
${view.fields.map(([name, value]) => html`  <input type="hidden" name="${name}" value="${value}">
`)}  <div class="actions">
    <button type="submit" name="decision" value="approve">Allow</button>
    <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
  </div>
</form>
<p class="hint">You can withdraw this later under Settings → Applications.</p>
</section>`);
}
