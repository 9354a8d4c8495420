/** The way back into an account (INTERFACE section 12): the e-mail settings, verification, forgotten and new passwords. */
import { EMAIL_CANCEL_PATH, EMAIL_REFUSE_PATH, EMAIL_SETTINGS_PATH } from '../../core/urls.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../core/accounts/passwords.js';
import { type EmailVerification, type LastLink, type LinkMail, type UndeliveredAddress, VERIFY_MAILS_PER_ADDRESS } from '../../core/accounts/email.js';
import type { MemberEmail } from '../../core/accounts/ports.js';
import { type FormErrors, control, errorSummary, fieldMessage, showPasswordSwitch } from './forms.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { settingsLayout } from './settings.js';
import { rich, timeOf } from './words.js';

export interface EmailPageState {
  email: MemberEmail | undefined;
  /** Its addresses whose newest mail was refused by their server (`emailSettings`). */
  undelivered: readonly UndeliveredAddress[];
  /** The newest verification mail of the address waiting for its link was given up by the site, or may have arrived: no "open the link we mailed" (`emailSettings`). */
  linkMail?: LinkMail | null;
  mailEnabled: boolean;
  value?: string;
  errors?: FormErrors;
  notice?: string | undefined;
  /** A refused save's link that still works (`changeEmail`): mailed or waiting to be, no new one is needed; given up, none is coming. */
  lastLink?: LastLink | undefined;
  /**
   * A save a verification limit refused: the lines above the form say where the address stands and
   * nothing more, neither "open the link we mailed" (the notice says whether one is coming) nor
   * "save it again", which was just refused.
   */
  throttled?: boolean;
}

export function emailSettingsPage(context: PageContext, state: EmailPageState): Html {
  const { t } = context;
  const { email, throttled = false, linkMail = null } = state;
  const [unverified, pendingWords] = throttled ? ['recovery.emailUnverifiedThrottled', 'recovery.emailPendingThrottled'] as const
    : linkMail === 'given_up' ? ['recovery.emailUnverifiedLost', 'recovery.emailPendingLost'] as const
    : linkMail === 'maybe_sent' ? ['recovery.emailUnverifiedMaybe', 'recovery.emailPendingMaybe'] as const
    : ['recovery.emailUnverified', 'recovery.emailPending'] as const;
  const status = email === undefined
    ? html`<p class="muted">${t.text('recovery.emailNone')}</p>`
    : html`<p id="email-status">${t.text(email.verifiedAt === null ? unverified : 'recovery.emailVerified', { address: email.address, max: VERIFY_MAILS_PER_ADDRESS })}</p>`;
  const pending = email?.pending
    ? html`<p id="email-pending">${t.text(pendingWords, { pending: email.pending, address: email.address, max: VERIFY_MAILS_PER_ADDRESS })}</p>
<form method="post" action="${EMAIL_CANCEL_PATH}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <div class="actions"><button type="submit" class="secondary">${t.text('recovery.emailCancel')}</button></div>
</form>`
    : '';
  const form = state.mailEnabled
    ? html`<form method="post" action="${EMAIL_SETTINGS_PATH}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="email">${t.text('recovery.emailLabel')}</label>
  <input type="text" inputmode="email" id="email" name="email" value="${state.value ?? email?.pending ?? email?.address ?? ''}" autocomplete="email" autocapitalize="none" spellcheck="false" required maxlength="254" ${control(state.errors, 'email')}>
  ${fieldMessage(state.errors, 'email', { words: { t } })}
  <div class="actions"><button type="submit">${t.text('recovery.emailSave')}</button></div>
</form>`
    : html`<p class="notice">${t.text('recovery.emailNoMail')}</p>`;
  return settingsLayout(t.text('recovery.emailTitle'), context, EMAIL_SETTINGS_PATH, html`<section class="card">
<h1>${t.text('recovery.emailTitle')}</h1>
${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
${errorSummary(state.errors, { t })}
${state.lastLink ? lastLinkNotice(context, state.lastLink) : ''}
<p class="hint">${t.text('recovery.emailIntro')}</p>
${status}
${pending}
${state.undelivered.map(({ address, replyCode }) => html`<p class="alert" role="alert">${t.text(throttled ? 'recovery.emailUndeliveredThrottled' : 'recovery.emailUndelivered', { address, code: String(replyCode) })}</p>`)}
${form}
</section>`);
}

/** What became of the refused save's last link: no new one is needed, it may have arrived, or none is coming. */
function lastLinkNotice(context: PageContext, { address, expiresAt, mail }: LastLink): Html {
  const { t } = context;
  return html`<p class="notice" id="last-link">${mail === 'sent' ? rich(t, 'recovery.throttledLinkStillWorks', { address, time: timeOf(context, expiresAt) })
    : mail === 'waiting' ? t.text('recovery.throttledLinkWaiting', { address })
    : mail === 'maybe_sent' ? t.text('recovery.throttledLinkMaybe', { address })
    : t.text('recovery.throttledLinkLost', { address })}</p>`;
}

/** The answer to a verification link: done, or a link that no longer works. */
export function emailVerifiedPage(context: PageContext, verified: EmailVerification): Html {
  const { t } = context;
  const words = verified === 'verified' ? html`<p class="notice" role="status">${t.text('recovery.verifyDone')}</p>`
    : html`<p class="alert" role="alert">${t.text(verified === 'account_inactive' ? 'recovery.verifyAccountInactive' : 'recovery.verifyInvalid')}</p>`;
  // An account that is not active has no settings its reader could open.
  return layout(t.text('recovery.verifyTitle'), context, html`<section class="card narrow">
<h1>${t.text('recovery.verifyTitle')}</h1>
${words}
${verified === 'account_inactive' ? '' : html`<p class="links"><a href="${EMAIL_SETTINGS_PATH}">${t.text('recovery.emailSettings')}</a></p>`}
</section>`);
}

/**
 * A verification mail's "Not you?" page: what refusing does, with its button (GET changes nothing:
 * a mail scanner that opens the link refuses nothing); then what was done, or a link that no longer works.
 */
export type RefusePageState =
  | { state: 'ask'; token: string; username: string; address: string }
  /** `released`: the account lost the address; else it no longer waited for it, and the page must not say it did. */
  | { state: 'done'; address: string; released: boolean }
  /** Refused before: nothing more to do, and nothing was done again. */
  | { state: 'refused' }
  | { state: 'invalid' };

export function refuseEmailPage(context: PageContext, page: RefusePageState): Html {
  const { t } = context;
  const body = page.state === 'ask'
    ? html`<p>${t.text('recovery.refuseIntro', { username: page.username, address: page.address })}</p>
<form method="post" action="${EMAIL_REFUSE_PATH}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="token" value="${page.token}">
  <div class="actions"><button type="submit">${t.text('recovery.refuseButton')}</button></div>
</form>`
    : page.state === 'done'
      ? html`<p class="notice" role="status">${t.text(page.released ? 'recovery.refuseDone' : 'recovery.refuseKept', { address: page.address })}</p>`
      : page.state === 'refused'
        ? html`<p class="notice" role="status">${t.text('recovery.refuseAlready')}</p>`
        : html`<p class="alert" role="alert">${t.text('recovery.refuseInvalid')}</p>`;
  return layout(t.text('recovery.refuseTitle'), context, html`<section class="card narrow">
<h1>${t.text('recovery.refuseTitle')}</h1>
${body}
</section>`);
}

export interface ForgotPageState {
  mailEnabled: boolean;
  minutes: number;
  /** The request was taken: the same words whatever it named. */
  sent?: boolean;
  errors?: FormErrors;
  /** What was typed, on a form sent back with a problem, so it can be mended rather than typed again. */
  login?: string;
}

export function forgotPasswordPage(context: PageContext, state: ForgotPageState): Html {
  const { t } = context;
  const body = !state.mailEnabled
    ? html`<p class="notice">${t.text('recovery.forgotNoMail')}</p>`
    : html`${state.sent ? html`<p class="notice" role="status">${t.text('recovery.forgotSent')}</p>` : ''}
${errorSummary(state.errors, { t })}
<p class="hint">${t.text('recovery.forgotIntro', { minutes: state.minutes })}</p>
<form method="post" action="/password/forgot">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="login">${t.text('recovery.loginLabel')}</label>
  <input type="text" id="login" name="login" value="${state.login ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="254" autofocus ${control(state.errors, 'login')}>
  ${fieldMessage(state.errors, 'login', { words: { t } })}
  <div class="actions"><button type="submit">${t.text('recovery.sendLink')}</button></div>
</form>`;
  return layout(t.text('recovery.forgotTitle'), context, html`<section class="card narrow">
<h1>${t.text('recovery.forgotTitle')}</h1>
${body}
<p class="muted links"><a href="/login">${t.text('recovery.backToSignIn')}</a></p>
</section>`);
}

export interface ResetPageState {
  /** `undefined`: the link is used, expired or unknown. */
  token: string | undefined;
  username?: string;
  needsCode?: boolean;
  errors?: FormErrors;
}

export function resetPasswordPage(context: PageContext, state: ResetPageState): Html {
  const { t } = context;
  const body = state.token === undefined
    ? html`<p class="alert" role="alert" id="form-error">${t.text('recovery.linkInvalid')}</p>
<p class="links"><a href="/password/forgot">${t.text('recovery.askAgain')}</a></p>`
    : html`${errorSummary(state.errors, { t })}
<p>${t.text('recovery.resetIntro', { username: state.username ?? '' })}</p>
<form method="post" action="/password/reset">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="token" value="${state.token}">
  <input type="text" name="username" value="${state.username ?? ''}" autocomplete="username" hidden>
  <label for="password">${t.text('recovery.newPassword')}</label>
  <p class="hint" id="password-hint">${t.text('common.passwordHint', { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH })}</p>
  <input type="password" id="password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autofocus ${control(state.errors, 'password', { hint: 'password-hint' })}>
  ${fieldMessage(state.errors, 'password', { words: { t } })}
  ${showPasswordSwitch(t, 'password')}
  ${state.needsCode ? html`<label for="code">${t.text('recovery.codeLabel')}</label>
  <p class="hint" id="code-hint">${t.text('recovery.codeHint')}</p>
  <input type="text" id="code" name="code" autocomplete="one-time-code" inputmode="text" required maxlength="64" ${control(state.errors, 'code', { hint: 'code-hint' })}>
  ${fieldMessage(state.errors, 'code', { words: { t } })}` : ''}
  <div class="actions"><button type="submit">${t.text('recovery.resetButton')}</button></div>
</form>`;
  return layout(t.text('recovery.resetTitle'), context, html`<section class="card narrow">
<h1>${t.text('recovery.resetTitle')}</h1>
${body}
</section>`, { script: state.token === undefined ? undefined : 'show-password' });
}

export function passwordResetDonePage(context: PageContext): Html {
  const { t } = context;
  return layout(t.text('recovery.resetTitle'), context, html`<section class="card narrow">
<h1>${t.text('recovery.resetTitle')}</h1>
<p class="notice" role="status">${t.text('recovery.resetDone')}</p>
<p class="links"><a href="/login">${t.text('recovery.signIn')}</a></p>
</section>`);
}
