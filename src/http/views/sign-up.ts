import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../core/passwords.js';
import { USERNAME_RULE } from '../../core/accounts.js';
import { html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { type FormError, sentence } from './settings.js';

export function signUpPage(context: PageContext, form: { username: string; error?: FormError | undefined }) {
  const invalid = (field: string) => (form.error?.field === field ? html`aria-invalid="true"` : '');
  return layout('Create an account', context, html`<section class="card narrow">
<h1>Create an account</h1>
${form.error ? html`<p class="alert" role="alert" id="form-error">${sentence(form.error.message)}</p>` : ''}
<form method="post" action="/signup">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="username">Username</label>
  <input type="text" id="username" name="username" value="${form.username}" autocomplete="username" autocapitalize="none" spellcheck="false" required minlength="3" maxlength="30" aria-describedby="username-hint" ${invalid('username')}>
  <p class="hint" id="username-hint">${sentence(USERNAME_RULE)}</p>
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" aria-describedby="password-hint" ${invalid('password')}>
  <p class="hint" id="password-hint">${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters. A passphrase of several words is easy to remember; very common passwords are refused.</p>
  <div class="actions"><button type="submit">Create account</button></div>
</form>
<p class="muted">Already have an account? <a href="/login">Sign in</a>.</p>
</section>`);
}
