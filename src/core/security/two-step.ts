/**
 * Two-step verification (issue 18 item 2): enrolment of an authenticator app, the codes that
 * prove it (a TOTP code or a recovery code), and the sign-in that waits for them after the
 * password. A code is counted exactly as a password is (`countedCheck`, INTERFACE section 4), so
 * the six digits cannot be guessed faster than a password could.
 */
import { generateOpaqueId, hashSecret } from '../credentials.js';
import { InputError } from '../errors.js';
import type { Stores, User } from '../ports.js';
import { type AttemptOrigin, type SignInDeps, type Throttled, countedCheck, isThrottled } from '../sign-in.js';
import type { Instant } from '../time.js';
import type { PendingSignIn } from './ports.js';
import { generateRecoveryCodes, hashRecoveryCode, normalizeRecoveryCode } from './recovery-codes.js';
import { SEALED_PREFIX, openSecret, sealSecret } from './sealing.js';
import { TOTP_SEAL_LABEL, looksLikeTotpCode, matchingStep, newTotpSecret, totpUri } from './totp.js';

/** How long a sign-in waits for its second step after the password. */
export const PENDING_SIGN_IN_MS = 5 * 60_000;
export const TOTP_ISSUER = 'Community';

export type TwoStepDeps = Omit<SignInDeps, 'securityLog'> & { settings: { keysSecret: string | undefined } };

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

// ---- Enrolment --------------------------------------------------------------------------------

export interface TotpEnrolment {
  secret: string;
  uri: string;
}

/** Starts (or restarts) enrolment: a new secret, stored sealed, not yet in force. */
export async function beginTotpEnrolment(deps: TwoStepDeps, user: User): Promise<TotpEnrolment | undefined> {
  const secret = newTotpSecret();
  const started = await deps.stores.secondFactors.startTotp(user.id, sealSecret(secret, deps.settings.keysSecret, TOTP_SEAL_LABEL), deps.clock.now());
  return started ? { secret, uri: totpUri(secret, user.username, TOTP_ISSUER) } : undefined;
}

/** The enrolment waiting for its first code, if any. */
export async function pendingTotpEnrolment(deps: TwoStepDeps, user: User): Promise<TotpEnrolment | undefined> {
  const found = await deps.stores.secondFactors.findTotp(user.id);
  if (!found || found.confirmedAt !== null) return undefined;
  const secret = openSecret(found.secret, deps.settings.keysSecret, TOTP_SEAL_LABEL);
  return { secret, uri: totpUri(secret, user.username, TOTP_ISSUER) };
}

/**
 * Finishes enrolment when `code` is the app's current code: the app is in force from now on,
 * and the ten recovery codes returned are shown once and stored only as hashes.
 */
export async function confirmTotpEnrolment(deps: TwoStepDeps, user: User, code: string): Promise<string[]> {
  const pending = await pendingTotpEnrolment(deps, user);
  if (!pending) throw new InputError('code', 'start setting up two-step verification first');
  const now = deps.clock.now();
  const step = matchingStep(pending.secret, code, now);
  if (step === undefined) throw new InputError('code', 'that code is not the one your app shows now; check the time on your device and try the next one');
  const codes = generateRecoveryCodes();
  if (!(await deps.stores.secondFactors.confirmTotp(user.id, step, codes.map(hashRecoveryCode), now))) {
    throw new InputError('code', 'start setting up two-step verification first');
  }
  return codes;
}

// ---- Codes ------------------------------------------------------------------------------------

export type CodeCheck = { ok: true; method: 'totp' | 'recovery' } | { ok: false; reason: 'wrong' } | Throttled;

/**
 * Checks a code of `user`'s: six digits are a TOTP code, accepted for a time step later than the
 * last one accepted (never twice); anything else is tried as a recovery code, used once. Counted
 * on the sign-in counters of the account and the browser.
 */
export async function checkSecondFactorCode(deps: TwoStepDeps, user: User, code: string, origin: AttemptOrigin): Promise<CodeCheck> {
  const now = deps.clock.now();
  const result = await countedCheck(deps, user, origin, async () => {
    if (looksLikeTotpCode(code)) {
      const found = await deps.stores.secondFactors.findTotp(user.id);
      if (!found || found.confirmedAt === null) return undefined;
      const step = matchingStep(openSecret(found.secret, deps.settings.keysSecret, TOTP_SEAL_LABEL), code, now);
      if (step === undefined) return undefined;
      return (await deps.stores.secondFactors.acceptTotpStep(user.id, step)) ? ('totp' as const) : undefined;
    }
    const normalized = normalizeRecoveryCode(code);
    if (normalized === undefined) return undefined;
    return (await deps.stores.secondFactors.useRecoveryCode(user.id, hashRecoveryCode(normalized), now)) ? ('recovery' as const) : undefined;
  });
  if (isThrottled(result)) return result;
  return result === undefined ? { ok: false, reason: 'wrong' } : { ok: true, method: result };
}

/**
 * A code asked again of a signed-in `user` before a sensitive action, checked as at sign-in; a
 * wrong or throttled one is an audit event, as a wrong password there is (`confirmPassword`).
 */
export async function confirmSecondFactor(deps: TwoStepDeps, user: User, code: string, origin: AttemptOrigin): Promise<CodeCheck> {
  const checked = await checkSecondFactorCode(deps, user, code, origin);
  if (!checked.ok) {
    deps.audit.record({ audit: 'second_factor_confirm.failed', userId: user.id, reason: checked.reason === 'wrong' ? 'wrong_code' : 'throttled', address: origin.address });
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

/** The pending sign-in `id` names and its user, while both are live and the account usable. */
export async function findPendingSignIn(deps: { stores: Stores; clock: { now(): Instant } }, id: string | undefined): Promise<{ pending: PendingSignIn; user: User } | undefined> {
  if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
  const pending = await deps.stores.pendingSignIns.findLive(hashSecret(id), deps.clock.now());
  if (!pending) return undefined;
  const user = await deps.stores.users.findById(pending.userId);
  return user && user.status === 'active' ? { pending, user } : undefined;
}

/** Consumes the pending sign-in, once: of two racing second steps only one starts a session. */
export function finishPendingSignIn(deps: { stores: Stores; clock: { now(): Instant } }, pending: PendingSignIn): Promise<boolean> {
  return deps.stores.pendingSignIns.consume(pending.idHash, deps.clock.now());
}

/** RFC 8176: a password and then a one-time code (an app's, or a recovery code). */
export function amrAfterCode(pending: PendingSignIn): string[] {
  return [...new Set([...pending.amr, 'otp'])];
}

/** Apps sealed per round of `sealStoredTotpSecrets`. */
const SEAL_BATCH = 100;

/**
 * What a start with KEYS_SECRET does, as it does for the signing keys (`ensureSigningKeys`): every
 * authenticator app's secret stored before KEYS_SECRET was set is sealed, so a copy of the
 * database no longer holds secrets that make valid codes. Each one is replaced by a conditional
 * write (another instance starting at the same moment may have sealed it, or the user enrolled
 * again meanwhile). Returns how many this start sealed.
 */
export async function sealStoredTotpSecrets(stores: Stores, keysSecret: string | undefined): Promise<number> {
  if (keysSecret === undefined) return 0;
  let sealed = 0;
  for (;;) {
    const plain = await stores.secondFactors.listTotpWithoutPrefix(SEALED_PREFIX, SEAL_BATCH);
    for (const { userId, secret } of plain) {
      if (await stores.secondFactors.replaceTotpSecret(userId, secret, sealSecret(secret, keysSecret, TOTP_SEAL_LABEL))) sealed++;
    }
    if (plain.length < SEAL_BATCH) return sealed;
  }
}
