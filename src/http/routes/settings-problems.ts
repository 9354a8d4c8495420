/**
 * Problems the settings and recovery routes word themselves (the core has no rule for them): a throttle's
 * "try again in 12 minutes" and codes that cannot be checked, each with its English message (the
 * log's) and the catalogs' words for the page.
 */
import type { FastifyRequest } from 'fastify';
import type { Unreadable } from '../../core/accounts/two-step.js';
import type { FieldProblem } from '../../core/errors.js';
import { retryWait } from '../../core/time.js';
import { retryMessage, unreadableTotp } from '../pages.js';

/** What a throttled form says (INTERFACE section 4): what went wrong and how long to wait. */
export type Throttled = 'settings.tooManyPasswords' | 'settings.tooManyAttempts' | 'settings.tooManyAvatars' | 'security.tooManyCodes' | 'recovery.throttled';

const ENGLISH: Record<Throttled, string> = {
  'settings.tooManyPasswords': 'Too many wrong passwords.',
  'settings.tooManyAttempts': 'Too many wrong attempts.',
  'settings.tooManyAvatars': 'Too many images uploaded this hour.',
  'security.tooManyCodes': 'Too many wrong codes.',
  'recovery.throttled': 'Too many requests.',
};

export function tryAgain(field: string, key: Throttled, retryAfterSeconds: number): FieldProblem {
  return { field, message: retryMessage(ENGLISH[key], retryAfterSeconds), words: { key, values: retryWait(retryAfterSeconds) } };
}

/**
 * A sign-in name longer than any account's, sent back on its form: no account has such a name,
 * so saying so tells nothing about which accounts exist. `key` says what the field takes: a
 * username or an address (the forgotten-password form), or a username (sign-in).
 */
export function loginTooLong(field: string, max: number, key: 'recovery.loginTooLong' | 'sign-in.usernameTooLong' = 'recovery.loginTooLong'): FieldProblem {
  return { field, message: `at most ${max} characters`, words: { key, values: { max } } };
}

/**
 * A password longer than any account's (every way of setting one keeps to `max`), sent back on
 * the sign-in form without being checked: it can be no account's, so saying so tells nothing.
 */
export function passwordTooLong(max: number): FieldProblem {
  return { field: 'password', message: `at most ${max} characters`, words: { key: 'problems.textTooLong', values: { max } } };
}

/** Codes of the authenticator app cannot be unsealed here (logged for the operator once). */
export function codesUnreadable(request: FastifyRequest, userId: number, unreadable: Unreadable): FieldProblem {
  return { field: 'code', message: unreadableTotp(request, userId, unreadable), words: { key: 'security.codesUnreadable' } };
}
