/**
 * A member's security-log lines in words: what happened and where it came from, the same on the
 * member's security page and on the staff console's member page.
 */
import type { SecurityEvent } from '../../core/accounts/ports.js';
import { SECURITY_EVENT_KINDS, type SecurityEventKind } from '../../core/accounts/security-log.js';
import { deviceText } from '../../core/accounts/user-agent.js';
import type { Translator } from '../../core/locales.js';
import { isolated } from './words.js';

/** Each kind of event in words; a kind the log has but this table not is a compile error. */
function eventText(t: Translator, kind: SecurityEventKind): string {
  switch (kind) {
    case 'sign_in.succeeded': return t.text('security.eventSignIn');
    case 'sign_in.failed': return t.text('security.eventSignInFailed');
    case 'password.changed': return t.text('security.eventPasswordChanged');
    case 'totp.enabled': return t.text('security.eventTotpEnabled');
    case 'totp.disabled': return t.text('security.eventTotpDisabled');
    case 'recovery_codes.regenerated': return t.text('security.eventRecoveryCodes');
    case 'recovery_code.used': return t.text('security.eventRecoveryCodeUsed');
    case 'passkey.added': return t.text('security.eventPasskeyAdded');
    case 'passkey.removed': return t.text('security.eventPasskeyRemoved');
    case 'session.signed_out': return t.text('security.eventSessionSignedOut');
    case 'sessions.signed_out_elsewhere': return t.text('security.eventSignedOutElsewhere');
    case 'personal_token.created': return t.text('security.eventTokenCreated');
    case 'personal_token.revoked': return t.text('security.eventTokenRevoked');
    case 'app.authorized': return t.text('security.eventAppAuthorized');
    case 'app.access_withdrawn': return t.text('security.eventAppWithdrawn');
    case 'client_secret.rotated': return t.text('security.eventSecretRotated');
    case 'client_secret.previous_deleted': return t.text('security.eventPreviousSecretDeleted');
    case 'access_token.revoked_as_leaked': return t.text('security.eventAccessTokenLeaked');
    case 'refresh_token.revoked_as_leaked': return t.text('security.eventRefreshTokenLeaked');
    case 'personal_token.revoked_as_leaked': return t.text('security.eventTokenRevoked');
    case 'client_secret.revoked_as_leaked': return t.text('security.eventSecretLeaked');
    case 'client.deactivated': return t.text('security.eventClientDeactivated');
    case 'client.details_changed': return t.text('security.eventClientDetailsChanged');
    case 'client.redirect_uris_changed': return t.text('security.eventClientRedirectUrisChanged');
    case 'client.logout_uris_changed': return t.text('security.eventClientLogoutUrisChanged');
    case 'client.pushed_requests_changed': return t.text('security.eventClientPushedRequestsChanged');
    case 'account.deleted': return t.text('security.eventAccountDeleted');
    case 'account.data_downloaded': return t.text('security.eventDataDownloaded');
    case 'password.reset': return t.text('security.eventPasswordReset');
    case 'email.changed': return t.text('security.eventEmailChanged');
    case 'email.verified': return t.text('security.eventEmailVerified');
    case 'email.refused': return t.text('security.eventEmailRefused');
    case 'staff.sessions_revoked': return t.text('security.eventStaffSessionsRevoked');
    case 'staff.two_step_reset': return t.text('security.eventStaffTwoStepReset');
    case 'staff.role_changed': return t.text('security.eventStaffRoleChanged');
  }
}

/**
 * The English words the core stores for how and why (`SIGN_IN_METHOD_WORDS`, the refusals of
 * sign-in, the leak reports, the second factor that turned two-step off), in the reader's words.
 * Rows stored before keep reading right; a phrase not listed is shown as stored.
 */
function detailWord(t: Translator, stored: string): string {
  switch (stored) {
    case 'password': return t.text('security.methodPassword');
    case 'password and authenticator app': return t.text('security.methodPasswordTotp');
    case 'password and recovery code': return t.text('security.methodPasswordRecovery');
    case 'password and passkey': return t.text('security.methodPasswordPasskey');
    case 'passkey': return t.text('security.methodPasskey');
    case 'authenticator app code': return t.text('security.methodTotpCode');
    case 'recovery code': return t.text('security.methodRecoveryCode');
    case 'wrong password': return t.text('security.reasonWrongPassword');
    case 'wrong second-step code': return t.text('security.reasonWrongCode');
    case 'passkey not verified': return t.text('security.reasonPasskey');
    case 'too many wrong second-step codes': return t.text('security.reasonThrottled');
    case 'after a leak report': return t.text('security.reasonLeakReport');
    case 'after a secret scanner found it exposed': return t.text('security.reasonSecretScanning');
    default: return stored;
  }
}

function detailText(t: Translator, event: SecurityEvent): string {
  const d = event.detail;
  const parts = [
    d.method && t.text('security.detailMethod', { method: detailWord(t, d.method) }),
    d.reason && detailWord(t, d.reason),
    d.app && t.text('security.detailQuoted', { name: isolated(d.app) }),
    d.name && t.text('security.detailQuoted', { name: isolated(d.name) }),
    d.device && t.text('security.detailDevice', { device: deviceText(t, d.device) }),
    d.where && t.text('security.detailWhere', { where: d.where }),
    d.role && t.text('security.detailRole', { role: d.role }),
  ].filter(Boolean);
  return parts.join(' ');
}

/** Chinese sets no space beside a full-width bracket, nor between a Chinese word and a quotation. */
const CHINESE_UNSPACED = / (?=[（「])|(?<=[）」]) |(?<=[\u3400-\u9fff]) (?=“)/g;

/**
 * Where an event came from: its browser (or "the site's staff") and its address, whichever it has;
 * "unknown" for one with neither (a leak report's: the reporter is none of the owner's business).
 */
export function eventFrom(t: Translator, event: SecurityEvent): string {
  const from = [event.device === '' ? '' : deviceText(t, event.device), event.address].filter((x) => x !== '').join(t.text('settings.listSeparator'));
  return from || t.text('security.unknownOrigin');
}

/** The words of an event and its details, a space between them where the language sets one. */
export function eventLine(t: Translator, event: SecurityEvent): string {
  const what = isEventKind(event.kind) ? eventText(t, event.kind) : event.kind;
  return `${what} ${detailText(t, event)}`.trim().replace(CHINESE_UNSPACED, '');
}

function isEventKind(kind: string): kind is SecurityEventKind {
  return (SECURITY_EVENT_KINDS as readonly string[]).includes(kind);
}
