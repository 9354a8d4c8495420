/** /settings/security (INTERFACE section 11) and the second step of sign-in (issue 18). */
import type { Session } from '../../core/accounts/ports.js';
import type { Page } from '../../core/stores.js';
import type { Passkey, SecurityEvent } from '../../core/accounts/ports.js';
import { describeEventKind } from '../../core/accounts/security-log.js';
import type { SecondFactors, TotpEnrolment } from '../../core/accounts/two-step.js';
import { describeUserAgent } from '../../core/accounts/user-agent.js';
import { when } from './community.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { type FormErrors, control, errorList, errorSummary, errorsFor, fieldMessage } from './forms.js';
import { notice, settingsLayout } from './settings.js';

export const SECURITY_LOG_PAGE_SIZE = 20;
/** The fields whose problems a section of the page shows beside its own form; others go at the top. */
const SECTION_FIELDS = ['current_password', 'new_password', 'code', 'passkey', 'name'];

/** An instant as text, UTC to the minute (for labels, where `when`'s markup cannot go). */
function minute(instant: number): string {
  return `${new Date(instant).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export interface SecurityPageState {
  factors: SecondFactors;
  passkeys: Passkey[];
  sessions: Session[];
  currentSession: string;
  events: Page<SecurityEvent>;
  /** Zero-based page of the log. */
  logPage: number;
  errors?: FormErrors;
  notice?: string | undefined;
  /** Enrolment under way: the secret as a QR code (data: URI) and as text. */
  enrolment?: (TotpEnrolment & { qr: string }) | undefined;
  /** Recovery codes just made: shown this once. */
  recoveryCodes?: string[] | undefined;
}

function hidden(context: PageContext, action: string): Html {
  return html`<input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="action" value="${action}">`;
}

function codeField(id: string, label: string, errors: FormErrors, hint: string): Html {
  return html`<label for="${id}">${label}</label>
  <input type="text" id="${id}" name="code" class="code" inputmode="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required maxlength="40" ${control(errors, 'code', { id, hint: `${id}-hint` })}>
  ${fieldMessage(errors, 'code', { id })}
  <p class="hint" id="${id}-hint">${hint}</p>`;
}

function passwordSection(context: PageContext, state: SecurityPageState): Html {
  const errors = errorsFor(state.errors, 'current_password', 'new_password');
  return html`<section class="card" aria-labelledby="password-heading">
<h2 id="password-heading">Password</h2>
${errorSummary(errors)}
<form method="post" action="/settings/security">
  ${hidden(context, 'change-password')}
  <label for="current_password">Current password</label>
  <input type="password" id="current_password" name="current_password" autocomplete="current-password" required maxlength="256" ${control(errors, 'current_password')}>
  ${fieldMessage(errors, 'current_password')}
  <label for="new_password">New password</label>
  <input type="password" id="new_password" name="new_password" autocomplete="new-password" required minlength="8" maxlength="256" ${control(errors, 'new_password', { hint: 'new-password-hint' })}>
  ${fieldMessage(errors, 'new_password')}
  <p class="hint" id="new-password-hint">8 to 256 characters, not your username and not a common password. Every other browser signed in to your account is signed out.</p>
  <div class="actions"><button type="submit">Change password</button></div>
</form>
</section>`;
}

function twoStepSection(context: PageContext, state: SecurityPageState): Html {
  const error = errorsFor(state.errors, 'code');
  if (state.recoveryCodes) {
    return html`<section class="card" aria-labelledby="two-step-heading">
<h2 id="two-step-heading">Two-step verification</h2>
<div class="notice" role="status">
  <p><strong>Your recovery codes.</strong> Each works once, in place of a code from your app, if you lose it. Keep them somewhere safe: they are shown only now.</p>
  <ul class="recovery-codes" aria-label="Recovery codes">${state.recoveryCodes.map((c) => html`<li>${c}</li>`)}</ul>
</div>
<p><a href="/settings/security">I have saved them</a></p>
</section>`;
  }
  if (state.enrolment) {
    return html`<section class="card" aria-labelledby="two-step-heading">
<h2 id="two-step-heading">Set up two-step verification</h2>
<ol>
  <li>Scan this code with an authenticator app (such as Aegis, FreeOTP, Google Authenticator or 1Password).
    <img class="qr" src="${state.enrolment.qr}" alt="QR code of the otpauth address below" width="192" height="192"></li>
  <li>Or enter the key by hand: <code class="mono" id="totp-secret">${state.enrolment.secret.match(/.{1,4}/g)!.join(' ')}</code>
    <p class="hint">The address the QR code holds: <code class="otpauth-uri" id="otpauth-uri">${state.enrolment.uri}</code></p></li>
  <li>Type the six-digit code the app shows now.</li>
</ol>
${errorSummary(error)}
<form method="post" action="/settings/security">
  ${hidden(context, 'totp-confirm')}
  ${codeField('enrol-code', 'Code from your app', error, 'Six digits; a new one every 30 seconds.')}
  <div class="actions"><button type="submit">Turn on two-step verification</button></div>
</form>
</section>`;
  }
  if (!state.factors.totp) {
    return html`<section class="card" aria-labelledby="two-step-heading">
<h2 id="two-step-heading">Two-step verification</h2>
<p>Off. With it on, signing in asks for a code from an authenticator app after your password, so a stolen password alone does not open your account.</p>
<form method="post" action="/settings/security">
  ${hidden(context, 'totp-start')}
  <div class="actions"><button type="submit">Set up an authenticator app</button></div>
</form>
</section>`;
  }
  return html`<section class="card" aria-labelledby="two-step-heading">
<h2 id="two-step-heading">Two-step verification</h2>
<p><strong>On</strong>: signing in asks for a code from your authenticator app. ${state.factors.recoveryCodesLeft} of 10 recovery codes left.</p>
${errorSummary(error)}
<form method="post" action="/settings/security">
  ${hidden(context, 'recovery-codes')}
  ${codeField('recovery-code', 'Code for new recovery codes', error, 'A code from your app or a recovery code. The old recovery codes stop working.')}
  <div class="actions"><button type="submit" class="secondary">Make new recovery codes</button></div>
</form>
<form method="post" action="/settings/security">
  ${hidden(context, 'totp-disable')}
  ${codeField('disable-code', 'Code to turn it off', error, 'A code from your app or a recovery code.')}
  <div class="actions"><button type="submit" class="danger">Turn off two-step verification</button></div>
</form>
</section>`;
}

function passkeysSection(context: PageContext, state: SecurityPageState): Html {
  const error = errorsFor(state.errors, 'passkey', 'name');
  return html`<section class="card" aria-labelledby="passkeys-heading">
<h2 id="passkeys-heading">Passkeys</h2>
<p>A passkey signs you in with your device's screen lock or a security key, without a password. With two-step verification on, it also serves as the second step after a password.</p>
${errorSummary(error)}
${state.passkeys.length === 0 ? html`<p class="muted">You have no passkeys.</p>` : html`<div class="table-wrap"><table class="stack">
  <thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${state.passkeys.map((p) => html`<tr>
    <td class="strong">${p.name}</td>
    <td data-label="Added">${when(p.createdAt)}</td>
    <td data-label="Last used">${when(p.lastUsedAt)}</td>
    <td>
      <form method="post" action="/settings/security" class="inline">
        ${hidden(context, 'passkey-rename')}
        <input type="hidden" name="credential_id" value="${p.credentialId}">
        <label for="rename-${p.credentialId}" class="visually-hidden">New name for passkey ${p.name}</label>
        <input type="text" id="rename-${p.credentialId}" name="name" value="${p.name}" required maxlength="60">
        <button type="submit" class="secondary" aria-label="Rename passkey ${p.name}">Rename</button>
      </form>
      <form method="post" action="/settings/security" class="inline">
        ${hidden(context, 'passkey-remove')}
        <input type="hidden" name="credential_id" value="${p.credentialId}">
        <button type="submit" class="danger" aria-label="Remove passkey ${p.name}">Remove</button>
      </form>
    </td>
  </tr>`)}</tbody>
</table></div>`}
<form method="post" action="/settings/security">
  ${hidden(context, 'passkey-add')}
  <input type="hidden" name="credential" data-webauthn-result>
  <label for="passkey-name">Name of the new passkey</label>
  <input type="text" id="passkey-name" name="name" maxlength="60" placeholder="Passkey" aria-describedby="passkey-hint">
  <p class="hint" id="passkey-hint">Such as “Laptop” or “Phone”. Adding one needs a browser with passkeys and JavaScript.</p>
  <div class="actions"><button type="button" data-webauthn="create" data-options="/settings/security/passkeys/options" hidden>Add a passkey</button></div>
  <p class="hint" role="status" data-webauthn-status></p>
</form>
</section>`;
}

function sessionsSection(context: PageContext, state: SecurityPageState): Html {
  return html`<section class="card" aria-labelledby="sessions-heading">
<h2 id="sessions-heading">Where you are signed in</h2>
<div class="table-wrap"><table class="stack">
  <thead><tr><th scope="col">Browser</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last active</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${state.sessions.map((s) => {
    const current = s.idHash === state.currentSession;
    const device = describeUserAgent(s.userAgent);
    return html`<tr>
    <td class="strong">${device}${current ? html` <span class="current-session">(this browser)</span>` : ''}</td>
    <td data-label="Address">${s.address || 'unknown'}</td>
    <td data-label="Signed in">${when(s.authTime)}</td>
    <td data-label="Last active">${when(s.lastSeenAt)}</td>
    <td>${current ? '' : html`<form method="post" action="/settings/security" class="inline">
      ${hidden(context, 'session-sign-out')}
      <input type="hidden" name="session" value="${s.idHash}">
      <button type="submit" class="danger" aria-label="Sign out ${device} signed in ${minute(s.authTime)}">Sign out</button>
    </form>`}</td>
  </tr>`;
  })}</tbody>
</table></div>
${state.sessions.length > 1 ? html`<form method="post" action="/settings/security">
  ${hidden(context, 'sign-out-others')}
  <div class="actions"><button type="submit" class="danger">Sign out everywhere else</button></div>
</form>` : ''}
</section>`;
}

function detailText(event: SecurityEvent): string {
  const d = event.detail;
  const parts = [
    d.method && `with ${d.method}`, d.reason, d.app && `“${d.app}”`, d.name && `“${d.name}”`, d.device && `(${d.device})`, d.where && `at ${d.where}`,
  ].filter(Boolean);
  return parts.join(' ');
}

function logSection(state: SecurityPageState): Html {
  const { events, logPage } = state;
  const pages = Math.max(1, Math.ceil(events.total / SECURITY_LOG_PAGE_SIZE));
  return html`<section class="card" aria-labelledby="log-heading">
<h2 id="log-heading">Security log</h2>
<p class="hint">Sign-ins, failed attempts and changes to your account's security, newest first, kept 90 days.</p>
${events.items.length === 0 ? html`<p class="muted">Nothing yet.</p>` : html`<div class="table-wrap"><table class="stack security-log">
  <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">From</th></tr></thead>
  <tbody>${events.items.map((e) => html`<tr data-kind="${e.kind}">
    <td>${when(e.createdAt)}</td>
    <td data-label="What">${describeEventKind(e.kind)} ${detailText(e)}</td>
    <td data-label="From">${[e.device, e.address].filter((x) => x !== '').join(', ')}</td>
  </tr>`)}</tbody>
</table></div>`}
<nav class="pager" aria-label="Security log pages">
  ${logPage > 0 ? html`<a href="/settings/security?page=${logPage - 1}#log-heading" rel="prev">Newer</a>` : html`<span></span>`}
  <span class="muted">Page ${logPage + 1} of ${pages}</span>
  ${logPage + 1 < pages ? html`<a href="/settings/security?page=${logPage + 1}#log-heading" rel="next">Older</a>` : html`<span></span>`}
</nav>
</section>`;
}

export function securityPage(context: PageContext, state: SecurityPageState): Html {
  return settingsLayout('Security', context, '/settings/security', html`<section class="card">
<h1>Security</h1>
<p>How you sign in, where you are signed in, and what happened to your account.</p>
${notice(state.notice)}
${errorSummary(errorList(state.errors).filter((e) => !SECTION_FIELDS.includes(e.field)))}
</section>
${twoStepSection(context, state)}
${passkeysSection(context, state)}
${passwordSection(context, state)}
${sessionsSection(context, state)}
${logSection(state)}`, { script: 'webauthn' });
}

// ---- The second step of sign-in ----------------------------------------------------------------

export function secondStepPage(context: PageContext, state: { factors: SecondFactors; error?: string | undefined }): Html {
  return layout('Two-step verification', context, html`<section class="card narrow">
<h1>Two-step verification</h1>
${state.error ? html`<p class="alert" role="alert" id="form-error">${state.error}</p>` : ''}
${state.factors.totp ? html`<form method="post" action="/login/second-step">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="code">Code from your authenticator app</label>
  <input type="text" id="code" name="code" class="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required maxlength="40" autofocus ${state.error ? html`aria-describedby="form-error code-hint" aria-invalid="true"` : html`aria-describedby="code-hint"`}>
  <p class="hint" id="code-hint">Six digits. Lost your device? Enter one of your recovery codes instead.</p>
  <div class="actions"><button type="submit">Verify</button></div>
</form>` : ''}
${state.factors.passkeys > 0 ? html`<form method="post" action="/login/second-step/passkey">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="credential" data-webauthn-result>
  <div class="actions"><button type="button" class="${state.factors.totp ? 'secondary' : ''}" data-webauthn="get" data-options="/login/second-step/passkey/options" hidden>Use a passkey</button></div>
  <p class="hint" role="status" data-webauthn-status></p>
</form>` : ''}
<p class="muted"><a href="/login">Start again</a></p>
</section>`, { script: 'webauthn' });
}
