import type { Locale } from '../../core/locales.js';
import type { User } from '../../core/accounts/ports.js';
import { PASSWORD_MAX_LENGTH } from '../../core/accounts/passwords.js';
import { type FormErrors, type ProblemWords, control, errorSummary, errorsFor, fieldMessage } from './forms.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { appName, passkeyStatus, rich } from './words.js';

/**
 * The longest username the sign-in form sends, its field's `maxlength` and the route's cap. Not
 * `TYPED_USERNAME_MAX_LENGTH`: the server trims what was typed before counting it, so spaces
 * around a name at that bound (pasted with it) would have the browser refuse or cut a username
 * the server takes.
 */
export const SIGN_IN_USERNAME_MAX_LENGTH = 256;

/**
 * What sign-in and sign-up carry from page to page in place of an authorization request too long
 * to return to (`MAX_RETURN_TO_LENGTH`): that the notice is shown, and the request's language (its
 * first supported `ui_locales`, OpenID Connect Core 3.1.2.1), which its dropped `return_to` held.
 */
export interface LostRequest {
  requestTooLong?: boolean | undefined;
  uiLocales?: Locale | undefined;
}

/** The query that carries `returnTo` (none for the home page) and a `LostRequest` to the other of sign-in and sign-up. */
export function returnQuery(returnTo: string, lost: LostRequest = {}): string {
  const query = new URLSearchParams(returnTo === '/' ? {} : { return_to: returnTo });
  if (lost.requestTooLong) query.set('too_long', '1');
  if (lost.uiLocales) query.set('ui_locales', lost.uiLocales);
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

/** A `LostRequest` as a form's hidden fields, so a refused attempt's page says it again, in the same language. */
export function lostRequestFields(lost: LostRequest): Html {
  return html`${lost.requestTooLong ? html`<input type="hidden" name="too_long" value="1">` : ''}${lost.uiLocales ? html`<input type="hidden" name="ui_locales" value="${lost.uiLocales}">` : ''}`;
}

export interface SignInForm extends LostRequest {
  username: string;
  /** Where the browser goes once signed in (a path on this site; INTERFACE section 10). */
  returnTo: string;
  /** The app whose authorization request `returnTo` is, named on the page. */
  appName?: string | undefined;
  /** A problem of the whole form: a wrong sign-in never says which field was wrong. */
  error?: string | undefined;
  /** The username and password did not sign in: both fields are marked. */
  wrongCredentials?: boolean;
  /** Problems of a field (one longer than any account's), each beside its field and in the summary. */
  errors?: FormErrors;
  /**
   * The account signed into is not active, which its holder is told (`error`): the page offers the
   * way to appeal in place of "Forgot password?", since a new password would not sign in either,
   * linked to `appealTo` (APPEAL_CONTACT) when the operator set one.
   */
  notActive?: { username: User['username']; appealTo: string | undefined } | undefined;
  reauthenticate?: boolean;
  /**
   * The credential id of a passkey that no account here has (removed, or its account deleted):
   * public/webauthn.js asks the browser to forget it (WebAuthn Level 3, signalUnknownCredential).
   */
  unknownCredentialId?: string | undefined;
}

/** The words that say whom to appeal to, a link to `appealTo` when there is one. */
function appealLink(appealTo: string | undefined) {
  return (chunks: Array<string | Html>) => appealTo === undefined ? html`${chunks}` : html`<a href="${appealTo}">${chunks}</a>`;
}

export function signInPage(context: PageContext, form: SignInForm) {
  const { t } = context;
  // Both fields are marked, and described by the one message: it must not tell which was wrong.
  const wrong = form.wrongCredentials ? html`aria-invalid="true" aria-describedby="form-error"` : '';
  const labels = { username: t.text('sign-in.username'), password: t.text('sign-in.password') };
  const words: ProblemWords = { t, labels };
  const marked = (field: 'username' | 'password') => (form.wrongCredentials ? wrong : control(form.errors, field));
  // The cursor goes where there is something to type or mend.
  const focusUsername = !form.username || errorsFor(form.errors, 'username').length > 0;
  const signUpLink = (chunks: Array<string | Html>) => html`<a href="/signup${returnQuery(form.returnTo, form)}">${chunks}</a>`;
  return layout(t.text('sign-in.title'), context, html`<section class="card narrow">
<h1>${form.appName === undefined ? t.text('sign-in.title') : rich(t, 'sign-in.headingForApp', { app: form.appName, b: appName })}</h1>
${form.error ? html`<p class="alert" role="alert" id="form-error">${form.error}</p>` : errorSummary(form.errors, words)}
${form.reauthenticate ? html`<p class="notice">${form.appName ? t.text('sign-in.reauthenticateForApp') : t.text('sign-in.reauthenticate')}</p>` : ''}
${form.requestTooLong ? html`<p class="notice">${t.text('sign-in.requestTooLong')}</p>` : ''}
<form method="post" action="/login">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="return_to" value="${form.returnTo}">
  ${form.reauthenticate ? html`<input type="hidden" name="reauth" value="1">` : ''}
  ${lostRequestFields(form)}
  <label for="username">${labels.username}</label>
  <input type="text" id="username" name="username" value="${form.username}" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="${SIGN_IN_USERNAME_MAX_LENGTH}" ${marked('username')} ${focusUsername ? html`autofocus` : ''}>
  ${fieldMessage(form.errors, 'username', { words })}
  <label for="password">${labels.password}</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required maxlength="${PASSWORD_MAX_LENGTH}" ${marked('password')} ${focusUsername ? '' : html`autofocus`}>
  ${fieldMessage(form.errors, 'password', { words })}
  <div class="actions"><button type="submit">${t.text('sign-in.submit')}</button></div>
  ${form.notActive
    ? html`<p class="hint">${rich(t, 'sign-in.appeal', { username: form.notActive.username, a: appealLink(form.notActive.appealTo) })}</p>`
    : html`<p class="hint links"><a href="/password/forgot">${t.text('recovery.forgotLink')}</a></p>`}
</form>
<form method="post" action="/login/passkey" class="passkey-sign-in"${form.unknownCredentialId === undefined ? '' : html` data-unknown-credential="${form.unknownCredentialId}"`}>
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="return_to" value="${form.returnTo}">
  ${lostRequestFields(form)}
  <input type="hidden" name="credential" data-webauthn-result>
  <div class="actions"><button type="button" class="secondary" data-webauthn="get" data-options="/login/passkey/options" hidden>${t.text('sign-in.withPasskey')}</button></div>
  ${passkeyStatus(context.t)}
</form>
<p class="muted">${rich(t, 'sign-in.noAccount', { a: signUpLink })}</p>
</section>`, { script: 'webauthn' });
}
