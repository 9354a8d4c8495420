/**
 * Two-step verification (issue 18 item 2): enrolment of an authenticator app, the codes that
 * prove it (a TOTP code or a recovery code), and the sign-in that waits for them after the
 * password. A code is counted exactly as a password is (`countedCheck`, INTERFACE section 4), so
 * the six digits cannot be guessed faster than a password could.
 */
import { generateOpaqueId, hashSecret } from '../credentials/formats.js';
import { AccountUnusableError, InputError } from '../errors.js';
import type { Stores } from '../stores.js';
import type { InactiveStatus, User } from './ports.js';
import { type AttemptOrigin, type SignInDeps, type Throttled, countedCheck, isThrottled } from './sign-in.js';
import type { Instant } from '../time.js';
import type { PendingSignIn } from './ports.js';
import { generateRecoveryCodes, hashRecoveryCode, normalizeRecoveryCode } from './recovery-codes.js';
import { type SealedPlace, UNSEAL_FAILURES, type UnsealFailure, openSecret, sealSecret } from '../credentials/sealing.js';
import { type SiteNames, labelName } from '../site-name.js';
import { looksLikeTotpCode, matchingStep, newTotpSecret, totpUri } from './totp.js';

/** How long a sign-in waits for its second step after the password. */
export const PENDING_SIGN_IN_MS = 5 * 60_000;
/**
 * The longest code read as typed: a code is six digits or 19 characters (`abcd-efgh-ijkl-mnop`),
 * spaces aside. Longer is a wrong code before NFKC reads it, which for a long run of combining
 * marks costs time growing with its square (`unitsBeforeNormalizing`): the security page's field
 * holds 20,000 characters, the second step's and account deletion's 64 KB (the body limit).
 */
export const CODE_MAX_LENGTH = 100;

export type TwoStepDeps = Omit<SignInDeps, 'securityLog'> & { settings: { keysSecret: string | undefined; siteNames: SiteNames } };

/** What an account can use for a second step. */
export interface SecondFactors {
  totp: boolean;
  passkeys: number;
  recoveryCodesLeft: number;
}

export async function secondFactorsOf(stores: Stores, userId: number): Promise<SecondFactors> {
  const [totp, passkeys, recoveryCodesLeft] = await Promise.all([
    stores.secondFactors.findTotp(userId),
    stores.passkeys.listForUser(userId),
    stores.secondFactors.countUnusedRecoveryCodes(userId),
  ]);
  return { totp: totp?.confirmedAt != null, passkeys: passkeys.length, recoveryCodesLeft };
}

/**
 * Whether a password alone no longer signs the account in: two-step verification is on (an
 * authenticator app confirmed). Passkeys do not turn it on by themselves: without an app there
 * are no recovery codes, and a lost device would lock its owner out. Once it is on, a passkey
 * serves as the second step as well as the app's code (as GitHub does).
 */
export async function requiresSecondStep(stores: Stores, userId: number): Promise<boolean> {
  return (await stores.secondFactors.findTotp(userId))?.confirmedAt != null;
}

/** Where the TOTP secret of `userId` is stored: sealed, it opens for that account only. */
export function totpPlace(userId: number): SealedPlace {
  return { column: 'totp_credentials.secret', row: String(userId) };
}

// ---- Enrolment --------------------------------------------------------------------------------

export interface TotpEnrolment {
  secret: string;
  uri: string;
}

/** Starts (or restarts) enrolment: a new secret, stored sealed, not yet in force. */
export async function beginTotpEnrolment(deps: TwoStepDeps, user: User): Promise<TotpEnrolment | undefined> {
  const secret = newTotpSecret();
  const started = await deps.stores.secondFactors.startTotp(user.id, sealSecret(secret, deps.settings.keysSecret, totpPlace(user.id)), deps.clock.now());
  return started ? { secret, uri: totpUri(secret, user.username, labelName(deps.settings.siteNames)) } : undefined;
}

/** The enrolment waiting for its first code, if any. */
export async function pendingTotpEnrolment(deps: TwoStepDeps, user: User): Promise<TotpEnrolment | undefined> {
  const found = await deps.stores.secondFactors.findTotp(user.id);
  if (!found || found.confirmedAt !== null) return undefined;
  // One sealed under another KEYS_SECRET is as good as none: "Set up" starts a new one.
  const opened = openSecret(found.secret, deps.settings.keysSecret, totpPlace(user.id));
  return opened.ok ? { secret: opened.plain, uri: totpUri(opened.plain, user.username, labelName(deps.settings.siteNames)) } : undefined;
}

/**
 * Finishes enrolment when `code` is the app's current code: the app is in force from now on,
 * and the ten recovery codes returned are shown once and stored only as hashes.
 */
export async function confirmTotpEnrolment(deps: TwoStepDeps, user: User, code: string): Promise<string[]> {
  const pending = await pendingTotpEnrolment(deps, user);
  if (!pending) throw InputError.worded('code', 'start setting up two-step verification first', { key: 'problems.twoStepNotStarted' });
  const now = deps.clock.now();
  const step = code.length > CODE_MAX_LENGTH ? undefined : matchingStep(pending.secret, code, now);
  if (step === undefined) throw InputError.worded('code', 'that code is not the one your app shows now; check the time on your device and try the next one', { key: 'problems.totpWrong' });
  const codes = generateRecoveryCodes();
  if (!(await deps.stores.secondFactors.confirmTotp(user.id, step, codes.map(hashRecoveryCode), now))) {
    throw InputError.worded('code', 'start setting up two-step verification first', { key: 'problems.twoStepNotStarted' });
  }
  return codes;
}

// ---- Codes ------------------------------------------------------------------------------------

/**
 * The account's authenticator app is on but its secret does not open with this KEYS_SECRET: none
 * of its codes can be checked. Not the person's failure, so not counted; a recovery code still works.
 */
export type Unreadable = { ok: false; reason: 'unreadable'; cause: UnsealFailure };

export type CodeCheck = { ok: true; method: 'totp' | 'recovery' } | { ok: false; reason: 'wrong' } | Unreadable | Throttled;

/** The operator's log line for `Unreadable`: the cause, never a secret. */
export function unreadableTotpLine(unreadable: Unreadable): string {
  return `the authenticator app secret of this account cannot be opened: ${UNSEAL_FAILURES[unreadable.cause]}; its codes are refused, recovery codes still work`;
}

/** A code found right, not yet spent: the TOTP time step it is, or the hash of the recovery code it may be. */
type Proof = { method: 'totp'; step: number } | { method: 'recovery'; codeHash: string };

/**
 * The proof `code` of `user`'s would be: six digits are a TOTP code, which must match a step in
 * the window around `now` (RFC 6238 5.2; compared in constant time by `otpauth`); anything else
 * may be a recovery code, which only spending it tells (its hash is looked up, not compared).
 */
async function proofOf(deps: TwoStepDeps, user: User, code: string, now: Instant): Promise<Proof | Unreadable | undefined> {
  if (code.length > CODE_MAX_LENGTH) return undefined;
  if (looksLikeTotpCode(code)) {
    const found = await deps.stores.secondFactors.findTotp(user.id);
    if (!found || found.confirmedAt === null) return undefined;
    const opened = openSecret(found.secret, deps.settings.keysSecret, totpPlace(user.id));
    if (!opened.ok) return { ok: false, reason: 'unreadable', cause: opened.reason };
    const step = matchingStep(opened.plain, code, now);
    return step === undefined ? undefined : { method: 'totp', step };
  }
  const normalized = normalizeRecoveryCode(code);
  return normalized === undefined ? undefined : { method: 'recovery', codeHash: hashRecoveryCode(normalized) };
}

/**
 * Spends `proof` by one conditional write through `stores`: a TOTP step only if later than the
 * last one accepted (RFC 6238 5.2: never twice), a recovery code only if unused and the account
 * active. `true` spent, the account active; `{ inactive }` a right code of an account that write
 * found not active (a recovery code is left unused, a TOTP step spent all the same); `false`
 * refused. The status is the write's, never an earlier read's, which a staff suspension or the
 * member's own deletion may have overtaken.
 */
async function spend(stores: Stores, userId: number, proof: Proof, now: Instant): Promise<boolean | { inactive: InactiveStatus }> {
  if (proof.method === 'totp') {
    const status = await stores.secondFactors.acceptTotpStep(userId, proof.step);
    if (status === undefined) return false;
    return status === 'active' ? true : { inactive: status };
  }
  const use = await stores.secondFactors.useRecoveryCode(userId, proof.codeHash, now);
  return typeof use === 'object' ? { inactive: use.kept } : use === 'used';
}

/**
 * Checks a code of `user`'s on the sign-in counters of the account and the browser, and has
 * `spendProof` spend it: `true` spent, `false` refused (a failure, counted), or `Other`, an
 * outcome that is not the code's (not counted). A code that cannot be checked (`Unreadable`) is
 * not counted either. `prepare` runs first, only when the counters let the code be checked: work
 * that must come before the code is spent (a password reset's hash), which a throttled attempt
 * never costs; if it throws `PasswordsBusyError` nothing was tried and nothing counts.
 */
async function checkCode<Other extends { ok: false }>(
  deps: TwoStepDeps,
  user: User,
  code: string,
  origin: AttemptOrigin,
  spendProof: (proof: Proof, now: Instant) => Promise<boolean | Other>,
  prepare?: () => Promise<void>,
): Promise<CodeCheck | Other> {
  const now = deps.clock.now();
  const result = await countedCheck(deps, user, origin, async () => {
    await prepare?.();
    const proof = await proofOf(deps, user, code, now);
    if (proof === undefined || !('method' in proof)) return proof;
    const spent = await spendProof(proof, now);
    if (spent === false) return undefined;
    return spent === true ? proof.method : spent;
  }, 'code');
  if (isThrottled(result)) return result;
  if (result === undefined) return { ok: false, reason: 'wrong' };
  return typeof result === 'string' ? { ok: true, method: result } : result;
}

/**
 * A right code of an account that is not active, as the write that took it found it (the account
 * read before may say otherwise): a recovery code is kept for when it is active again, a TOTP
 * step spent. Not a wrong guess, so not counted toward a lock-out; at the second step its holder,
 * who has shown both factors, is told the status.
 */
export type NotActive = { ok: false; reason: 'not_active'; status: InactiveStatus };

/** `spend`'s answer as `checkCode` takes it. */
function spentOrNotActive(spent: boolean | { inactive: InactiveStatus }): boolean | NotActive {
  return typeof spent === 'object' ? { ok: false, reason: 'not_active', status: spent.inactive } : spent;
}

/**
 * Checks a code of `user`'s: a TOTP code, accepted for a time step later than the last one
 * accepted (never twice), or a recovery code, used once. Counted on the sign-in counters of the
 * account and the browser. Asked of an active account only (a session's, a reset link's): one
 * that left active since is `NotActive`, for the caller to refuse as it refuses such an account.
 */
export function checkSecondFactorCode(deps: TwoStepDeps, user: User, code: string, origin: AttemptOrigin, prepare?: () => Promise<void>): Promise<CodeCheck | NotActive> {
  return checkCode(deps, user, code, origin, async (proof, now) => spentOrNotActive(await spend(deps.stores, user.id, proof, now)), prepare);
}

/** The sign-in a second step was for has been finished (by a racing submission) or has expired. */
export type PendingGone = { ok: false; reason: 'gone' };

/** Thrown inside the transaction of `finishSignInWithCode` to roll its consumption back. */
class CodeNotSpent extends Error {}

/**
 * The second step of `pending`'s sign-in, checked as `checkSecondFactorCode` checks a code. The
 * sign-in is consumed and the code spent in one transaction, both or neither: the sign-in first,
 * by its conditional write, so of racing submissions only the one that consumes it goes on to
 * spend its code (a recovery code, a TOTP step), and the others spend nothing and are told the
 * sign-in is gone; a code refused rolls the consumption back, so the sign-in can still finish.
 * Whether the account is active is the code's write's answer (`spend`): of an account that is
 * not, the sign-in ends (`NotActive`), and a recovery code stays unused.
 */
export function finishSignInWithCode(deps: TwoStepDeps, pending: PendingSignIn, user: User, code: string, origin: AttemptOrigin): Promise<CodeCheck | PendingGone | NotActive> {
  return checkCode(deps, user, code, origin, async (proof, now): Promise<boolean | PendingGone | NotActive> => {
    try {
      return await deps.stores.transaction(async (tx) => {
        if (!(await tx.pendingSignIns.consume(pending.idHash, now))) return { ok: false, reason: 'gone' } as const;
        const spent = spentOrNotActive(await spend(tx, user.id, proof, now));
        if (spent === false) throw new CodeNotSpent();
        return spent;
      });
    } catch (error) {
      if (error instanceof CodeNotSpent) return false;
      throw error;
    }
  });
}

/**
 * A code asked again of a signed-in `user` before a sensitive action, checked as at sign-in; a
 * wrong or throttled one is an audit event, as a wrong password there is (`confirmPassword`).
 */
export async function confirmSecondFactor(deps: TwoStepDeps, user: User, code: string, origin: AttemptOrigin): Promise<CodeCheck> {
  const checked = await checkSecondFactorCode(deps, user, code, origin);
  // The account left active while the form was on its way: refused as the session now would be.
  if (!checked.ok && checked.reason === 'not_active') throw new AccountUnusableError(`account "${user.username}" is ${checked.status}; no code of it is checked`);
  // A code that could not be checked is not the person's failure: the caller logs its cause.
  if (!checked.ok && checked.reason !== 'unreadable') {
    deps.audit.record({ audit: 'second_factor_confirm.failed', userId: user.id, reason: checked.reason === 'wrong' ? 'wrong_code' : 'throttled', address: origin.address }, origin.requestId);
  }
  return checked;
}

/** Turns the authenticator app off and forgets the recovery codes, after a code of it (or a recovery code). */
export async function disableTotp(deps: TwoStepDeps, user: User, code: string, origin: AttemptOrigin): Promise<CodeCheck> {
  const checked = await confirmSecondFactor(deps, user, code, origin);
  if (checked.ok) await deps.stores.secondFactors.removeTotp(user.id);
  return checked;
}

/** Ten new recovery codes in place of the old ones, after a code; the codes, or why not. */
export async function regenerateRecoveryCodes(deps: TwoStepDeps, user: User, code: string, origin: AttemptOrigin): Promise<CodeCheck | { ok: true; codes: string[] }> {
  const checked = await confirmSecondFactor(deps, user, code, origin);
  if (!checked.ok) return checked;
  const codes = generateRecoveryCodes();
  await deps.stores.secondFactors.replaceRecoveryCodes(user.id, codes.map(hashRecoveryCode), deps.clock.now());
  return { ok: true, codes };
}

// ---- The sign-in waiting for its second step --------------------------------------------------

/**
 * Records that `user`'s password passed and the sign-in now waits for its second step; returns
 * the random id the browser keeps (only its SHA-256 is stored). No session exists until then.
 */
export async function startPendingSignIn(deps: { stores: Stores; clock: { now(): Instant } }, user: User, amr: string[], returnTo: string): Promise<string> {
  const id = generateOpaqueId();
  const now = deps.clock.now();
  await deps.stores.pendingSignIns.create({ idHash: hashSecret(id), userId: user.id, amr, returnTo, expiresAt: now + PENDING_SIGN_IN_MS }, now);
  return id;
}

/**
 * The pending sign-in `id` names and its user, while both are live, whatever the account's
 * status: the caller starts a session only for an active one, and tells another its status once
 * its second step is passed (the password alone is not told it).
 */
export async function findPendingSignIn(deps: { stores: Stores; clock: { now(): Instant } }, id: string | undefined): Promise<{ pending: PendingSignIn; user: User } | undefined> {
  if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
  const pending = await deps.stores.pendingSignIns.findLive(hashSecret(id), deps.clock.now());
  if (!pending) return undefined;
  const user = await deps.stores.users.findById(pending.userId);
  return user ? { pending, user } : undefined;
}

/**
 * Consumes the pending sign-in, once: of two racing second steps only one starts a session. A
 * second step with a code consumes it in `finishSignInWithCode` instead, with the code.
 */
export function finishPendingSignIn(deps: { stores: Stores; clock: { now(): Instant } }, pending: PendingSignIn): Promise<boolean> {
  return deps.stores.pendingSignIns.consume(pending.idHash, deps.clock.now());
}

/** RFC 8176: a password and then a one-time code (an app's, or a recovery code): two factors, `mfa`. */
export function amrAfterCode(pending: PendingSignIn): string[] {
  return [...new Set([...pending.amr, 'otp', 'mfa'])];
}
