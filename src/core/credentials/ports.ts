/** The storage credentials need: personal tokens, leak reports, secrets sealed at rest, one-time secrets. */
import type { BearerRecord } from '../oauth/ports.js';
import type { Instant } from '../time.js';
import type { TokenKind } from './formats.js';

export interface PersonalToken {
  id: number;
  userId: number;
  name: string;
  scope: string;
  createdAt: Instant;
  expiresAt: Instant | null;
  lastUsedAt: Instant | null;
  revokedAt: Instant | null;
}

export interface PersonalTokenStore {
  insert(token: { userId: number; name: string; tokenHash: string; scope: string; expiresAt: Instant | null }, now: Instant): Promise<PersonalToken>;
  listForUser(userId: number): Promise<PersonalToken[]>;
  /** How many of the user's tokens are live at `now` (neither revoked nor expired, `hasExpired`'s rule): the count a new one is judged by (`MAX_PERSONAL_TOKENS`). */
  countLive(userId: number, now: Instant): Promise<number>;
  /**
   * When the user's tokens made after `since` were made, revoked and expired ones included, newest
   * first, at most `limit`: what a new one is judged by (`PERSONAL_TOKENS_PER_DAY`).
   */
  createdSince(userId: number, since: Instant, limit: number): Promise<Instant[]>;
  findBearer(tokenHash: string): Promise<BearerRecord | undefined>;
  /** Revokes the user's own token; returns whether this call revoked it. */
  revoke(id: number, userId: number, now: Instant): Promise<boolean>;
  /** Revokes every live token of the user; returns how many. */
  revokeForUser(userId: number, now: Instant): Promise<number>;
  /** Deletes every token of the user, revoked or not, with its name (the member's own deletion). */
  eraseForUser(userId: number): Promise<void>;
  /** Records a use of the token at `now` as its last use, unless a later one is recorded: the time only moves forward. */
  touch(id: number, now: Instant): Promise<void>;
}

/** The SHA-256 hashes of the strings a leak report names, by the kind their prefix claims (INTERFACE section 2). */
export type LeakedHashes = Readonly<Record<TokenKind, readonly string[]>>;

/** A live credential a leak report named, revoked by that report; `tokenHash` says which string named it. */
export type RevokedLeak =
  | { kind: 'access' | 'refresh'; tokenHash: string; tokenId: number; userId: number; clientId: string; clientName: string; grantId: number }
  | { kind: 'personal'; tokenHash: string; tokenId: number; userId: number; name: string }
  | { kind: 'clientSecret'; tokenHash: string; clientId: string; ownerId: number | null; clientName: string };

export interface LeakRevocation {
  revoked: RevokedLeak[];
  /** The grants ended with a leaked refresh token (its whole family), for their back-channel logouts. */
  grants: Array<{ clientId: string; userId: number; sid: string | null }>;
}

/**
 * Leaked-credential reports (INTERFACE section 11): credentials found by the hash of the string
 * reported, a batch at a time, never one query per string.
 */
export interface LeakedCredentialStore {
  /** The hashes among these that name a credential ever issued, live or not (a scanner's true positive). */
  known(hashes: LeakedHashes): Promise<Set<string>>;
  /**
   * Revokes every live credential among `hashes` with conditional writes that return only the rows
   * they changed, so of racing reports of one credential exactly one revokes it (and tells its
   * owner). An access token ends alone (as RFC 7009 revocation does); a refresh token ends its
   * grant and every token of it (RFC 9700 4.14.2: the family); a client secret deactivates its
   * client and ends every grant of it. Run it inside a transaction: clients are written first,
   * then tokens, then grants, the order of every other revocation, so none deadlocks with it.
   * A rotated refresh token is live while its replay answer can still be given: rotated after
   * `replayOpenSince` with the answer still sealed (src/core/oauth/tokens/replay.ts), it ends its family too.
   */
  revoke(hashes: LeakedHashes, now: Instant, replayOpenSince: Instant): Promise<LeakRevocation>;
}

/** The columns that hold a secret the service must read back, sealed when KEYS_SECRET is set (`src/core/credentials/sealing.ts`). */
export type SealedColumn = 'signing_keys.private_jwk' | 'totp_credentials.secret' | 'server_secrets.value';

/** A value of a `SealedColumn` as stored, and the key of its row. */
export interface StoredSecret {
  row: string;
  stored: string;
}

/** Every `SealedColumn` alike, for the start that seals what was stored plain. */
export interface SealedColumnStore {
  /**
   * Up to `limit` values of `column` that do not start with `prefix`, in the order of their rows,
   * after the row `after` (when given).
   */
  listWithoutPrefix(column: SealedColumn, prefix: string, after: string | undefined, limit: number): Promise<StoredSecret[]>;
  /** Up to `limit` values of `column` that start with `prefix`, in the order of their rows. */
  listWithPrefix(column: SealedColumn, prefix: string, limit: number): Promise<StoredSecret[]>;
  /** Replaces the value of `row` if it is still `stored` (one conditional write); whether it was. */
  replace(column: SealedColumn, row: string, stored: string, replacement: string): Promise<boolean>;
}

/** Random secrets the instances share, made by whichever asks first. */
export interface ServerSecretStore {
  /** The secret named `name`; `fresh` is stored when there is none yet, and the stored one returned. */
  getOrCreate(name: string, fresh: string, now: Instant): Promise<string>;
}

/**
 * New secrets waiting for the one page that shows them (post/redirect/get, issue 18 item 7):
 * sealed under a key the browser holds, so a row alone reveals nothing.
 */
export interface OneTimeSecretStore {
  put(entry: { idHash: string; userId: number; purpose: string; subject: string; sealed: string; expiresAt: Instant }, now: Instant): Promise<void>;
  /**
   * Deletes the live entry with this id for this user, purpose and subject, in one conditional
   * write, and returns its sealed value: of two reads, only one gets it.
   */
  take(idHash: string, match: { userId: number; purpose: string; subject: string }, now: Instant): Promise<string | undefined>;
  /** Deletes every entry of the user (the member's own deletion). */
  eraseForUser(userId: number): Promise<void>;
}
