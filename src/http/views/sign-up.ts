import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../core/accounts/passwords.js';
import { NICKNAME_MAX_LENGTH } from '../../core/accounts/nicknames.js';
import { type FormErrors, control, errorList, errorSummary, fieldMessage } from './forms.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { appName, returnQuery } from './sign-in.js';
import { problemText, rich } from './words.js';

export interface SignUpForm {
  username: string;
  nickname: string;
  /** Where the new account goes once created (a path on this site; INTERFACE section 11). */
  returnTo: string;
  /** The app whose authorization request `returnTo` is, named on the page. */
  appName?: string | undefined;
  errors?: FormErrors;
}

export function signUpPage(context: PageContext, form: SignUpForm) {
  const { t } = context;
  // The core's problems in the reader's words (their English stays for the API and the CLI).
  const errors = errorList(form.errors).map((problem) => ({ field: problem.field, message: problemText(t, problem) }));
  const signInLink = (chunks: Array<string | Html>) => html`<a href="/login${returnQuery(form.returnTo)}">${chunks}</a>`;
  return layout(t.text('sign-up.title'), context, html`<section class="card narrow">
<h1>${form.appName === undefined ? t.text('sign-up.title') : rich(t, 'sign-up.headingForApp', { app: form.appName, b: appName })}</h1>
<p>${t.text('sign-up.welcome')}</p>
${errorSummary(errors)}
<form method="post" action="/signup">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="return_to" value="${form.returnTo}">
  <label for="username">${t.text('sign-up.username')}</label>
  <input type="text" id="username" name="username" value="${form.username}" autocomplete="username" autocapitalize="none" spellcheck="false" required minlength="3" maxlength="30" ${control(errors, 'username', { hint: 'username-hint' })}>
  ${fieldMessage(errors, 'username')}
  <p class="hint" id="username-hint">${t.text('sign-up.usernameHint')}</p>
  <label for="nickname">${t.text('sign-up.nickname')}</label>
  <input type="text" id="nickname" name="nickname" value="${form.nickname}" autocomplete="nickname" maxlength="${NICKNAME_MAX_LENGTH * 2}" ${control(errors, 'nickname', { hint: 'nickname-hint' })}>
  ${fieldMessage(errors, 'nickname')}
  <p class="hint" id="nickname-hint">${t.text('sign-up.nicknameHint', { max: NICKNAME_MAX_LENGTH })}</p>
  <label for="password">${t.text('sign-up.password')}</label>
  <input type="password" id="password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" ${control(errors, 'password', { hint: 'password-hint' })}>
  ${fieldMessage(errors, 'password')}
  <p class="hint" id="password-hint">${t.text('sign-up.passwordHint', { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH })}</p>
  <div class="check" hidden><input type="checkbox" id="show-password" data-show-password="password"><label for="show-password">${t.text('sign-up.showPassword')}</label></div>
  <div class="actions"><button type="submit">${t.text('sign-up.submit')}</button></div>
</form>
<p class="muted">${rich(t, 'sign-up.haveAccount', { a: signInLink })}</p>
</section>`, { script: 'show-password' });
}
