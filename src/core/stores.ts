/**
 * What the core needs from the outside world, as small interfaces: each domain declares the ones
 * it consumes in its own `ports.ts`, and `Stores` gathers them, over one connection or one
 * transaction. Storage implements them over Kysely (src/storage/repositories); tests run one
 * contract suite against every implementation. Lookups return `undefined` when nothing
 * matches; they never throw for "not found".
 */
import type { MemberEmailStore, PasskeyStore, PendingSignInStore, SecondFactorStore, SecurityEventStore, SessionStore, UserStore } from './accounts/ports.js';
import type { PostStore } from './community/ports.js';
import type { LeakedCredentialStore, OneTimeSecretStore, PersonalTokenStore, SealedColumnStore, ServerSecretStore } from './credentials/ports.js';
import type { ClientStore, CodeStore, ConsentStore, DpopReplayStore, GrantStore, PushedAuthorizationRequestStore, TokenStore } from './oauth/ports.js';
import type { MailOutboxStore, MailRecipientStore } from './mail/ports.js';
import type { KeyStore, LogoutDeliveryStore } from './oidc/ports.js';
import type { AppDirectory, DailyFigureStore, MemberDirectory, RoleStore, StaffLogStore } from './staff/ports.js';
import type { Instant } from './time.js';

export interface Page<T> {
  items: T[];
  total: number;
}

export interface PurgeOptions {
  auditWindowMs: number;
  batchSize: number;
  grantLifetimeMs: number;
  deliveryMaxAgeMs: number;
  mailMaxAgeMs: number;
  securityLogWindowMs: number;
  selfRegisteredGraceMs: number;
  documentClientGraceMs: number;
  /** A sealed replay answer older than this (since its token was used) is erased: the longest window allowed and a margin. */
  sealedAnswerMaxAgeMs: number;
}

/** Deletes what no rule needs any more, in small batches (issue 7's janitor). */
export interface Housekeeping {
  /**
   * `grantLifetimeMs`: how long an idle grant can still have a live token (the refresh lifetime).
   * `deliveryMaxAgeMs`: how long a back-channel logout is tried before it is given up.
   * `mailMaxAgeMs`: how long a mail is tried before it is given up.
   * `securityLogWindowMs`: how long the accounts' security log is kept.
   * `selfRegisteredGraceMs`: how long an app that registered itself may go without a grant (one staff verified stays).
   * `documentClientGraceMs`: how long a document's app's row may go unrefreshed without a grant, consent or staff's verified mark.
   */
  purge(now: Instant, options: PurgeOptions): Promise<Record<string, number>>;
}

/** Every store, over one connection or one transaction. */
export interface Stores {
  users: UserStore;
  posts: PostStore;
  clients: ClientStore;
  consents: ConsentStore;
  grants: GrantStore;
  codes: CodeStore;
  tokens: TokenStore;
  personalTokens: PersonalTokenStore;
  keys: KeyStore;
  sessions: SessionStore;
  serverSecrets: ServerSecretStore;
  sealedColumns: SealedColumnStore;
  logoutDeliveries: LogoutDeliveryStore;
  mailOutbox: MailOutboxStore;
  mailRecipients: MailRecipientStore;
  memberEmails: MemberEmailStore;
  secondFactors: SecondFactorStore;
  passkeys: PasskeyStore;
  pendingSignIns: PendingSignInStore;
  securityEvents: SecurityEventStore;
  pushedRequests: PushedAuthorizationRequestStore;
  leakedCredentials: LeakedCredentialStore;
  dpopProofs: DpopReplayStore;
  oneTimeSecrets: OneTimeSecretStore;
  roles: RoleStore;
  staffLog: StaffLogStore;
  memberDirectory: MemberDirectory;
  dailyFigures: DailyFigureStore;
  appDirectory: AppDirectory;
  housekeeping: Housekeeping;
  /** Runs `work` in one transaction: all of its writes land, or none (a crash mid-way loses nothing). */
  transaction<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
  /**
   * Runs `work` reading one consistent picture of the data, as of its first read, that neither
   * waits for writes nor holds them up while it lasts (PostgreSQL: REPEATABLE READ, READ ONLY;
   * SQLite: a read transaction on a connection of its own), for reads as slow as the client they
   * stream to. An in-memory SQLite database, which no other connection sees, and a transaction
   * read as they are. Only reads: the picture's stores write nothing.
   */
  readSnapshot<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
}
