/**
 * Audit events: the security-relevant things that happened, as records an operator ships to a
 * log system (the pino sink in src/observability/audit.ts writes each as one JSON line with
 * `"audit": "<event>"`). An account's security log (src/core/accounts/security-log.ts) writes its
 * events here too, so the server log has one shape and one sink for both.
 *
 * No event carries a secret: no token, code, password, cookie or client secret, not even hashed.
 * Things are named by database ids (`userId`, `grantId`, `tokenId`), public ids (`clientId`,
 * a signing key's `kid`), a passkey's `passkeyId` (`passkeyRef`, a digest of its credential id)
 * and categories (`reason`). The one free text is the username typed at a
 * failed sign-in, cut to `TYPED_USERNAME_MAX` characters.
 */
import type { TokenKind } from './credentials/formats.js';
import type { UserStatus } from './accounts/ports.js';
import type { ClientType } from './oauth/ports.js';
import type { StaffAction, StaffTargetKind } from './staff/ports.js';
import { firstCharacters } from './text.js';

/** Where an action came from: a person in a browser, a client app at an OAuth endpoint, the command line. */
export type Via = 'site' | 'oauth' | 'cli';

/** The address a browser's request came from (TRUST_PROXY decides which hop is believed). */
interface FromBrowser {
  via: 'site';
  address: string;
}

/**
 * `invalid_second_factor`: the right password, then a wrong code of the authenticator app or a
 * wrong recovery code. `invalid_passkey`: a passkey's assertion that did not verify, alone or as
 * the second step (an unknown credential, a bad signature, a used or foreign challenge).
 * `throttled`: refused unchecked, at the password or at the second step, past a limit.
 */
export type SignInFailure = 'invalid_credentials' | 'account_unusable' | 'throttled' | 'invalid_second_factor' | 'invalid_passkey';

/** What signed the person in: the password alone, the password and a second factor, or a passkey alone. */
export type SignInMethod = 'password' | 'password_totp' | 'password_recovery_code' | 'password_passkey' | 'passkey';

export type AuditEvent =
  // ---- Sign-in (INTERFACE section 4) ----
  /**
   * Written when a session starts, on every path (a sign-in, a sign-up): after the second step for
   * an account that has one. `passkeyId` when a passkey signed in.
   */
  | { audit: 'sign_in.succeeded'; userId: number; username: string; address: string; method: SignInMethod; passkeyId?: string }
  /**
   * `userId` when the typed name (or the passkey) is an account's; none when it names none or the
   * attempt was refused unchecked. At a passkey alone nothing is typed: `username` is the account's, or empty.
   */
  | { audit: 'sign_in.failed'; username: string; reason: SignInFailure; address: string; userId?: number; passkeyId?: string }
  /** The password asked again before a sensitive action (a new personal token, a password change, deleting the account) was wrong or refused. */
  | { audit: 'password_confirm.failed'; userId: number; reason: 'wrong_password' | 'throttled'; address: string }
  /** A code asked again before turning two-step verification off, new recovery codes or deleting the account was wrong or refused. */
  | { audit: 'second_factor_confirm.failed'; userId: number; reason: 'wrong_code' | 'throttled'; address: string }
  | { audit: 'sign_out'; userId: number; address: string }
  // ---- Account security at /settings/security (issue 18 items 1–4) ----
  | ({ audit: 'totp.enabled'; userId: number } & FromBrowser)
  /** `method`: what confirmed it, a code of the authenticator app or a recovery code. */
  | ({ audit: 'totp.disabled'; userId: number; method: 'totp' | 'recovery_code' } & FromBrowser)
  | ({ audit: 'recovery_codes.regenerated'; userId: number } & FromBrowser)
  /** A recovery code completed a sign-in's second step (and is spent). */
  | ({ audit: 'recovery_code.used'; userId: number } & FromBrowser)
  /** `passkeyId`: `passkeyRef`, a digest of the passkey's credential id. */
  | ({ audit: 'passkey.added'; userId: number; passkeyId: string } & FromBrowser)
  | ({ audit: 'passkey.removed'; userId: number; passkeyId: string } & FromBrowser)
  /** The owner signed out one of their other sessions. */
  | ({ audit: 'session.signed_out'; userId: number } & FromBrowser)
  | ({ audit: 'sessions.signed_out_elsewhere'; userId: number; sessionsEnded: number } & FromBrowser)
  // ---- Tokens of client apps (seed sections 3 and 4.2, RFC 7009) ----
  | { audit: 'token.issued'; via: 'oauth'; clientId: string; userId: number; grantId: number; scope: string }
  | { audit: 'token.refreshed'; via: 'oauth'; clientId: string; userId: number; grantId: number; scope: string }
  | { audit: 'token.revoked'; via: 'oauth'; clientId: string; userId: number; grantId: number; kind: 'access' | 'refresh' }
  /** Seed section 3 rule 2: a code presented again; every grant of the user for the client was revoked. */
  | { audit: 'code.reuse_detected'; via: 'oauth'; clientId: string; userId: number; grantsRevoked: number; address: string }
  /**
   * A used code presented by a request it is not bound to (another client, code_verifier,
   * redirect_uri or DPoP key): refused, nothing revoked, but whoever sent it saw the code (a log, a
   * referrer). `presentedBy` is the client_id the request named, which for a public client anyone
   * may send: `address` is what says who sent it.
   */
  | { audit: 'code.used_presented_unbound'; via: 'oauth'; clientId: string; userId: number; presentedBy: string; address: string }
  /** RFC 9700 4.14.2: a rotated refresh token presented again; its grant (the family) was revoked. */
  | { audit: 'refresh_token.reuse_detected'; via: 'oauth'; clientId: string; userId: number; grantId: number; address: string }
  /** INTERFACE section 11: a rotated refresh token presented again within the replay window got the same successor answer. */
  | { audit: 'refresh_token.replayed'; via: 'oauth'; clientId: string; userId: number; grantId: number; address: string }
  // ---- Consent (INTERFACE section 10) ----
  | { audit: 'consent.granted'; userId: number; clientId: string; scope: string }
  | ({ audit: 'consent.withdrawn'; userId: number; clientId: string; grantsRevoked: number } & FromBrowser)
  // ---- Personal tokens (seed 5.1) ----
  | ({ audit: 'personal_token.created'; userId: number; tokenId: number; scope: string; expiresAt: string | null } & Actor)
  | ({ audit: 'personal_token.revoked'; userId: number; tokenId: number } & Actor)
  // ---- Client registrations (INTERFACE section 3) ----
  /** `via: 'oauth'`: the app registered itself (RFC 7591, INTERFACE section 13) from `address`. */
  | ({ audit: 'client.registered'; clientId: string; ownerId: number | null; type: ClientType } & (Actor | { via: 'oauth'; address: string }))
  | ({ audit: 'client.secret_rotated'; clientId: string; ownerId: number | null } & Actor)
  /** The owner deleted the secret a rotation replaced before its 7 days were up. */
  | ({ audit: 'client.previous_secret_deleted'; clientId: string; ownerId: number | null } & FromBrowser)
  | ({ audit: 'client.deactivated'; clientId: string; ownerId: number | null } & Actor)
  /** The owner saved its name, description and homepage on the developer page (never the words themselves). */
  | ({ audit: 'client.details_changed'; clientId: string; ownerId: number | null } & FromBrowser)
  /**
   * The owner saved the app's redirect URIs, or its sign-out addresses, on the developer page:
   * the addresses are public settings, and after a stolen session they are what an incident
   * needs first (where codes or people were sent from then on).
   */
  | ({ audit: 'client.redirect_uris_changed'; clientId: string; ownerId: number | null; redirectUris: string[] } & FromBrowser)
  | ({ audit: 'client.logout_uris_changed'; clientId: string; ownerId: number | null; postLogoutRedirectUris: string[]; backchannelLogoutUri: string | null } & FromBrowser)
  /** The owner required pushed authorization requests (RFC 9126 6), or stopped requiring them. */
  | ({ audit: 'client.pushed_requests_changed'; clientId: string; ownerId: number | null; required: boolean } & FromBrowser)
  /**
   * A client ID metadata document could not be fetched (INTERFACE section 13): `reason` is the
   * outbound request's own (a refused address, a DNS or connection error, the time limit), which
   * the requester is not told, so the service is not a probe of what lies behind it.
   */
  | { audit: 'client_document.unreachable'; clientId: string; reason: string }
  // ---- Accounts (INTERFACE section 4) ----
  | ({ audit: 'account.created'; userId: number; username: string } & Actor)
  | { audit: 'account.status_changed'; via: 'cli'; userId: number; status: UserStatus }
  /** By the owner at /settings/security, or by the operator (`svc user set-password`). */
  | ({ audit: 'account.password_changed'; userId: number; sessionsEnded: number } & Actor)
  /** The owner deleted the account at /settings/profile (issue 18 item 8); their own apps were deactivated with it. */
  | ({ audit: 'account.deleted'; userId: number; clientsDeactivated: number } & FromBrowser)
  /** The owner downloaded a copy of the account's data at /settings/profile (GDPR Art. 15 and 20). */
  | ({ audit: 'account.data_downloaded'; userId: number } & FromBrowser)
  /** The owner set a new e-mail address at /settings/email (never the address itself). */
  | ({ audit: 'account.email_changed'; userId: number } & FromBrowser)
  /** The owner opened the link that verifies the address. */
  | ({ audit: 'account.email_verified'; userId: number } & FromBrowser)
  /** Whoever reads the mailbox refused a verification link mailed to it: the account lost that address. */
  | ({ audit: 'account.email_refused'; userId: number } & FromBrowser)
  // ---- Signing keys (INTERFACE section 5) ----
  | { audit: 'signing_keys.rotated'; via: 'cli'; kids: Record<string, string>; activeAt: string; immediate: boolean; previousWithdrawn: boolean }
  // ---- Leak reports (INTERFACE section 11) ----
  /** A report was handled: how many strings it named, how many live credentials it revoked. */
  | { audit: 'leak_report.received'; source: LeakSource; address: string; submitted: number; revoked: number }
  /** One credential a report revoked, named by its id (a token's) or its client id (a client secret's). */
  | { audit: 'credential.revoked_as_leaked'; source: LeakSource; kind: TokenKind; userId: number | null; tokenId?: number; clientId?: string }
  // ---- The staff console (INTERFACE section 14) ----
  /**
   * A staff change, as its staff-log entry `staffLogId` holds it (the reason stays there, free
   * text). `actorId` null: the operator at the command line. `detail`: what it set (a status, a role).
   */
  | ({ audit: 'staff.action'; action: StaffAction; staffLogId: number; actorId: number | null; targetKind: StaffTargetKind; targetId: string; detail: Record<string, string> } & Actor);

/** Who reported a leak: anyone at /api/credentials/revoke, or a secret-scanning partner's signed alert. */
export type LeakSource = 'report' | 'secret_scanning';

/** Who did it: a signed-in person from an address, or the operator at the command line. */
type Actor = FromBrowser | { via: 'cli' };

export type AuditEventName = AuditEvent['audit'];

/** Every event's name, in the order the README lists them. */
export const AUDIT_EVENTS: readonly AuditEventName[] = [
  'sign_in.succeeded', 'sign_in.failed', 'password_confirm.failed', 'second_factor_confirm.failed', 'sign_out',
  'totp.enabled', 'totp.disabled', 'recovery_codes.regenerated', 'recovery_code.used', 'passkey.added', 'passkey.removed',
  'session.signed_out', 'sessions.signed_out_elsewhere',
  'token.issued', 'token.refreshed', 'token.revoked', 'code.reuse_detected', 'code.used_presented_unbound',
  'refresh_token.reuse_detected',
  'refresh_token.replayed',
  'consent.granted', 'consent.withdrawn', 'personal_token.created', 'personal_token.revoked',
  'client.registered', 'client.secret_rotated', 'client.previous_secret_deleted', 'client.deactivated', 'client.details_changed',
  'client.redirect_uris_changed', 'client.logout_uris_changed', 'client.pushed_requests_changed',
  'client_document.unreachable',
  'account.created', 'account.status_changed', 'account.password_changed', 'account.deleted', 'account.data_downloaded', 'account.email_changed', 'account.email_verified', 'account.email_refused', 'signing_keys.rotated',
  'leak_report.received', 'credential.revoked_as_leaked', 'staff.action',
];

/**
 * Where events go. Recording never fails the action it records and never waits on it. `reqId`:
 * the id of the request whose answer wrote the event, as its log lines carry it; none for an
 * event of the command line or of work no request started (a timer's).
 */
export interface AuditSink {
  record(event: AuditEvent, reqId?: string): void;
}

/** Records nothing: for code paths that run outside the service (the demo seeding, tools). */
export const NO_AUDIT: AuditSink = { record() {} };

export const TYPED_USERNAME_MAX = 64;

/** A name as typed at sign-in, cut so an event stays small whatever was pasted into the field. */
export function typedUsername(value: string): string {
  return firstCharacters(value, TYPED_USERNAME_MAX);
}
