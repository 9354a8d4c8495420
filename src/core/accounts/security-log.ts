/**
 * The account's security log (issue 18 item 5): what happened to an account, for its owner to
 * read on /settings/security (newest first, 90 days). For the operator, each event reaches the
 * server log once, as an audit event through the one audit port (`AuditSink`, src/core/audit.ts):
 * `AUDIT_OF` says which, for every kind.
 *
 * An event never holds a secret: names of things (an app, a token's label, a passkey's name),
 * the method of a sign-in, the address and a coarse browser name, nothing that signs anyone in.
 * Its audit event holds less: ids and categories, no name a person chose.
 */
import type { AuditEvent, AuditEventName, AuditSink, SignInMethod } from '../audit.js';
import type { SecurityEvent, SecurityEventStore } from './ports.js';
import type { Locale } from '../locales.js';
import { type Log, QUIET } from '../log.js';
import { firstCharacters } from '../text.js';
import type { Clock } from '../time.js';
import { SITE_STAFF, describeUserAgent } from './user-agent.js';

/**
 * Every kind of event. The log page words each in the reader's language (the `security` catalog,
 * `src/http/views/security-events.ts`); the core keeps only the kinds.
 */
export const SECURITY_EVENT_KINDS = [
  'sign_in.succeeded',
  'sign_in.failed',
  'password.changed',
  'totp.enabled',
  'totp.disabled',
  'recovery_codes.regenerated',
  'recovery_code.used',
  'passkey.added',
  'passkey.removed',
  'session.signed_out',
  'sessions.signed_out_elsewhere',
  'personal_token.created',
  'personal_token.revoked',
  'app.authorized',
  'app.access_withdrawn',
  'client_secret.rotated',
  'client_secret.previous_deleted',
  // A leak report (INTERFACE section 11) named one of the account's credentials, which was revoked.
  // The page follows its words by the reason ("after a leak report") and the app's or token's name.
  'access_token.revoked_as_leaked',
  'refresh_token.revoked_as_leaked',
  'personal_token.revoked_as_leaked',
  'client_secret.revoked_as_leaked',
  'client.deactivated',
  'client.details_changed',
  'client.redirect_uris_changed',
  'client.logout_uris_changed',
  'client.pushed_requests_changed',
  // No longer written: the member's own deletion now erases the log it would join. Lines stored
  // before stay readable on the staff console's page of the member until the janitor's 90 days.
  'account.deleted',
  // The member downloaded a copy of their data (`downloadAccountData`).
  'account.data_downloaded',
  'password.reset',
  'email.changed',
  'email.verified',
  // The reader of a verification mail refused it ("Not you?"): the account lost the address it asked for.
  'email.refused',
  // The site's staff acted on the account (INTERFACE section 14): the member reads what, never the
  // staff's reason or name (those are in the staff log).
  'staff.sessions_revoked',
  'staff.two_step_reset',
  'staff.role_changed',
] as const;

export type SecurityEventKind = (typeof SECURITY_EVENT_KINDS)[number];

/** How the log words each way of signing in (`detail.method` of `sign_in.succeeded`). */
export const SIGN_IN_METHOD_WORDS: Record<SignInMethod, string> = {
  password: 'password',
  password_totp: 'password and authenticator app',
  password_recovery_code: 'password and recovery code',
  password_passkey: 'password and passkey',
  passkey: 'passkey',
};

/**
 * What a sign-in's `detail.method` words say a stranger holding it had: the password alone (so
 * the account has no second step), the password and a second step, or a passkey alone. Its
 * notice's advice depends on it (attack86, attack87).
 */
export function signInProofOf(methodWords: string | undefined): 'password' | 'second_step' | 'passkey' {
  if (methodWords === SIGN_IN_METHOD_WORDS.passkey) return 'passkey';
  return SECOND_STEP_METHOD_WORDS.has(methodWords ?? '') ? 'second_step' : 'password';
}

const SECOND_STEP_METHOD_WORDS: ReadonlySet<string> = new Set([
  SIGN_IN_METHOD_WORDS.password_totp, SIGN_IN_METHOD_WORDS.password_recovery_code, SIGN_IN_METHOD_WORDS.password_passkey,
]);

/** Where an event came from: the request's address and User-Agent (kept as a coarse name). */
export interface EventOrigin {
  address: string;
  userAgent?: string | undefined;
  /** The language of the page it came from: its notice's, when the member saved none. Not stored. */
  locale?: Locale | undefined;
  /** The request's id, as its log lines carry it (`reqId`): a part that fails is logged with it, and its audit line carries it. Not stored. */
  requestId?: string | undefined;
  /** The site's staff made it (the operator at the command line): stored as from `SITE_STAFF`, with no address. */
  staff?: true;
}

/** The origin of an event the site's staff made: no address, no browser, told as theirs. */
export const STAFF_ORIGIN: EventOrigin = { address: '', staff: true };

export interface NewSecurityEvent {
  userId: number;
  kind: SecurityEventKind;
  origin?: EventOrigin | undefined;
  /** Short names only (`method`, `app`, `client_id`, `name`, `reason`…); never a secret. */
  detail?: Record<string, string>;
  /** The request's id (`reqId`) for an event told with no origin: its audit line, and the error line of a part that fails, carry it all the same. Not stored. */
  requestId?: string | undefined;
}

type StoredEvent = Omit<SecurityEvent, 'id'>;

/**
 * The audit event of each kind: either written by the action that records the kind, beside it
 * (`writtenBy`: the action has ids the account's log does not keep, such as a token's or a
 * grant's), or made here from the stored event. Either way one audit event per security event,
 * so the server log has each once.
 */
type AuditOf = { writtenBy: AuditEventName } | ((event: StoredEvent) => AuditEvent);

/** A site action's audit event: the account and the browser's address. */
const fromBrowser = (event: StoredEvent) => ({ userId: event.userId, via: 'site' as const, address: event.address });
/** A count the stored event keeps as text (`detail` is strings). */
const count = (value: string | undefined) => (value !== undefined && /^\d{1,9}$/.test(value) ? Number(value) : 0);

export const AUDIT_OF: { readonly [K in SecurityEventKind]: AuditOf } = {
  // src/http/plugins/session.ts, when the session starts.
  'sign_in.succeeded': { writtenBy: 'sign_in.succeeded' },
  // src/core/accounts/sign-in.ts: a wrong password, and `recordRefusedSignIn` (a refused second step or passkey).
  'sign_in.failed': { writtenBy: 'sign_in.failed' },
  'password.changed': (e) => ({ audit: 'account.password_changed', ...fromBrowser(e), sessionsEnded: count(e.detail.other_sessions_signed_out) }),
  'totp.enabled': (e) => ({ audit: 'totp.enabled', ...fromBrowser(e) }),
  'totp.disabled': (e) => ({ audit: 'totp.disabled', ...fromBrowser(e), method: e.detail.method === 'recovery code' ? 'recovery_code' : 'totp' }),
  'recovery_codes.regenerated': (e) => ({ audit: 'recovery_codes.regenerated', ...fromBrowser(e) }),
  'recovery_code.used': (e) => ({ audit: 'recovery_code.used', ...fromBrowser(e) }),
  // The passkey by `passkey_id` (`passkeyRef`), never by the name its owner gave it.
  'passkey.added': (e) => ({ audit: 'passkey.added', ...fromBrowser(e), passkeyId: e.detail.passkey_id ?? '' }),
  'passkey.removed': (e) => ({ audit: 'passkey.removed', ...fromBrowser(e), passkeyId: e.detail.passkey_id ?? '' }),
  'session.signed_out': (e) => ({ audit: 'session.signed_out', ...fromBrowser(e) }),
  'sessions.signed_out_elsewhere': (e) => ({ audit: 'sessions.signed_out_elsewhere', ...fromBrowser(e), sessionsEnded: count(e.detail.sessions) }),
  // src/http/routes/settings.ts, with the token's id.
  'personal_token.created': { writtenBy: 'personal_token.created' },
  'personal_token.revoked': { writtenBy: 'personal_token.revoked' },
  // src/core/oauth/authorize/flow.ts, with everything consented to so far.
  'app.authorized': { writtenBy: 'consent.granted' },
  // src/http/routes/settings.ts, with the grants it ended.
  'app.access_withdrawn': { writtenBy: 'consent.withdrawn' },
  'client_secret.rotated': { writtenBy: 'client.secret_rotated' },
  'client_secret.previous_deleted': { writtenBy: 'client.previous_secret_deleted' },
  'client.deactivated': { writtenBy: 'client.deactivated' },
  'client.details_changed': { writtenBy: 'client.details_changed' },
  'client.redirect_uris_changed': { writtenBy: 'client.redirect_uris_changed' },
  'client.logout_uris_changed': { writtenBy: 'client.logout_uris_changed' },
  'client.pushed_requests_changed': { writtenBy: 'client.pushed_requests_changed' },
  // src/core/credentials/leaked-credentials.ts, after its transaction commits, with the credential's id.
  'access_token.revoked_as_leaked': { writtenBy: 'credential.revoked_as_leaked' },
  'refresh_token.revoked_as_leaked': { writtenBy: 'credential.revoked_as_leaked' },
  'personal_token.revoked_as_leaked': { writtenBy: 'credential.revoked_as_leaked' },
  'client_secret.revoked_as_leaked': { writtenBy: 'credential.revoked_as_leaked' },
  // src/core/accounts/account-deletion.ts, with the apps it deactivated.
  'account.deleted': { writtenBy: 'account.deleted' },
  'account.data_downloaded': (e) => ({ audit: 'account.data_downloaded', ...fromBrowser(e) }),
  'password.reset': (e) => ({ audit: 'account.password_changed', ...fromBrowser(e), sessionsEnded: count(e.detail.sessions_signed_out) }),
  'email.changed': (e) => ({ audit: 'account.email_changed', ...fromBrowser(e) }),
  'email.verified': (e) => ({ audit: 'account.email_verified', ...fromBrowser(e) }),
  'email.refused': (e) => ({ audit: 'account.email_refused', ...fromBrowser(e) }),
  // src/core/staff/staff.ts, in the staff change's transaction, with its staff log entry.
  'staff.sessions_revoked': { writtenBy: 'staff.action' },
  'staff.two_step_reset': { writtenBy: 'staff.action' },
  'staff.role_changed': { writtenBy: 'staff.action' },
};

export class SecurityLog {
  private log: Log = QUIET;

  /** `notify` mails the owner the events that call for it (`security-notices.ts`). */
  constructor(
    private readonly store: SecurityEventStore,
    private readonly clock: Clock,
    private readonly audit: AuditSink,
    private readonly notify: (event: StoredEvent, pageLocale: Locale | undefined) => Promise<void> = async () => {},
  ) {}

  /** What `record` could not write is logged through `log` from now on (the server's logger). */
  reportTo(log: Log): void {
    this.log = log;
  }

  /**
   * Stores the event for its account unless the account is deleted, writes its audit event and
   * mails its notice (not for a deleted account), each whatever became of the others. It is
   * called once the change is made, so it never throws: a failure is an error in the server's
   * log, and the change is answered as made. A line that could not be
   * stored (a statement timeout, a constraint of that one table) must not also keep the member
   * from hearing of the change, when the outbox, another table, may well take the mail, nor keep
   * the operator's audit line from the server log, nor turn a made change (an account deleted, a
   * recovery code spent on a sign-in) into an error page that says it was not.
   *
   * `ownAudit` is the action's own audit event, for a kind whose audit event its action writes
   * (`AUDIT_OF`'s `writtenBy`): written here among the parts, so a line that fails does not take it too.
   */
  async record(event: NewSecurityEvent, ownAudit?: AuditEvent): Promise<void> {
    const stored = this.toStored(event);
    const [audit, notice] = this.tellings(event, stored, ownAudit);
    // Written after the change, outside its transaction, so only while the account is not
    // deleted: a line landing after the member's own deletion erased the log would stay, and a
    // deleted account, whoever deleted it, is told nothing (a wrong password for it writes
    // nothing either). Its notice goes only with the line; the audit line goes either way.
    let deleted = false;
    await this.attempt(event, stored, [async () => { deleted = !(await this.store.insertUnlessDeleted(stored)); }, audit]);
    if (!deleted) await this.attempt(event, stored, [notice]);
  }

  /**
   * Stores the event through `store`, a transaction's, so the line lands with the change it tells
   * of or not at all (a line written after the commit could land after the member's own deletion
   * had erased the log, and stay). Its audit line and notice are written by the function it
   * answers, for the caller to call once the transaction has committed; that function never
   * throws, as `record` never does: the change is made by then.
   */
  async recordWithin(store: SecurityEventStore, event: NewSecurityEvent, ownAudit?: AuditEvent): Promise<() => Promise<void>> {
    const stored = this.toStored(event);
    await store.insert(stored);
    return () => this.attempt(event, stored, this.tellings(event, stored, ownAudit));
  }

  /** The event's audit line and notice mail. */
  private tellings(event: NewSecurityEvent, stored: StoredEvent, ownAudit: AuditEvent | undefined): [audit: () => unknown, notice: () => unknown] {
    const requestId = event.origin?.requestId ?? event.requestId;
    return [() => this.writeAudit(stored, requestId, ownAudit), () => this.notify(stored, event.origin?.locale)];
  }

  /** Runs `parts` (`eachAttempted`); what failed is an error line of the server's log, never thrown. */
  private async attempt(event: NewSecurityEvent, stored: StoredEvent, parts: ReadonlyArray<() => unknown>): Promise<void> {
    // The request's id, whether the event has an origin or was told without one (`email.refused`):
    // its audit line and the error line of a part that fails both carry it.
    const requestId = event.origin?.requestId ?? event.requestId;
    try {
      await eachAttempted(parts);
    } catch (error) {
      this.log.error({ err: error, kind: stored.kind, userId: stored.userId, ...(requestId === undefined ? {} : { reqId: requestId }) },
        'a change to an account was made, but its security-log line, audit line or notice mail could not be written');
    }
  }

  /**
   * Stores several events in as few statements as the database allows, through `store` (a
   * transaction's, so the events land with what they tell of). Their audit events and notices are
   * written by the function it answers, for the caller to call once the transaction has committed:
   * a rolled back action leaves no line and mails nothing (and the notice's reads wait for no
   * transaction, which on SQLite holds the one connection).
   */
  async recordAll(events: readonly NewSecurityEvent[], store: SecurityEventStore = this.store): Promise<() => Promise<void>> {
    if (events.length === 0) return async () => {};
    const stored = events.map((event) => this.toStored(event));
    await store.insertMany(stored);
    // Each audit line and notice whatever became of the others: one member's mail that cannot be
    // queued must not silence the next member's.
    return () => eachAttempted([
      ...stored.map((event, i) => () => this.writeAudit(event, events[i]!.origin?.requestId ?? events[i]!.requestId)),
      ...stored.map((event, i) => () => this.notify(event, events[i]!.origin?.locale)),
    ]);
  }

  private toStored(event: NewSecurityEvent): StoredEvent {
    return {
      userId: event.userId,
      kind: event.kind,
      createdAt: this.clock.now(),
      address: event.origin?.address ?? '',
      device: event.origin?.staff ? SITE_STAFF : event.origin ? describeUserAgent(event.origin.userAgent) : '',
      detail: Object.fromEntries(Object.entries(event.detail ?? {}).map(([k, v]) => [k, firstCharacters(String(v), 200)])),
    };
  }

  /** `requestId`: the request the event came of (`EventOrigin`), which its audit line names. */
  private writeAudit(stored: StoredEvent, requestId: string | undefined, ownAudit?: AuditEvent): void {
    const of = AUDIT_OF[stored.kind as SecurityEventKind];
    if (typeof of === 'function') this.audit.record(of(stored), requestId);
    else if (ownAudit) this.audit.record(ownAudit, requestId);
  }
}

/**
 * Runs every part, one after another, whatever became of the ones before, then throws the first
 * failure (several: all of them, as one `AggregateError`).
 */
async function eachAttempted(parts: ReadonlyArray<() => unknown>): Promise<void> {
  const failures: unknown[] = [];
  for (const part of parts) {
    try {
      await part();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, 'a security-log line, its audit event or its notice mail could not be written');
}
