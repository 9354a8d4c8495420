/** The pages of RP-Initiated Logout: the question before signing out, and "you are signed out". */
import type { Client } from '../../core/oauth/ports.js';
import { END_SESSION_PATH, type RefusedRedirect } from '../../core/oidc/logout/end-session.js';
import { html } from './html.js';
import { type PageContext, layout } from './layout.js';

export interface LogoutConfirmationView {
  client: Client | undefined;
  username: string;
  fields: Array<[string, string]>;
}

/** Asked when the app's id_token_hint does not prove it signed this person in here (RP-Initiated Logout 1.0 section 2). */
export function logoutConfirmationPage(context: PageContext, view: LogoutConfirmationView) {
  return layout('Sign out?', context, html`<section class="card narrow">
<h1>Sign out of Community?</h1>
<p>${view.client ? html`<strong>${view.client.name}</strong> asked to sign you out of Community as well.` : 'An application asked to sign you out of Community.'}
You are signed in as <strong>${view.username}</strong>.</p>
<p>Signing out ends your session here, and the apps you signed in to with Community are told you signed out.</p>
<form method="post" action="${END_SESSION_PATH}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
${view.fields.map(([name, value]) => html`  <input type="hidden" name="${name}" value="${value}">
`)}  <div class="actions">
    <button type="submit" name="decision" value="logout">Sign out</button>
    <button type="submit" name="decision" value="stay" class="secondary">Stay signed in</button>
  </div>
</form>
</section>`);
}

export interface SignedOutView {
  client: Client | undefined;
  /** A `post_logout_redirect_uri` was sent and not returned to: say why we stay here. */
  refusedRedirect: RefusedRedirect | undefined;
}

const REFUSAL: Record<RefusedRedirect, string> = {
  unregistered: 'asked to send you back to an address it has not registered with us, so you stay here.',
  no_hint: 'asked to send you back to it without proof that it signed you in here, so you stay here. Go back to the app yourself when you are ready.',
  not_the_person: 'asked to send you back to it, but it named someone other than the person signed in here, so you stay here. Go back to the app yourself when you are ready.',
};

/** Shown when there is nowhere registered to send the browser back to. */
export function signedOutPage(context: PageContext, view: SignedOutView) {
  const app = view.client ? view.client.name : 'The application';
  return layout('Signed out', context, html`<section class="card narrow">
<h1>You are signed out</h1>
<p role="status">You are signed out of Community.</p>
${view.refusedRedirect ? html`<p>${app} ${REFUSAL[view.refusedRedirect]}</p>` : ''}
${view.client?.homepageUrl ? html`<p>${view.client.name}'s homepage: <a href="${view.client.homepageUrl}" rel="noopener noreferrer">${view.client.homepageUrl}</a></p>` : ''}
<p><a href="/login">Sign in again</a> · <a href="/">Home</a></p>
</section>`);
}
