/**
 * A password change (issue 18 item 1): the current password first, counted as a sign-in is
 * (INTERFACE section 4), then the new one under the sign-up rules (`checkPassword` and the list of
 * common passwords, NIST SP 800-63B 5.1.1.2). Every other session of the account ends: whoever
 * knew the old password and signed in with it is signed out (OWASP ASVS 3.3.3).
 */
import { endOtherSignInSessions } from '../oidc/logout/events.js';
import { checkNewPassword } from './accounts.js';
import { type FieldProblem, InputError } from '../errors.js';
import { accountKey } from './device-cookies.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { User } from './ports.js';
import { type AttemptOrigin, type SignInDeps, type Throttled, confirmPassword } from './sign-in.js';

/**
 * Every field at fault: both, when the current password is missing or wrong and the new one breaks
 * a rule. `deviceCookie` when the current password was right.
 */
interface Invalid { ok: false; reason: 'invalid'; problems: readonly FieldProblem[]; deviceCookie?: string }

/** `deviceCookie`: the browser's device cookie renewed by the right current password, as a sign-in renews it. */
export type PasswordChange = { ok: true; sessionsEnded: number; deviceCookie: string } | Invalid | Throttled;

/** A problem of one field, in English and in the catalogs' words (the form shows it in the reader's language). */
function problem(field: 'current_password' | 'new_password', message: string, key: string): FieldProblem {
  return { field, message, words: { key } };
}

function invalid(...problems: FieldProblem[]): Invalid {
  return { ok: false, reason: 'invalid', problems };
}

/** The new password's problems under the sign-up rules (`checkNewPassword`), as the form's `new_password`. */
function newPasswordProblems(next: string, username: string): readonly FieldProblem[] {
  try {
    checkNewPassword(next, username);
    return [];
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return new InputError('new_password', `new ${error.message}`, [], error.problems[0]?.words).problems;
  }
}

export async function changePassword(
  deps: SignInDeps,
  user: User,
  form: { current: string; next: string },
  origin: AttemptOrigin,
  /** The session that asked: it stays signed in. */
  keepSessionIdHash: string,
): Promise<PasswordChange> {
  const nextProblems = newPasswordProblems(form.next, user.username);
  if (form.current === '') return invalid(problem('current_password', 'enter your current password', 'problems.currentPasswordMissing'), ...nextProblems);
  // The current password is tried, and a wrong one counted, whether or not the new one passes:
  // it is a field of this form, not a confirmation of another, so the member learns both at once,
  // and a wrong one is the attempt a second send would spend anyway.
  const confirmed = await confirmPassword(deps, user, form.current, origin);
  if (!confirmed.ok) {
    if (confirmed.reason === 'wrong') return invalid(problem('current_password', 'that is not your current password', 'problems.currentPasswordWrong'), ...nextProblems);
    return confirmed;
  }
  // From here the current password was right: the browser's device cookie is renewed (`deviceCookie`),
  // as a sign-in renews it, whether or not the change is made.
  const { deviceCookie } = confirmed;
  if (nextProblems.length > 0) return { ...invalid(...nextProblems), deviceCookie };
  const stored = await deps.stores.users.findCredentials(user.username);
  const askedBy = { address: origin.address, account: accountKey(user.username) };
  if (stored && (await verifyPassword(stored.passwordHash, form.next, askedBy))) {
    return { ...invalid(problem('new_password', 'the new password must differ from the current one', 'problems.newPasswordSame')), deviceCookie };
  }
  const now = deps.clock.now();
  const passwordHash = await hashPassword(form.next, askedBy);
  const sessionsEnded = await deps.stores.transaction(async (tx) => {
    await tx.users.setPasswordHash(user.id, passwordHash, now);
    return endOtherSignInSessions(tx, now, user.id, keepSessionIdHash);
  });
  await deps.securityLog.record({ userId: user.id, kind: 'password.changed', origin, detail: { other_sessions_signed_out: String(sessionsEnded) } });
  return { ok: true, sessionsEnded, deviceCookie };
}
