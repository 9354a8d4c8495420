/**
 * The storage account security needs (issue 18 items 1–5), as small interfaces beside
 * `core/ports.ts`. Single-use things (a TOTP step, a recovery code, a WebAuthn challenge, a
 * sign-in waiting for its second step) are consumed by one conditional write that says whether
 * this call consumed it.
 */
import type { Page } from '../ports.js';
import type { Instant } from '../time.js';

/** An authenticator app (RFC 6238). `confirmedAt` is null while enrolment waits for a first code. */
export interface TotpCredential {
  userId: number;
  /** As stored: base32, or sealed (`enc:v2:…`) when KEYS_SECRET is set. */
  secret: string;
  createdAt: Instant;
  confirmedAt: Instant | null;
  lastStep: number | null;
}

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
   * later than the last one accepted (RFC 6238 5.2: a code is used once).
   */
  acceptTotpStep(userId: number, step: number): Promise<boolean>;
  /** Removes the app and every recovery code; whether there was a confirmed app. */
  removeTotp(userId: number): Promise<boolean>;
  /** Marks the unused recovery code with this hash used, in one conditional write; whether it was. */
  useRecoveryCode(userId: number, codeHash: string, now: Instant): Promise<boolean>;
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
  find(credentialId: string): Promise<Passkey | undefined>;
  rename(userId: number, credentialId: string, name: string): Promise<boolean>;
  remove(userId: number, credentialId: string): Promise<Passkey | undefined>;
  recordUse(credentialId: string, counter: number, now: Instant): Promise<void>;
  saveChallenge(challenge: { challenge: string; purpose: ChallengePurpose; userId: number | null; expiresAt: Instant }, now: Instant): Promise<void>;
  /**
   * Consumes a live challenge of `purpose` in one conditional write and returns whom it was made
   * for (`userId` null: anyone, for a sign-in with a passkey alone); `undefined` when it is
   * unknown, used or expired (W3C WebAuthn 13.4.3: a challenge is used once).
   */
  consumeChallenge(challenge: string, purpose: ChallengePurpose, now: Instant): Promise<{ userId: number | null } | undefined>;
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
  /** Stores several events, in as few statements as the database allows. */
  insertMany(events: ReadonlyArray<Omit<SecurityEvent, 'id'>>): Promise<void>;
  /** Newest first, ties by id (newest first). */
  listForUser(userId: number, offset: number, limit: number): Promise<Page<SecurityEvent>>;
}
