import { TYPED_USERNAME_MAX_LENGTH, USERNAME_BOUNDS } from '../../core/accounts/accounts.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../core/accounts/passwords.js';
import { NICKNAME_FIELD_MAX_UNITS, NICKNAME_MAX_LENGTH } from '../../core/accounts/nicknames.js';
import type { Words } from '../../core/errors.js';
import type { Translator } from '../../core/locales.js';
import { type FormError, type FormErrors, control, errorList, fieldMessage, sentence, showPasswordSwitch } from './forms.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { type LostRequest, lostRequestFields, returnQuery } from './sign-in.js';
import { appName, problemText, rich } from './words.js';

export interface SignUpForm extends LostRequest {
  username: string;
  nickname: string;
  /** Where the new account goes once created (a path on this site; INTERFACE section 11). */
  returnTo: string;
  /** The app whose authorization request `returnTo` is, named on the page. */
  appName?: string | undefined;
  errors?: FormErrors;
}

/** The field labels the summary names its problems by ("Password: Use 8 to 256 characters."). */
const LABELS: Readonly<Record<string, Words>> = {
  username: { key: 'sign-up.username' },
  nickname: { key: 'sign-up.nicknameField' },
  password: { key: 'sign-up.password' },
};

/**
 * The top of the form sent back with problems (as `errorSummary` makes it, read out when the page
 * loads), in the reader's words: each problem after its field's label, since the core's words
 * ("Use 8 to 256 characters.") leave the field unsaid.
 */
function problemSummary(t: Translator, errors: readonly FormError[]): Html | '' {
  const lines = errors.map((e) => {
    const label = LABELS[e.field];
    return label === undefined ? sentence(e.message) : t.text('sign-up.problemOfField', { field: t.text(label.key), problem: sentence(e.message) });
  });
  if (lines.length === 0) return '';
  if (lines.length === 1) return html`<p class="alert" role="alert" id="form-error">${lines[0]}</p>`;
  return html`<div class="alert" role="alert" id="form-error">
  <p>${t.text('sign-up.problemCount', { count: lines.length })}</p>
  <ul>${lines.map((line) => html`<li>${line}</li>`)}</ul>
</div>`;
}

export function signUpPage(context: PageContext, form: SignUpForm) {
  const { t } = context;
  // The core's problems in the reader's words (their English stays for the API and the CLI).
  const errors = errorList(form.errors).map((problem) => ({ field: problem.field, message: problemText(t, problem) }));
  const signInLink = (chunks: Array<string | Html>) => html`<a href="/login${returnQuery(form.returnTo, form)}">${chunks}</a>`;
  // The username field has no minlength: the server counts a username after NFKC, which can read
  // one typed character as three (ﬃ as ffi), so no count of what is typed is the server's; its
  // maxlength is what any reading as a username fits in (`TYPED_USERNAME_MAX_LENGTH`).
  return layout(t.text('sign-up.title'), context, html`<section class="card narrow">
<h1>${form.appName === undefined ? t.text('sign-up.title') : rich(t, 'sign-up.headingForApp', { app: form.appName, b: appName })}</h1>
<p>${t.text('sign-up.welcome')}</p>
${form.requestTooLong ? html`<p class="notice">${t.text('sign-up.requestTooLong')}</p>` : ''}
${problemSummary(t, errors)}
<form method="post" action="/signup">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="return_to" value="${form.returnTo}">
  ${lostRequestFields(form)}
  <label for="username">${t.text('sign-up.username')}</label>
  <input type="text" id="username" name="username" value="${form.username}" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="${TYPED_USERNAME_MAX_LENGTH}" ${control(errors, 'username', { hint: 'username-hint' })}>
  ${fieldMessage(errors, 'username')}
  <p class="hint" id="username-hint">${t.text('sign-up.usernameHint', USERNAME_BOUNDS)}</p>
  <label for="nickname">${t.text('sign-up.nickname')}</label>
  <input type="text" id="nickname" name="nickname" value="${form.nickname}" autocomplete="nickname" maxlength="${NICKNAME_FIELD_MAX_UNITS}" ${control(errors, 'nickname', { hint: 'nickname-hint' })}>
  ${fieldMessage(errors, 'nickname')}
  <p class="hint" id="nickname-hint">${t.text('sign-up.nicknameHint', { max: NICKNAME_MAX_LENGTH })}</p>
  <label for="password">${t.text('sign-up.password')}</label>
  <input type="password" id="password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" ${control(errors, 'password', { hint: 'password-hint' })}>
  ${fieldMessage(errors, 'password')}
  <p class="hint" id="password-hint">${t.text('common.passwordHint', { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH })}</p>
  ${showPasswordSwitch(t, 'password')}
  <div class="actions"><button type="submit">${t.text('sign-up.submit')}</button></div>
</form>
<p class="muted">${rich(t, 'sign-up.haveAccount', { a: signInLink })}</p>
</section>`, { script: 'show-password' });
}
