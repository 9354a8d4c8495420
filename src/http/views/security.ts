/**
 * /settings/security (INTERFACE section 11) and the second step of sign-in (issue 18), in the
 * reader's language (`security` namespace): each part of the page a card of its own, with its own
 * heading, so a phone shows them one below the other.
 */
import type { Session } from '../../core/accounts/ports.js';
import type { Page } from '../../core/stores.js';
import type { Passkey, SecurityEvent } from '../../core/accounts/ports.js';
import type { SecondFactors, TotpEnrolment } from '../../core/accounts/two-step.js';
import { type AcceptedCredentials, MAX_PASSKEYS } from '../../core/accounts/passkeys.js';
import { describeUserAgent, deviceText } from '../../core/accounts/user-agent.js';
import type { Words } from '../../core/errors.js';
import type { Translator } from '../../core/locales.js';
import { formatSiteTime } from '../../core/site-time.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { stackedTable } from './stacked-table.js';
import { type FormError, type FormErrors, type ProblemWords, control, errorList, errorSummary, errorsFor, fieldMessage, sentences, spaceBetween } from './forms.js';
import { eventFrom, eventLine } from './security-events.js';
import { at, copyButton, notice, settingsLayout } from './settings.js';
import { chosenName, isolated, passkeyStatus, rich, sessionAddress } from './words.js';

export const SECURITY_LOG_PAGE_SIZE = 20;
/** The fields whose problems a section of the page shows beside its own form; others go at the top. */
const SECTION_FIELDS = ['current_password', 'new_password', 'code', 'passkey', 'name'];

export interface SecurityPageState {
  /** Whose page it is: the recovery codes' file names the account. */
  username: string;
  factors: SecondFactors;
  passkeys: Passkey[];
  sessions: Session[];
  currentSession: string;
  events: Page<SecurityEvent>;
  /** Zero-based page of the log. */
  logPage: number;
  errors?: FormErrors;
  /**
   * The `action` of the form sent, whose problems `errors` are: only that form's fields are marked,
   * as two forms of a section have a field of one name (`code`).
   */
  sentAction?: string | undefined;
  /**
   * The passkey form sent, when refused: which passkey's rename form (`credential_id`), and the
   * name typed, shown again in that form's field to be mended or sent again. Each passkey has a rename form with
   * a field `name`, as the new passkey's form has. A new passkey refused names the credential the
   * device made, which no account has (`unknownCredentialId`), for public/webauthn.js to have the
   * browser forget it.
   */
  sentPasskey?: { credentialId?: string | undefined; name: string; unknownCredentialId?: string | undefined } | undefined;
  notice?: Words | undefined;
  /**
   * The account's passkeys as the browser is to learn them (`acceptedCredentials`), on every view
   * of the page: public/webauthn.js has the device drop one removed, here or from another device.
   */
  acceptedCredentials?: AcceptedCredentials | undefined;
  /** Enrolment under way: the secret as a QR code (data: URI) and as text. */
  enrolment?: (TotpEnrolment & { qr: string }) | undefined;
  /** Recovery codes just made: shown this once. */
  recoveryCodes?: string[] | undefined;
}

function hidden(context: PageContext, action: string): Html {
  return html`<input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="action" value="${action}">`;
}

function codeField(t: Translator, id: string, label: string, errors: FormErrors, hint: string): Html {
  return html`<label for="${id}">${label}</label>
  <input type="text" id="${id}" name="code" class="code" inputmode="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required maxlength="40" ${control(errors, 'code', { id, hint: `${id}-hint` })}>
  ${fieldMessage(errors, 'code', { id, words: { t } })}
  <p class="hint" id="${id}-hint">${hint}</p>`;
}

function passwordSection(context: PageContext, state: SecurityPageState): Html {
  const { t } = context;
  const errors = errorsFor(state.errors, 'current_password', 'new_password');
  const labels = { current_password: t.text('security.currentPassword'), new_password: t.text('security.newPassword') };
  const words: ProblemWords = { t, labels };
  return html`<section class="card" aria-labelledby="password-heading">
<h2 id="password-heading">${t.text('security.passwordHeading')}</h2>
${errorSummary(errors, words)}
<form method="post" action="/settings/security">
  ${hidden(context, 'change-password')}
  <label for="current_password">${labels.current_password}</label>
  <input type="password" id="current_password" name="current_password" autocomplete="current-password" required maxlength="256" ${control(errors, 'current_password')}>
  ${fieldMessage(errors, 'current_password', { words })}
  <label for="new_password">${labels.new_password}</label>
  <input type="password" id="new_password" name="new_password" autocomplete="new-password" required minlength="8" maxlength="256" ${control(errors, 'new_password', { hint: 'new-password-hint' })}>
  ${fieldMessage(errors, 'new_password', { words })}
  <p class="hint" id="new-password-hint">${t.text('security.newPasswordHint')}</p>
  <div class="actions"><button type="submit">${t.text('security.changePassword')}</button></div>
</form>
</section>`;
}

/**
 * The codes shown once, with ways to keep them: Copy and Print (public/copy.js, shown only with
 * script) and Download, a `data:` link holding the very codes on this page, so it works without
 * script and no later request can fetch them again: once the page is left, they are gone.
 */
function recoveryCodesSection(t: Translator, codes: readonly string[], username: string): Html {
  // The file outlives the page: it says whose codes they are and for which site, as a file among others.
  const file = `${t.text('security.recoveryFileHeading', { username })}\n\n${codes.join('\n')}\n`;
  return html`<section class="card" aria-labelledby="two-step-heading">
<h2 id="two-step-heading">${t.text('security.twoStepHeading')}</h2>
<div class="notice recovery" role="status">
  <p>${rich(t, 'security.recoveryCodesIntro', { b: (chunks) => html`<strong>${chunks}</strong>` })}</p>
  <ul class="recovery-codes" id="recovery-codes" aria-label="${t.text('security.recoveryCodes')}">${codes.map((c) => html`<li>${c}</li>`)}</ul>
  <div class="actions">
    ${copyButton(t, 'recovery-codes')}
    <a class="button secondary" href="data:text/plain;charset=utf-8,${encodeURIComponent(file)}" download="recovery-codes.txt">${t.text('security.download')}</a>
    <button type="button" class="secondary" data-print hidden>${t.text('security.print')}</button>
  </div>
</div>
<p class="links"><a href="/settings/security">${t.text('security.savedThem')}</a></p>
</section>`;
}

/** `errors` when the form sent was `action`'s, else none: the section's summary tells the others' problems. */
function errorsOfForm(state: SecurityPageState, action: string, errors: FormError[]): FormError[] {
  return state.sentAction === action ? errors : [];
}

function twoStepSection(context: PageContext, state: SecurityPageState): Html {
  const { t } = context;
  const error = errorsFor(state.errors, 'code');
  const words: ProblemWords = { t };
  const codeErrors = (action: string) => errorsOfForm(state, action, error);
  if (state.recoveryCodes) return recoveryCodesSection(t, state.recoveryCodes, state.username);
  if (state.enrolment) {
    return html`<section class="card" aria-labelledby="two-step-heading">
<h2 id="two-step-heading">${t.text('security.setUpHeading')}</h2>
<ol>
  <li>${t.text('security.scanQr')}
    <img class="qr" src="${state.enrolment.qr}" alt="${t.text('security.qrAlt')}" width="192" height="192"></li>
  <li>${t.text('security.enterKey')} <code class="mono" id="totp-secret">${state.enrolment.secret.match(/.{1,4}/g)!.join(' ')}</code>
    <p class="hint">${t.text('security.otpauthAddress')} <code class="otpauth-uri" id="otpauth-uri">${state.enrolment.uri}</code></p></li>
  <li>${t.text('security.typeCode')}</li>
</ol>
${errorSummary(error, words)}
<form method="post" action="/settings/security">
  ${hidden(context, 'totp-confirm')}
  ${codeField(t, 'enrol-code', t.text('security.codeFromApp'), codeErrors('totp-confirm'), t.text('security.codeFromAppHint'))}
  <div class="actions"><button type="submit">${t.text('security.turnOn')}</button></div>
</form>
</section>`;
  }
  if (!state.factors.totp) {
    return html`<section class="card" aria-labelledby="two-step-heading">
<h2 id="two-step-heading">${t.text('security.twoStepHeading')}</h2>
<p>${t.text('security.twoStepOff')}</p>
<form method="post" action="/settings/security">
  ${hidden(context, 'totp-start')}
  <div class="actions"><button type="submit">${t.text('security.setUp')}</button></div>
</form>
</section>`;
  }
  const on = rich(t, 'security.twoStepOn', { b: (chunks) => html`<strong>${chunks}</strong>` });
  return html`<section class="card" aria-labelledby="two-step-heading">
<h2 id="two-step-heading">${t.text('security.twoStepHeading')}</h2>
<p>${on}${spaceBetween(on.value, '')}<span class="recovery-left">${t.text('security.recoveryCodesLeft', { count: state.factors.recoveryCodesLeft })}</span></p>
${errorSummary(error, words)}
<form method="post" action="/settings/security">
  ${hidden(context, 'recovery-codes')}
  ${codeField(t, 'recovery-code', t.text('security.newCodesLabel'), codeErrors('recovery-codes'), t.text('security.newCodesHint'))}
  <div class="actions"><button type="submit" class="secondary">${t.text('security.newCodes')}</button></div>
</form>
<form method="post" action="/settings/security">
  ${hidden(context, 'totp-disable')}
  ${codeField(t, 'disable-code', t.text('security.turnOffLabel'), codeErrors('totp-disable'), t.text('security.turnOffHint'))}
  <div class="actions"><button type="submit" class="danger">${t.text('security.turnOff')}</button></div>
</form>
</section>`;
}

function passkeysSection(context: PageContext, state: SecurityPageState): Html {
  const { t } = context;
  const error = errorsFor(state.errors, 'passkey', 'name');
  const words: ProblemWords = { t };
  const sent = state.sentPasskey;
  const renameErrors = (p: Passkey) => (sent?.credentialId === p.credentialId ? errorsOfForm(state, 'passkey-rename', errorsFor(error, 'name')) : []);
  const addErrors = errorsOfForm(state, 'passkey-add', errorsFor(error, 'name'));
  /** The field of `p`'s rename form, marked and holding what was typed when it is the form refused. */
  const renameField = (p: Passkey) => {
    const id = `rename-${p.credentialId}`;
    const errors = renameErrors(p);
    return html`<input type="text" id="${id}" name="name" value="${errors.length > 0 ? sent!.name : p.name}" required maxlength="60" ${control(errors, 'name', { id })}>
        ${fieldMessage(errors, 'name', { id, words })}`;
  };
  const accepted = state.acceptedCredentials;
  return html`<section class="card" aria-labelledby="passkeys-heading"${accepted === undefined ? '' : html` data-rp-id="${accepted.rpId}" data-user-id="${accepted.userId}" data-accepted-credentials="${accepted.allAcceptedCredentialIds.join(' ')}"`}>
<h2 id="passkeys-heading">${t.text('security.passkeysHeading')}</h2>
<p>${t.text('security.passkeysIntro')}</p>
${errorSummary(error, words)}
${state.passkeys.length === 0 ? html`<p class="muted">${t.text('security.noPasskeys')}</p>` : stackedTable(
  [{ heading: t.text('security.passkeyName'), cellClass: 'strong' }, { heading: t.text('security.added') }, { heading: t.text('settings.lastUsed') }, { heading: t.text('settings.actions'), buttons: true }],
  state.passkeys.map((p) => ({ cells: [chosenName(p.name), at(context, p.createdAt), at(context, p.lastUsedAt), html`<form method="post" action="/settings/security" class="inline">
        ${hidden(context, 'passkey-rename')}
        <input type="hidden" name="credential_id" value="${p.credentialId}">
        <label for="rename-${p.credentialId}" class="visually-hidden">${t.text('security.renameLabel', { name: isolated(p.name) })}</label>
        ${renameField(p)}
        <button type="submit" class="secondary" aria-label="${t.text('security.renameNamed', { name: isolated(p.name) })}">${t.text('security.rename')}</button>
      </form>
      <form method="post" action="/settings/security" class="inline">
        ${hidden(context, 'passkey-remove')}
        <input type="hidden" name="credential_id" value="${p.credentialId}">
        <button type="submit" class="danger" aria-label="${t.text('security.removeNamed', { name: isolated(p.name) })}">${t.text('security.remove')}</button>
      </form>`] })))}
<form method="post" action="/settings/security"${sent?.unknownCredentialId === undefined ? '' : html` data-unknown-credential="${sent.unknownCredentialId}"`}>
  ${hidden(context, 'passkey-add')}
  <input type="hidden" name="credential" data-webauthn-result>
  <label for="passkey-name">${t.text('security.newPasskeyName')}</label>
  <input type="text" id="passkey-name" name="name" maxlength="60" placeholder="${t.text('security.passkeyPlaceholder')}" ${state.sentAction === 'passkey-add' && sent ? html`value="${sent.name}"` : ''} ${control(addErrors, 'name', { id: 'passkey-name', hint: 'passkey-hint' })}>
  ${fieldMessage(addErrors, 'name', { id: 'passkey-name', words })}
  <p class="hint" id="passkey-hint">${sentences([t.text('security.passkeyHint'), t.text(state.passkeys.length >= MAX_PASSKEYS ? 'security.passkeyLimitReached' : 'security.passkeyLimit', { max: MAX_PASSKEYS })])}</p>
  <div class="actions"><button type="button" data-webauthn="create" data-options="/settings/security/passkeys/options" hidden>${t.text('security.addPasskey')}</button></div>
  ${passkeyStatus(context.t)}
</form>
</section>`;
}

function sessionsSection(context: PageContext, state: SecurityPageState): Html {
  const { t } = context;
  return html`<section class="card" aria-labelledby="sessions-heading">
<h2 id="sessions-heading">${t.text('security.sessionsHeading')}</h2>
${stackedTable(
  [{ heading: t.text('security.browser'), cellClass: 'strong' }, { heading: t.text('security.address') }, { heading: t.text('security.signedIn') }, { heading: t.text('security.lastActive') }, { heading: t.text('settings.actions'), buttons: true }],
  state.sessions.map((s) => {
    const current = s.idHash === state.currentSession;
    const device = deviceText(t, describeUserAgent(s.userAgent));
    return { cells: [
      html`${device}${current ? html`${spaceBetween(device, t.text('security.thisBrowser'))}<span class="current-session">${t.text('security.thisBrowser')}</span>` : ''}`,
      sessionAddress(t, s.address),
      at(context, s.authTime),
      at(context, s.lastSeenAt),
      current ? '' : html`<form method="post" action="/settings/security" class="inline">
      ${hidden(context, 'session-sign-out')}
      <input type="hidden" name="session" value="${s.idHash}">
      <button type="submit" class="danger" aria-label="${t.text('security.signOutNamed', { device, time: formatSiteTime(s.authTime, context.timeZone) })}">${t.text('security.signOut')}</button>
    </form>`,
    ] };
  }))}
${state.sessions.length > 1 ? html`<form method="post" action="/settings/security">
  ${hidden(context, 'sign-out-others')}
  <div class="actions"><button type="submit" class="danger">${t.text('security.signOutOthers')}</button></div>
</form>` : ''}
</section>`;
}

function logSection(context: PageContext, state: SecurityPageState): Html {
  const { t } = context;
  const { events, logPage } = state;
  const pages = Math.max(1, Math.ceil(events.total / SECURITY_LOG_PAGE_SIZE));
  return html`<section class="card" aria-labelledby="log-heading">
<h2 id="log-heading">${t.text('security.logHeading')}</h2>
<p class="hint">${t.text('security.logIntro')}</p>
${events.items.length === 0 ? html`<p class="muted">${t.text('security.logEmpty')}</p>` : stackedTable(
  [{ heading: t.text('security.when') }, { heading: t.text('security.what') }, { heading: t.text('security.from') }],
  events.items.map((e) => ({ kind: e.kind, cells: [at(context, e.createdAt), eventLine(t, e), eventFrom(t, e)] })),
  { tableClass: 'security-log' },
)}
<nav class="pager links" aria-label="${t.text('security.logPages')}">
  ${logPage > 0 ? html`<a href="/settings/security?page=${logPage - 1}#log-heading" rel="prev">${t.text('security.newer')}</a>` : html`<span></span>`}
  <span class="muted">${t.text('security.pageOf', { page: logPage + 1, pages })}</span>
  ${logPage + 1 < pages ? html`<a href="/settings/security?page=${logPage + 1}#log-heading" rel="next">${t.text('security.older')}</a>` : html`<span></span>`}
</nav>
</section>`;
}

export function securityPage(context: PageContext, state: SecurityPageState): Html {
  const { t } = context;
  return settingsLayout(t.text('security.title'), context, '/settings/security', html`<section class="card">
<h1>${t.text('security.title')}</h1>
<p>${t.text('security.intro')}</p>
${notice(t, state.notice)}
${errorSummary(errorList(state.errors).filter((e) => !SECTION_FIELDS.includes(e.field)), { t })}
</section>
${twoStepSection(context, state)}
${passkeysSection(context, state)}
${passwordSection(context, state)}
${sessionsSection(context, state)}
${logSection(context, state)}`, { script: state.recoveryCodes ? 'copy' : 'webauthn' });
}

// ---- The second step of sign-in ----------------------------------------------------------------

/** The second step after the password; `error` is a sentence in the page's language, from the route. */
export function secondStepPage(context: PageContext, state: { factors: SecondFactors; error?: string | undefined }): Html {
  const { t } = context;
  return layout(t.text('security.twoStepHeading'), context, html`<section class="card narrow">
<h1>${t.text('security.twoStepHeading')}</h1>
${state.error ? html`<p class="alert" role="alert" id="form-error">${state.error}</p>` : ''}
${state.factors.totp ? html`<form method="post" action="/login/second-step">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="code">${t.text('security.codeFromAuthenticator')}</label>
  <input type="text" id="code" name="code" class="code" inputmode="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required maxlength="40" autofocus ${state.error ? html`aria-describedby="form-error code-hint" aria-invalid="true"` : html`aria-describedby="code-hint"`}>
  <p class="hint" id="code-hint">${t.text('security.secondStepHint')}</p>
  <div class="actions"><button type="submit">${t.text('security.verify')}</button></div>
</form>` : ''}
${state.factors.passkeys > 0 ? html`<form method="post" action="/login/second-step/passkey">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="credential" data-webauthn-result>
  <div class="actions"><button type="button" class="${state.factors.totp ? 'secondary' : ''}" data-webauthn="get" data-options="/login/second-step/passkey/options" hidden>${t.text('security.usePasskey')}</button></div>
  ${passkeyStatus(context.t)}
</form>` : ''}
<p class="muted links"><a href="/login">${t.text('security.startAgain')}</a></p>
</section>`, { script: 'webauthn' });
}
