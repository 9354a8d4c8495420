/**
 * The storage accounts need: users, sign-in sessions, and account security (issue 18 items 1–5).
 * Single-use things (a TOTP step, a recovery code, a WebAuthn challenge, a sign-in waiting for its
 * second step) are consumed by one conditional write that says whether this call consumed it.
 */
import type { Locale } from '../locales.js';
import type { Page } from '../stores.js';
import type { Instant } from '../time.js';

export type UserStatus = 'active' | 'suspended' | 'banned' | 'deleted';

/** The status of an account that cannot sign in. */
export type InactiveStatus = Exclude<UserStatus, 'active'>;
export const USER_STATUSES: readonly UserStatus[] = ['active', 'suspended', 'banned', 'deleted'];

export interface User {
  id: number;
  /** The sign-in handle and the address `/u/{username}`: ASCII, unique in any letter case. */
  username: string;
  /** The name the site shows (INTERFACE section 12): any script; the username when none was chosen. */
  nickname: string;
  /** The language the member chose for pages and mails; `null`: the browser's. */
  language: Locale | null;
  /** The IANA time zone the member chose; `null`: the site's. */
  timeZone: string | null;
  status: UserStatus;
  bio: string;
  member: boolean;
  level: number;
  xp: number;
  createdAt: Instant;
  /** Moved by every write of the account's row: a profile edit, a new avatar, a status change. */
  updatedAt: Instant;
  /**
   * When the account last entered or left `active` (its creation, before either): leaving it ended
   * every token of the account at this instant (INTERFACE section 4). A move between `suspended`,
   * `banned` and `deleted` keeps it, since it ended nothing more.
   */
  statusChangedAt: Instant;
}

export interface NewUser {
  username: string;
  /** Checked by `checkNickname`; absent or `null`: the username. */
  nickname?: string | null;
  language?: Locale | null;
  timeZone?: string | null;
  passwordHash: string;
  bio: string;
  member: boolean;
  level: number;
  xp: number;
}

export interface Avatar {
  contentType: string;
  image: Uint8Array;
  updatedAt: Instant;
}

/** Profile fields to change; an absent one stays. `null` nickname, language or zone: back to the default. */
export interface ProfileChanges {
  bio?: string;
  nickname?: string | null;
  language?: Locale | null;
  timeZone?: string | null;
}

export interface UserStore {
  /** Throws `ConflictError` when the username is taken, in any letter case. */
  create(user: NewUser, now: Instant): Promise<User>;
  findById(id: number): Promise<User | undefined>;
  /** Case-insensitive. */
  findByUsername(username: string): Promise<User | undefined>;
  /** The user and the password hash, for sign-in only. */
  findCredentials(username: string): Promise<{ user: User; passwordHash: string } | undefined>;
  /**
   * Sets the status, with `statusChangedAt` in the same write when it enters or leaves `active`.
   * `from`: only an account in that status changes (one conditional write); `undefined` otherwise.
   */
  setStatus(id: number, status: UserStatus, now: Instant, from?: UserStatus): Promise<User | undefined>;
  /**
   * Changes the profile fields given and moves `updatedAt`, only while the account is active (in
   * the same write, so a nickname saved as the member deletes the account is not kept after the
   * deletion's erase); returns whether it changed.
   */
  updateProfile(id: number, changes: ProfileChanges, now: Instant): Promise<boolean>;
  /**
   * Whether the account is active, holding its row (PostgreSQL `FOR NO KEY UPDATE`, which queues
   * behind a status change already waiting, where a share lock would jump it) until the transaction
   * ends: a status change racing the transaction waits for it, or it for the change, so what the
   * transaction writes for an active account is seen by a deletion's erase. Inside a transaction only.
   */
  holdActive(id: number): Promise<boolean>;
  /** Whether the account is not deleted, holding its row as `holdActive` does. Inside a transaction only. */
  holdUnlessDeleted(id: number): Promise<boolean>;
  /** Clears the nickname, bio and avatar, whatever the status (the member's own deletion). */
  eraseProfile(id: number, now: Instant): Promise<void>;
  /** Replaces the password hash; returns whether the user exists. */
  setPasswordHash(id: number, passwordHash: string, now: Instant): Promise<boolean>;
  /**
   * Replaces a hash of the same password made with other parameters, only while `stored` is still
   * the account's (one conditional write: a password changed meanwhile stays). Not a change the
   * member made, so `updatedAt` stays. Returns whether it was replaced.
   */
  rehashPassword(id: number, stored: string, rehashed: string): Promise<boolean>;
  /** Up to `limit` users with an id above `afterId` (0: from the first), by id; of one status when given. */
  list(options: { afterId: number; limit: number; status?: UserStatus }): Promise<User[]>;
  /**
   * Stores the image as given, already encoded anew (`checkAvatarUpload`), and moves the
   * user's `updatedAt`, which versions the avatar's address on pages, only while the account is
   * active (a deletion's erase waits for it, or it sees the deletion); returns whether it stored it.
   */
  setAvatar(userId: number, contentType: string, image: Uint8Array, now: Instant): Promise<boolean>;
  findAvatar(userId: number): Promise<Avatar | undefined>;
}

export interface Session {
  idHash: string;
  userId: number;
  authTime: Instant;
  createdAt: Instant;
  lastSeenAt: Instant;
  expiresAt: Instant;
  /** RFC 8176 methods the sign-in passed: `['pwd']`, `['pwd', 'otp', 'mfa']`, `['hwk', 'user', 'mfa']`… */
  amr: string[];
  /** The browser's User-Agent at sign-in (at most 512 characters). */
  userAgent: string;
  /** The address the sign-in came from. */
  address: string;
}

/** A session to store: `amr` defaults to `['pwd']`, the browser's details to empty. */
export type NewSession = Omit<Session, 'lastSeenAt' | 'createdAt' | 'amr' | 'userAgent' | 'address'> & Partial<Pick<Session, 'amr' | 'userAgent' | 'address'>>;

export interface SessionStore {
  create(session: NewSession, now: Instant): Promise<Session>;
  /** A live session (not ended, not expired) and its user. */
  findLive(idHash: string, now: Instant): Promise<{ session: Session; user: User } | undefined>;
  /** The user's sessions not ended and not expired at `now`, latest activity first. */
  listForUser(userId: number, now: Instant): Promise<Session[]>;
  /** Records activity on a session at `now` (its idle time starts again), unless a later one is recorded: the time only moves forward. */
  touch(idHash: string, now: Instant): Promise<void>;
  /** Ends a session that was not ended yet; returns its user, only to the one call that ended it. */
  end(idHash: string, now: Instant): Promise<{ userId: number } | undefined>;
  endForUser(userId: number, now: Instant): Promise<number>;
  /** Ends every session of the user but `keepIdHash`; the ids (hashed) of those this call ended. */
  endOthersForUser(userId: number, keepIdHash: string, now: Instant): Promise<string[]>;
  /** Deletes every session of the user, ended or not, with the browser and address each kept (the member's own deletion). */
  eraseForUser(userId: number): Promise<void>;
}

/** An authenticator app (RFC 6238). `confirmedAt` is null while enrolment waits for a first code. */
export interface TotpCredential {
  userId: number;
  /** As stored: base32, or sealed (`enc:v2:…`) when KEYS_SECRET is set. */
  secret: string;
  createdAt: Instant;
  confirmedAt: Instant | null;
  lastStep: number | null;
}

/**
 * What `SecondFactorStore.useRecoveryCode` did with a code; a kept one carries the status its
 * write found, which an earlier read of the account may not be.
 */
export type RecoveryCodeUse = 'used' | 'wrong' | { kept: InactiveStatus };

export interface SecondFactorStore {
  findTotp(userId: number): Promise<TotpCredential | undefined>;
  /** Starts (or restarts) an enrolment; `false` when the account already has a confirmed app. */
  startTotp(userId: number, secret: string, now: Instant): Promise<boolean>;
  /**
   * Finishes the enrolment if it is still waiting, accepting `step`, and replaces the recovery
   * codes with `recoveryCodeHashes`, in one transaction; `false` when nothing was waiting.
   */
  confirmTotp(userId: number, step: number, recoveryCodeHashes: readonly string[], now: Instant): Promise<boolean>;
  /**
   * Accepts TOTP time step `step` once: one conditional write that succeeds only when `step` is
   * later than the last one accepted (RFC 6238 5.2: a code is used once), whatever the account's
   * status. The status that same write found, which an earlier read of the account may not be;
   * `undefined` when the step was refused.
   */
  acceptTotpStep(userId: number, step: number): Promise<UserStatus | undefined>;
  /** Removes the app and every recovery code; whether there was a confirmed app. */
  removeTotp(userId: number): Promise<boolean>;
  /**
   * Marks the unused recovery code with this hash used, in one conditional write, and only while
   * the account is active, in that same write: `'used'`; `{ kept: status }` when the code is
   * unused but the account is not active (a sign-in that cannot finish spends no one-time code),
   * with the status that write found; `'wrong'` when the account has no such unused code.
   */
  useRecoveryCode(userId: number, codeHash: string, now: Instant): Promise<RecoveryCodeUse>;
  replaceRecoveryCodes(userId: number, codeHashes: readonly string[], now: Instant): Promise<void>;
  countUnusedRecoveryCodes(userId: number): Promise<number>;
}

export interface Passkey {
  /** base64url. */
  credentialId: string;
  userId: number;
  name: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  backedUp: boolean;
  createdAt: Instant;
  lastUsedAt: Instant | null;
}

export type ChallengePurpose = 'register' | 'sign_in' | 'second_step';

export interface PasskeyStore {
  /** Throws `ConflictError` when the credential id is registered already (to anyone). */
  insert(passkey: Omit<Passkey, 'createdAt' | 'lastUsedAt'>, now: Instant): Promise<Passkey>;
  listForUser(userId: number): Promise<Passkey[]>;
  /** How many passkeys the user has: inside a transaction holding the user's row, the count a new one is judged by (`MAX_PASSKEYS`). */
  countForUser(userId: number): Promise<number>;
  find(credentialId: string): Promise<Passkey | undefined>;
  rename(userId: number, credentialId: string, name: string): Promise<boolean>;
  remove(userId: number, credentialId: string): Promise<Passkey | undefined>;
  /**
   * Records a verified use with the authenticator's new signature counter, in one conditional
   * write, and returns the status of the passkey's account that same write found (an earlier read
   * of the account may say otherwise); `undefined` when the stored counter already reached it
   * (another use recorded it first: a cloned authenticator, or a replay racing the original).
   */
  recordUse(credentialId: string, counter: number, now: Instant): Promise<UserStatus | undefined>;
  /** Deletes every passkey of the user and every challenge made for the user (the member's own deletion). */
  eraseForUser(userId: number): Promise<void>;
  saveChallenge(challenge: { challenge: string; purpose: ChallengePurpose; userId: number | null; expiresAt: Instant }, now: Instant): Promise<void>;
  /**
   * Consumes a live challenge of `purpose` in one conditional write and returns whom it was made
   * for (`userId` null: anyone, for a sign-in with a passkey alone); `undefined` when it is
   * unknown, used or expired (W3C WebAuthn 13.4.3: a challenge is used once).
   */
  consumeChallenge(challenge: string, purpose: ChallengePurpose, now: Instant): Promise<{ userId: number | null } | undefined>;
  /**
   * Writes a challenge that was never stored (a signed sign-in challenge) as used, kept until
   * `expiresAt` (its end and the clocks' skew, `CLOCK_SKEW_MS`); `false` when it was written before: one insert, so of two racing replays one wins
   * (W3C WebAuthn 13.4.3).
   */
  spendChallenge(challenge: { challenge: string; purpose: ChallengePurpose; userId: number | null; expiresAt: Instant }, now: Instant): Promise<boolean>;
}

/** A password accepted, waiting for its second step; no session exists yet. */
export interface PendingSignIn {
  idHash: string;
  userId: number;
  /** The methods passed so far (`['pwd']`). */
  amr: string[];
  returnTo: string;
  createdAt: Instant;
  expiresAt: Instant;
}

export interface PendingSignInStore {
  create(pending: Omit<PendingSignIn, 'createdAt'>, now: Instant): Promise<void>;
  /** A pending sign-in not used and not expired. */
  findLive(idHash: string, now: Instant): Promise<PendingSignIn | undefined>;
  /** Marks it used in one conditional write; whether this call did. */
  consume(idHash: string, now: Instant): Promise<boolean>;
  /** Marks every unused one of the user used, so none can finish (the password changed). */
  cancelForUser(userId: number, now: Instant): Promise<void>;
  /** Deletes every one of the user, used or not (the member's own deletion). */
  eraseForUser(userId: number): Promise<void>;
}

export interface SecurityEvent {
  id: number;
  userId: number;
  kind: string;
  createdAt: Instant;
  address: string;
  device: string;
  detail: Record<string, string>;
}

export interface SecurityEventStore {
  insert(event: Omit<SecurityEvent, 'id'>): Promise<void>;
  /**
   * Stores the event, in one statement, only while its account is not deleted; a deletion racing
   * it either is seen or erases the line (`false`: the account is deleted, nothing was stored).
   */
  insertUnlessDeleted(event: Omit<SecurityEvent, 'id'>): Promise<boolean>;
  /** Stores several events, in as few statements as the database allows. */
  insertMany(events: ReadonlyArray<Omit<SecurityEvent, 'id'>>): Promise<void>;
  /** Newest first, ties by id (newest first). */
  listForUser(userId: number, offset: number, limit: number): Promise<Page<SecurityEvent>>;
  /** Deletes the user's whole log (the member's own deletion). */
  eraseForUser(userId: number): Promise<void>;
}

/** A member's one e-mail address (INTERFACE section 12): private, seen only by its owner and staff. */
export interface MemberEmail {
  userId: number;
  address: string;
  /** `null` until the link mailed to it was opened. */
  verifiedAt: Instant | null;
  updatedAt: Instant;
  /** The language of the page the address was given on: the member's, as far as the site knows, when they saved none. */
  language: Locale | null;
  /**
   * The address a change asked for, waiting for its link; only beside a verified `address`,
   * which stays the account's (password reset, notices) until this one is verified.
   */
  pending: string | null;
  /**
   * The SMTP reply code with which its server refused the newest mail to `address` (its owner's to
   * fix), kept until a mail to it is accepted or the address is changed or verified; else `null`.
   */
  refusalCode: number | null;
  /** The same for `pending`. */
  pendingRefusalCode: number | null;
}

export type EmailLinkPurpose = 'verify_email' | 'reset_password';

/** A single-use link mailed to a member; only its SHA-256 is stored. */
export interface EmailLink {
  tokenHash: string;
  userId: number;
  purpose: EmailLinkPurpose;
  /** A verification link's address, lower-cased: it verifies that address only. */
  addressKey: string | null;
  expiresAt: Instant;
}

/** A link as stored: `refusedAt`, when a verification link's "Not you?" form refused it. */
export interface StoredEmailLink extends EmailLink {
  refusedAt: Instant | null;
}

export interface MemberEmailStore {
  find(userId: number): Promise<MemberEmail | undefined>;
  /**
   * Gives the account `address`, on a page in `language`, by conditional writes on the row as it
   * then is: as its address (not verified) while it has no verified one; else as the pending address
   * beside the verified one, which it keeps (the verified address itself cancels a pending one).
   * Returns the row after, and whether this write made `address` the pending change of a verified
   * address: of racing writes of one change, exactly one (the one whose notice goes out).
   */
  set(userId: number, address: string, language: Locale, now: Instant): Promise<{ email: MemberEmail; changeStarted: boolean }>;
  /** Drops the pending address, if any (only if it is `pendingKey`, lower-cased, when given); whether there was one. */
  cancelPending(userId: number, now: Instant, pendingKey?: string): Promise<boolean>;
  /**
   * Takes `addressKey` from the account: its pending change to it is dropped, or, not verified, its
   * address is removed. A verified address stays. Whether the account held it.
   */
  release(userId: number, addressKey: string, now: Instant): Promise<boolean>;
  /** The accounts whose verified address is `addressKey` (lower-cased). */
  verifiedOwners(addressKey: string): Promise<number[]>;
  /**
   * Verifies `addressKey` if it is still the account's address or its pending one and the account
   * is active, in one conditional write: a pending address replaces the verified one. Whether it did.
   */
  markVerified(userId: number, addressKey: string, now: Instant): Promise<boolean>;
  createLink(link: EmailLink, now: Instant): Promise<void>;
  /** A link of `purpose` not used and not expired. */
  findLiveLink(tokenHash: string, purpose: EmailLinkPurpose, now: Instant): Promise<EmailLink | undefined>;
  /** The account's newest link of `purpose` not used and not expired (a new one ends the others: at most one). */
  findAccountLiveLink(userId: number, purpose: EmailLinkPurpose, now: Instant): Promise<EmailLink | undefined>;
  /** A link of `purpose`, used, ended, expired or not, while the janitor keeps it. */
  findLink(tokenHash: string, purpose: EmailLinkPurpose): Promise<StoredEmailLink | undefined>;
  /** Uses a live link in one conditional write; the link, only to the one call that used it. */
  consumeLink(tokenHash: string, purpose: EmailLinkPurpose, now: Instant): Promise<EmailLink | undefined>;
  /**
   * Refuses a verification link for an address, not expired and not refused yet (used or ended, it
   * still proves a mail came), and uses it if live, in one conditional write; the link, only to the
   * one call that refused it.
   */
  refuseLink(tokenHash: string, now: Instant): Promise<EmailLink | undefined>;
  /** Uses up every live link of the account of `purpose`, so none works any more. */
  endLinks(userId: number, purpose: EmailLinkPurpose, now: Instant): Promise<void>;
  /** Deletes the account's address (verified and pending) and every link mailed to it, refused ones included. */
  erase(userId: number): Promise<void>;
}
