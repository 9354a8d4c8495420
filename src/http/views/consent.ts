/** The consent page (INTERFACE sections 10 and 12): who asks, for what in plain words, and where the answer goes. */
import type { User } from '../../core/accounts/ports.js';
import type { AuthorizationRequest } from '../../core/oauth/authorize/request.js';
import { redirectTarget, redirectsToDeviceOrLocalNetwork } from '../../core/oauth/clients.js';
import { documentHost } from '../../core/oauth/client-metadata.js';
import type { Client } from '../../core/oauth/ports.js';
import type { Scope } from '../../core/oauth/scopes.js';
import type { Translator } from '../../core/locales.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { appName, appNameInSentence, appNameInTitle, homepageLink, listOf, personName, rich, scopeWords } from './words.js';

export interface ConsentView {
  request: AuthorizationRequest;
  owner: Pick<User, 'username' | 'nickname'> | null;
  user: Pick<User, 'username' | 'nickname'>;
  fields: Array<[string, string]>;
  /** The scopes the member already granted this app: on a repeat request the others are marked new. */
  granted: readonly Scope[];
}

function scopeItem(t: Translator, scope: Scope, isNew: boolean): Html {
  const words = scopeWords(t, scope);
  return html`<li><strong class="scope-title">${words.title}</strong> <small class="muted"><code>${scope}</code></small>${isNew
    ? html` <span class="tag">${t.text('consent.newScope')}</span>` : ''}
  <br>${words.allows}
  <br><span class="muted">${words.notAllowed}</span></li>`;
}

/**
 * What the page says of an app its own document describes: that no one reviewed it, unless staff
 * did (then "Verified by" says so, and the two would contradict each other), and a warning when its
 * answer stays on this device or network, which names the document's host apart only when it is
 * another.
 */
function describedApp(t: Translator, client: Client, host: string, redirectUri: string, destination: string): Html {
  const local = !redirectsToDeviceOrLocalNetwork(redirectUri) ? undefined
    : destination === host ? t.text('consent.documentLocalRedirectSameHost', { target: destination })
    : t.text('consent.documentLocalRedirect', { target: destination, host });
  return html`${client.verifiedAt === null ? html`<p class="muted">${rich(t, 'consent.documentNotReviewed', { app: appNameInSentence(client.name), host })}</p>` : ''}
${local === undefined ? '' : html`<p class="alert" role="alert">${local}</p>`}`;
}

/** A link to the app's homepage, after what the page says of who made it. */
function homepageAfter(client: Client, separator: string): Html | '' {
  return client.homepageUrl ? html`${separator}${homepageLink(client.homepageUrl)}` : '';
}

export function consentPage(context: PageContext, view: ConsentView) {
  const { t } = context;
  const { client } = view.request;
  const target = redirectTarget(view.request.redirectUri);
  const destination = 'host' in target ? target.host : t.text('consent.nativeApp', { scheme: target.appScheme });
  // A repeat request: the member granted this app something before, so what is new is marked.
  const repeat = view.granted.length > 0;
  const dropped = view.request.droppedScopes;
  // An app its own document describes (INTERFACE section 13): the host that vouches for it comes
  // first, and its name is only its claim.
  const described = documentHost(client);
  return layout(t.text('consent.title', { app: appNameInTitle(t, client.name) }), context, html`<section class="card narrow consent">
${described === undefined ? '' : html`<p class="document-host">${rich(t, 'consent.documentHost', { host: described, b: (chunks) => html`<strong>${chunks}</strong>` })}</p>
`}<h1>${rich(t, 'consent.heading', { app: client.name, b: appName })}</h1>
<p>${rich(t, 'consent.signedInAs', { name: html`<strong>${personName(view.user)}</strong>` })}</p>
${described !== undefined ? describedApp(t, client, described, view.request.redirectUri, destination)
  : client.selfRegistered
    // INTERFACE section 13: nobody answers for an app that registered itself (RFC 7591), until staff verify it.
    ? client.verifiedAt === null
      ? html`<p class="alert">${rich(t, 'consent.selfRegistered', { app: appNameInSentence(client.name) })}${homepageAfter(client, ' ')}</p>`
      : client.homepageUrl ? html`<p class="muted">${homepageAfter(client, '')}</p>` : ''
    : html`<p class="muted">${view.owner
    ? rich(t, 'consent.madeBy', { app: appNameInSentence(client.name), owner: html`<strong>${personName(view.owner)}</strong>` })
    : rich(t, 'consent.madeByOperators', { app: appNameInSentence(client.name) })}${homepageAfter(client, ' · ')}</p>`}
${client.verifiedAt === null ? '' : html`<p class="verified"><span class="tag member">${t.text('consent.verifiedBy')}</span></p>`}
${described === undefined && client.description ? html`<p class="app-description">${client.description}</p>` : ''}
<h2>${t.text('consent.willRead')}</h2>
<ul class="scopes">
${view.request.scopes.map((scope) => scopeItem(t, scope, repeat && !view.granted.includes(scope)))}
</ul>
${dropped.length > 0
    ? html`<p class="muted">${rich(t, 'consent.droppedScopes', { scopes: listOf(t, dropped.map((s) => html`<code>${s}</code>`)), count: dropped.length })}</p>` : ''}
${view.request.scopes.includes('offline_access') ? '' : html`<p class="muted">${t.text('consent.keepsAccess')}</p>`}
<p>${rich(t, 'consent.sentTo', { host: html`<strong>${destination}</strong>` })}</p>
<form method="post" action="/oauth/authorize">
  <input type="hidden" name="_csrf" value="${context.csrf}">
${view.fields.map(([name, value]) => html`  <input type="hidden" name="${name}" value="${value}">
`)}  <div class="actions">
    <button type="submit" name="decision" value="approve">${t.text('consent.allow')}</button>
    <button type="submit" name="decision" value="deny" class="secondary">${t.text('consent.deny')}</button>
  </div>
</form>
<p class="hint">${t.text('consent.withdrawLater')}</p>
</section>`);
}
