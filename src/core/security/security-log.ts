/**
 * The account's security log (issue 18 item 5): what happened to an account, for its owner to
 * read on /settings/security (newest first, 90 days), and the same event as one structured line
 * in the server log (`audit` field) for the operator.
 *
 * Its write path is its own store (`SecurityEventStore`), apart from the server log's audit
 * port: the event kinds below are named `noun.past_tense` so the two can be unified later.
 * An event never holds a secret: names of things (an app, a token's label, a passkey's name),
 * the method of a sign-in, the address and a coarse browser name, nothing that signs anyone in.
 */
import type { SecurityEvent, SecurityEventStore } from './ports.js';
import type { Clock } from '../time.js';
import { describeUserAgent } from './user-agent.js';

/** Every kind of event, with the words the log page shows for it. */
export const SECURITY_EVENT_KINDS = {
  'sign_in.succeeded': 'Signed in',
  'sign_in.failed': 'Failed sign-in attempt',
  'password.changed': 'Password changed',
  'totp.enabled': 'Two-step verification turned on',
  'totp.disabled': 'Two-step verification turned off',
  'recovery_codes.regenerated': 'New recovery codes made',
  'recovery_code.used': 'Recovery code used',
  'passkey.added': 'Passkey added',
  'passkey.removed': 'Passkey removed',
  'session.signed_out': 'A session was signed out',
  'sessions.signed_out_elsewhere': 'Signed out everywhere else',
  'personal_token.created': 'Personal token created',
  'personal_token.revoked': 'Personal token revoked',
  'app.authorized': 'Application authorized',
  'app.access_withdrawn': 'Application access withdrawn',
  'client_secret.rotated': 'Client secret rotated',
  // A leak report (INTERFACE section 11) named one of the account's credentials, which was revoked.
  // The words are followed by the reason ("after a leak report") and the app's or token's name.
  'access_token.revoked_as_leaked': 'Access token of an app revoked',
  'refresh_token.revoked_as_leaked': 'Sign-in to an app ended: its refresh token was revoked',
  'personal_token.revoked_as_leaked': 'Personal token revoked',
  'client_secret.revoked_as_leaked': 'Application deactivated: its client secret was revoked',
} as const;

export type SecurityEventKind = keyof typeof SECURITY_EVENT_KINDS;

/** Where an event came from: the request's address and User-Agent (kept as a coarse name). */
export interface EventOrigin {
  address: string;
  userAgent?: string | undefined;
}

export interface NewSecurityEvent {
  userId: number;
  kind: SecurityEventKind;
  origin?: EventOrigin | undefined;
  /** Short names only (`method`, `app`, `client_id`, `name`, `reason`…); never a secret. */
  detail?: Record<string, string>;
}

/** Where the audit lines go: the server's pino logger (`info(object, message)`). */
export interface AuditLogger {
  info(fields: object, message: string): void;
}

const SILENT: AuditLogger = { info: () => {} };

export class SecurityLog {
  private logger: AuditLogger = SILENT;

  constructor(private readonly store: SecurityEventStore, private readonly clock: Clock) {}

  /** The server's logger; until it is given (the command line), no audit line is written. */
  logTo(logger: AuditLogger): void {
    this.logger = logger;
  }

  /** Stores the event for its account and writes the audit line. */
  async record(event: NewSecurityEvent): Promise<void> {
    const stored = this.toStored(event);
    await this.store.insert(stored);
    this.writeLine(stored);
  }

  /**
   * Stores several events in as few statements as the database allows, through `store` (a
   * transaction's, so the events land with what they tell of), and writes their audit lines.
   */
  async recordAll(events: readonly NewSecurityEvent[], store: SecurityEventStore = this.store): Promise<void> {
    if (events.length === 0) return;
    const stored = events.map((event) => this.toStored(event));
    await store.insertMany(stored);
    for (const event of stored) this.writeLine(event);
  }

  private toStored(event: NewSecurityEvent): Omit<SecurityEvent, 'id'> {
    return {
      userId: event.userId,
      kind: event.kind,
      createdAt: this.clock.now(),
      address: event.origin?.address ?? '',
      device: event.origin ? describeUserAgent(event.origin.userAgent) : '',
      detail: Object.fromEntries(Object.entries(event.detail ?? {}).map(([k, v]) => [k, String(v).slice(0, 200)])),
    };
  }

  private writeLine(stored: Omit<SecurityEvent, 'id'>): void {
    this.logger.info({
      audit: {
        event: stored.kind, user_id: stored.userId, at: new Date(stored.createdAt).toISOString(),
        address: stored.address, device: stored.device, ...stored.detail,
      },
    }, 'security event');
  }
}

/** The words for an event kind, or the kind itself for one this release does not know. */
export function describeEventKind(kind: string): string {
  return (SECURITY_EVENT_KINDS as Record<string, string>)[kind] ?? kind;
}
