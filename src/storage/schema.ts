/**
 * One interface per table (Kysely's `Database`). Instants are epoch milliseconds (UTC) in
 * `bigint`/`integer` columns; booleans are written as 0/1 and read through `Boolean()`, since
 * SQLite has no boolean type and PostgreSQL accepts 0/1 for one.
 */
import type { Generated } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  username: string;
  /** Lower-cased username, unique: names are unique regardless of case. */
  username_key: string;
  password_hash: string;
  status: string;
  bio: string;
  member: number | boolean;
  level: number;
  xp: number;
  created_at: number;
  updated_at: number;
  /**
   * When the account last entered or left `active` (`User.statusChangedAt`; migration 2026-11-30-0110).
   * Its default, 0, only lets the column be added to rows that exist: every insert names it.
   */
  status_changed_at: Generated<number>;
  /** How many of the user's posts are published, kept by triggers on `posts` (migration 2026-11-23-0080). */
  published_posts: Generated<number>;
  /** The name the site shows (INTERFACE section 12); `null`: the username. */
  nickname: string | null;
  /** A supported language tag (`en`, `zh-CN`, `zh-TW`); `null`: none chosen. */
  language: string | null;
  /** An IANA time zone; `null`: the site's (`SITE_TIME_ZONE`). */
  time_zone: string | null;
  /** `member`, `moderator` or `admin` (INTERFACE section 14). */
  role: Generated<string>;
  /**
   * How far the passes have brought the `author_hidden` flags of the member's posts: `none` (none
   * flagged), `some` (a pass under way), `all` (all flagged when the last pass ended). A post is
   * flagged only while this is not `none` (migration 2026-11-29-0010).
   */
  posts_flagged: Generated<'none' | 'some' | 'all'>;
}

/** The overview's counts (`FigureCounter`): one row per day (site's zone) and figure. */
export interface DailyFiguresTable {
  day: string;
  figure: string;
  count: number | string;
}

/** Staff actions, appended only: triggers refuse an update or a delete (migration 2026-11-24-0100). */
export interface StaffLogTable {
  id: Generated<number>;
  created_at: number;
  actor_id: number | null;
  actor_name: string;
  action: string;
  target_kind: string;
  target_id: string;
  target_name: string;
  detail: string;
  reason: string;
}

export interface AvatarsTable {
  user_id: number;
  content_type: string;
  image: Uint8Array;
  updated_at: number;
  /**
   * The `updated_at` of the image that was last decoded and encoded anew (one that does not decode
   * is removed instead); null or any other value means not yet (migrations
   * 2026-11-23-0090-avatar-metadata and 2026-11-24-0020-avatar-reencoding).
   */
  metadata_checked: number | null;
}

export interface CategoriesTable {
  id: Generated<number>;
  name: string;
  name_key: string;
}

export interface PostsTable {
  id: Generated<number>;
  author_id: number;
  category_id: number;
  title: string;
  body: string;
  /**
   * Plain text made from the body at write time. Null only for a post written before the column
   * existed (or by an older release during a rolling upgrade) until the migrate step fills it.
   */
  excerpt: string | null;
  /** Set with `excerpt`, and null only with it (migration 2026-11-23-0001-post-renderings). */
  body_html: string | null;
  status: string;
  like_count: Generated<number>;
  comment_count: Generated<number>;
  view_count: Generated<number>;
  created_at: number;
  updated_at: number;
  /**
   * 1 once a pass (`syncHiddenFlags`) has marked the post of a member who is not active, so the home
   * page's index `posts_recent_shown` leaves it out (migration 2026-11-29-0010). Only an
   * accelerator: what is shown is decided by the author's `users.status`.
   */
  author_hidden: Generated<number>;
}

export interface PostLikesTable {
  post_id: number;
  user_id: number;
  created_at: number;
}

export interface CommentsTable {
  id: Generated<number>;
  post_id: number;
  author_id: number;
  body: string;
  created_at: number;
}

export interface ClientsTable {
  client_id: string;
  name: string;
  description: string;
  homepage_url: string;
  owner_id: number | null;
  type: string;
  /** JSON array of exact strings. */
  redirect_uris: string;
  allowed_scopes: string;
  status: string;
  secret_hash: string | null;
  id_token_alg: string;
  /** JSON array of exact strings (RP-Initiated Logout 1.0). */
  post_logout_redirect_uris: Generated<string>;
  backchannel_logout_uri: string | null;
  /** RFC 9126 5: authorization requests must be pushed. 0/1 (SQLite) or boolean (PostgreSQL). */
  require_pushed_authorization_requests: Generated<number | boolean>;
  /** RFC 7591: the app registered itself at /api/oauth/register. 0/1 (SQLite) or boolean (PostgreSQL). */
  self_registered: Generated<number | boolean>;
  member_registered: Generated<number | boolean>;
  /** The secret the last rotation replaced, accepted until `previous_secret_expires_at`; both null when none. */
  previous_secret_hash: Generated<string | null>;
  previous_secret_expires_at: Generated<number | null>;
  created_at: number;
  updated_at: number;
  /** When staff marked the app verified (INTERFACE section 14); null: not verified. */
  verified_at: Generated<number | null>;
}

export interface ConsentsTable {
  user_id: number;
  client_id: string;
  scope: string;
  created_at: number;
  updated_at: number;
}

export interface GrantsTable {
  id: Generated<number>;
  user_id: number;
  client_id: string;
  scope: string;
  nonce: string | null;
  auth_time: number;
  created_at: number;
  last_used_at: number;
  revoked_at: number | null;
  revoked_reason: string | null;
  /** The sign-in session the grant was approved in (`sid` of its id_tokens); null before the column existed. */
  sid: string | null;
  /** Space-separated RFC 8176 methods of the sign-in that approved it; null for grants older than the column. */
  amr: string | null;
  /** The RFC 8707 resource the authorization asked for; null when it named none. */
  resource: Generated<string | null>;
}

export interface AuthorizationCodesTable {
  code_hash: string;
  grant_id: number;
  client_id: string;
  user_id: number;
  redirect_uri: string;
  scope: string;
  code_challenge: string | null;
  nonce: string | null;
  auth_time: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** The authorization request's `dpop_jkt` (RFC 9449 10): the key the token request must prove. */
  dpop_jkt: string | null;
}

export interface AccessTokensTable {
  id: Generated<number>;
  token_hash: string;
  grant_id: number;
  client_id: string;
  user_id: number;
  scope: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  /** RFC 7638 thumbprint of the DPoP key the token is bound to (RFC 9449 6); null: a bearer token. */
  dpop_jkt: string | null;
  /** The RFC 8707 resource the token is for alone; null: none was named. */
  resource: Generated<string | null>;
}

export interface RefreshTokensTable {
  id: Generated<number>;
  token_hash: string;
  grant_id: number;
  client_id: string;
  user_id: number;
  scope: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
  /** RFC 7638 thumbprint of the DPoP key the token is bound to (RFC 9449 6); null: a bearer token. */
  dpop_jkt: string | null;
  /** The RFC 8707 resource the token is for alone; null: none was named. */
  resource: Generated<string | null>;
  /** Set at rotation: the successor refresh token's `token_hash` (issue 19 item 1). */
  successor_hash: Generated<string | null>;
  /** The successor's token answer, sealed under a key derived from this token (`src/core/oauth/tokens/replay.ts`); erased once the successor is used. */
  replay_sealed: Generated<string | null>;
}

export interface PersonalTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  token_hash: string;
  scope: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: string;
  /** The private JWK as JSON, or sealed (`enc:v2:…`, `src/core/credentials/sealing.ts`) when KEYS_SECRET is set. */
  private_jwk: string;
  created_at: number;
  /** When it starts signing: published first (INTERFACE section 5). */
  active_at: number;
  /** When it stops signing: its successor's `active_at`, or at once after a compromise. */
  retired_at: number | null;
  /** When it leaves the JWKS; the janitor then deletes it. */
  withdrawn_at: number | null;
}

export interface SessionsTable {
  id_hash: string;
  user_id: number;
  auth_time: number;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  ended_at: number | null;
  /** Space-separated RFC 8176 methods of the sign-in (`pwd`, `pwd otp`, `hwk user`…). */
  amr: Generated<string>;
  /** The browser's User-Agent at sign-in, cut to 512 characters. */
  user_agent: Generated<string>;
  /** The address the sign-in came from. */
  address: Generated<string>;
}

/** An authenticator app (RFC 6238); `confirmed_at` null while enrolment waits for a code. */
export interface TotpCredentialsTable {
  user_id: number;
  /** The base32 secret, or sealed (`enc:v2:…`, `src/core/credentials/sealing.ts`) when KEYS_SECRET is set. */
  secret: string;
  created_at: number;
  confirmed_at: number | null;
  /** The last time step accepted: a code of it or an earlier step is never accepted again. */
  last_step: number | null;
}

export interface RecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  /** SHA-256 of the code (80 random bits), base64url. */
  code_hash: string;
  created_at: number;
  used_at: number | null;
}

export interface PasskeysTable {
  /** The WebAuthn credential id, base64url. */
  credential_id: string;
  user_id: number;
  name: string;
  /** The COSE public key, base64url. */
  public_key: string;
  counter: number;
  /** Space-separated authenticator transports. */
  transports: Generated<string>;
  backed_up: Generated<number>;
  created_at: number;
  last_used_at: number | null;
}

export interface WebauthnChallengesTable {
  challenge: string;
  purpose: string;
  user_id: number | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** A password accepted, waiting for the second step; the browser holds the id, the table its SHA-256. */
export interface PendingSignInsTable {
  id_hash: string;
  user_id: number;
  amr: string;
  return_to: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** A new secret between the POST that made it and the page that shows it once; sealed under a key only the browser holds. */
export interface OneTimeSecretsTable {
  id_hash: string;
  user_id: number;
  purpose: string;
  subject: Generated<string>;
  sealed: string;
  created_at: number;
  expires_at: number;
}

/** Pushed authorization requests (RFC 9126): single use, 60 seconds. */
export interface PushedAuthorizationRequestsTable {
  /** SHA-256 of the random part of the `request_uri`. */
  request_hash: string;
  client_id: string;
  /** JSON array of [name, value] pairs. */
  parameters: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface SecurityEventsTable {
  id: Generated<number>;
  user_id: number;
  kind: string;
  created_at: number;
  address: Generated<string>;
  device: Generated<string>;
  /** JSON object; never a secret. */
  detail: Generated<string>;
}

/** DPoP proofs accepted (RFC 9449 11.1), by SHA-256 of key thumbprint and `jti`, until they could no longer be. */
export interface DpopProofsTable {
  key: string;
  expires_at: number;
}

/** Random secrets shared by every instance, made once (`ServerSecretStore`). */
export interface ServerSecretsTable {
  name: string;
  /** base64url, or sealed (`enc:v2:…`, `src/core/credentials/sealing.ts`) when KEYS_SECRET is set. */
  value: string;
  created_at: number;
}

/**
 * A back-channel logout token still to be delivered, or delivered or given up (until the janitor):
 * pending while `delivered_at` and `abandoned_at` are both null. A worker claims a due row by
 * writing its own `claim` and a `lease_until`; the lease lets another instance take the row over
 * when the one that claimed it died.
 */
/** A member's one e-mail address (INTERFACE section 12). */
export interface MemberEmailsTable {
  user_id: number;
  address: string;
  address_key: string;
  verified_at: number | null;
  updated_at: number;
  /** The language of the page the address was given on (`null` for one given before it was kept). */
  language: string | null;
  /** An address the member asked to change to, not verified yet; `address` stays verified meanwhile. */
  pending_address: string | null;
  pending_address_key: string | null;
  /** The SMTP reply code with which its server refused the newest mail to `address`; null once one is accepted, or the address changed or verified. */
  refusal_code: number | null;
  /** The same for `pending_address`. */
  pending_refusal_code: number | null;
}

/** A single-use link mailed to a member: only its SHA-256 is stored. */
export interface EmailLinksTable {
  token_hash: string;
  user_id: number;
  purpose: string;
  address_key: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** A verification link refused by its "Not you?" form. */
  refused_at: number | null;
}

/** The mail outbox (src/core/mail/ports.ts); a row that left the queue keeps no body. */
export interface MailOutboxTable {
  id: Generated<number>;
  user_id: number | null;
  kind: string;
  recipient: string;
  subject: string;
  body_text: string;
  body_html: string | null;
  /** The language the mail was written in (`en`, `zh-CN`, `zh-TW`); null for a mail queued before it was kept. */
  language: string | null;
  created_at: number;
  attempts: Generated<number>;
  next_attempt_at: number;
  lease_until: number | null;
  claim: string | null;
  last_error: string | null;
  sent_at: number | null;
  /** When it left the queue unsent, or not known to be sent (`maybe_sent_at`): no instance tries it again. */
  abandoned_at: number | null;
  /** When its whole message went to the server and no reply came: it may have been delivered (`MailState` `maybe_sent`). */
  maybe_sent_at: number | null;
  /** The SMTP reply code with which the server refused the address of a mail given up (RCPT or DATA); null for any other row. */
  reply_code: number | null;
}

export interface LogoutDeliveriesTable {
  id: Generated<number>;
  client_id: string;
  user_id: number;
  sid: string | null;
  /** The logout token's `jti`: the same on every attempt, so a receiver can tell a repeat. */
  jti: string;
  /** What caused it: `signed_out`, or the revocation reason of the grant. */
  cause: string;
  created_at: number;
  attempts: Generated<number>;
  next_attempt_at: number;
  lease_until: number | null;
  claim: string | null;
  last_error: string | null;
  delivered_at: number | null;
  abandoned_at: number | null;
}

export interface Database {
  users: UsersTable;
  avatars: AvatarsTable;
  categories: CategoriesTable;
  posts: PostsTable;
  post_likes: PostLikesTable;
  comments: CommentsTable;
  clients: ClientsTable;
  consents: ConsentsTable;
  grants: GrantsTable;
  authorization_codes: AuthorizationCodesTable;
  access_tokens: AccessTokensTable;
  refresh_tokens: RefreshTokensTable;
  personal_tokens: PersonalTokensTable;
  signing_keys: SigningKeysTable;
  sessions: SessionsTable;
  server_secrets: ServerSecretsTable;
  logout_deliveries: LogoutDeliveriesTable;
  mail_outbox: MailOutboxTable;
  member_emails: MemberEmailsTable;
  email_links: EmailLinksTable;
  totp_credentials: TotpCredentialsTable;
  recovery_codes: RecoveryCodesTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  pending_sign_ins: PendingSignInsTable;
  security_events: SecurityEventsTable;
  dpop_proofs: DpopProofsTable;
  one_time_secrets: OneTimeSecretsTable;
  pushed_authorization_requests: PushedAuthorizationRequestsTable;
  staff_log: StaffLogTable;
  daily_figures: DailyFiguresTable;
}
