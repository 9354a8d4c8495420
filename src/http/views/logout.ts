/** The pages of signing out: the question before it, and "you are signed out". */
import type { User } from '../../core/accounts/ports.js';
import type { Words } from '../../core/errors.js';
import type { Client } from '../../core/oauth/ports.js';
import { END_SESSION_PATH, type RefusedRedirect } from '../../core/oidc/logout/end-session.js';
import { sentenceGap } from './forms.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { chosenName, homepageLink, personName, rich } from './words.js';

export interface LogoutConfirmationView {
  client: Client | undefined;
  user: Pick<User, 'username' | 'nickname'>;
  fields: Array<[string, string]>;
}

const strong = (chunks: Array<string | Html>) => html`<strong>${chunks}</strong>`;

/** Asked when the app's id_token_hint does not prove it signed this person in here (RP-Initiated Logout 1.0 section 2). */
export function logoutConfirmationPage(context: PageContext, view: LogoutConfirmationView) {
  const { t } = context;
  const asked = view.client ? rich(t, 'logout.appAsks', { app: chosenName(view.client.name), b: strong }) : t.text('logout.anAppAsks');
  return layout(t.text('logout.confirmTitle'), context, html`<section class="card narrow">
<h1>${t.text('logout.confirmHeading')}</h1>
<p>${asked}${sentenceGap(asked)}${rich(t, 'logout.signedInAs', { name: html`<strong>${personName(view.user)}</strong>` })}</p>
<p>${t.text('logout.whatHappens')}</p>
<form method="post" action="${END_SESSION_PATH}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
${view.fields.map(([name, value]) => html`  <input type="hidden" name="${name}" value="${value}">
`)}  <div class="actions">
    <button type="submit" name="decision" value="logout">${t.text('logout.signOut')}</button>
    <button type="submit" name="decision" value="stay" class="secondary">${t.text('logout.stay')}</button>
  </div>
</form>
</section>`);
}

/** `GET /logout` while signed in: the site's own sign-out, one button. */
export function signOutPage(context: PageContext, user: Pick<User, 'username' | 'nickname'>) {
  const { t } = context;
  return layout(t.text('logout.confirmTitle'), context, html`<section class="card narrow">
<h1>${t.text('logout.confirmHeading')}</h1>
<p>${rich(t, 'logout.signedInAs', { name: html`<strong>${personName(user)}</strong>` })}</p>
<p>${t.text('logout.whatHappens')}</p>
<form method="post" action="/logout">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <div class="actions"><button type="submit">${t.text('logout.signOut')}</button></div>
</form>
</section>`);
}

export interface SignedOutView {
  client: Client | undefined;
  /** A `post_logout_redirect_uri` was sent and not returned to: say why we stay here. */
  refusedRedirect: RefusedRedirect | undefined;
}

/** Why the browser was not sent back to the app, by the refusal (`{app}` names it). */
const REFUSAL: Record<RefusedRedirect, Words> = {
  unregistered: { key: 'logout.refusedUnregistered' },
  no_hint: { key: 'logout.refusedNoHint' },
  not_the_person: { key: 'logout.refusedNotThePerson' },
};

/** After signing out: on this site's own sign-out, or when there is nowhere registered to send the browser back to. */
export function signedOutPage(context: PageContext, view: SignedOutView) {
  const { t } = context;
  const app = view.client ? chosenName(view.client.name) : t.text('logout.theApp');
  return layout(t.text('logout.signedOutTitle'), context, html`<section class="card narrow">
<h1>${t.text('logout.signedOutHeading')}</h1>
${view.refusedRedirect ? html`<p>${rich(t, REFUSAL[view.refusedRedirect].key, { app })}</p>` : ''}
${view.client?.homepageUrl ? html`<p>${rich(t, 'logout.homepage', { app: chosenName(view.client.name) })} ${homepageLink(view.client.homepageUrl)}</p>` : ''}
<p class="links"><a href="/login">${t.text('logout.signInAgain')}</a> · <a href="/">${t.text('logout.home')}</a></p>
</section>`);
}
