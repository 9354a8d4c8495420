import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../core/accounts/passwords.js';
import { USERNAME_RULE } from '../../core/accounts/accounts.js';
import { type FormErrors, control, errorSummary, fieldMessage, sentence } from './forms.js';
import { html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { continuingTo, returnQuery } from './sign-in.js';

export interface SignUpForm {
  username: string;
  /** Where the new account goes once created (a path on this site; INTERFACE section 11). */
  returnTo: string;
  /** The app whose authorization request `returnTo` is, named on the page. */
  appName?: string | undefined;
  errors?: FormErrors;
}

export function signUpPage(context: PageContext, form: SignUpForm) {
  const errors = form.errors;
  return layout('Create an account', context, html`<section class="card narrow">
<h1>Create an account${continuingTo(form.appName)}</h1>
${errorSummary(errors)}
<form method="post" action="/signup">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="return_to" value="${form.returnTo}">
  <label for="username">Username</label>
  <input type="text" id="username" name="username" value="${form.username}" autocomplete="username" autocapitalize="none" spellcheck="false" required minlength="3" maxlength="30" ${control(errors, 'username', { hint: 'username-hint' })}>
  ${fieldMessage(errors, 'username')}
  <p class="hint" id="username-hint">${sentence(USERNAME_RULE)}</p>
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" ${control(errors, 'password', { hint: 'password-hint' })}>
  ${fieldMessage(errors, 'password')}
  <p class="hint" id="password-hint">${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters. A passphrase of several words is easy to remember; very common passwords are refused.</p>
  <div class="actions"><button type="submit">Create account</button></div>
</form>
<p class="muted">Already have an account? <a href="/login${returnQuery(form.returnTo)}">Sign in</a>.</p>
</section>`);
}
