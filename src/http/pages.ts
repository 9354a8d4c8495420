/** Small helpers the page routes share: sending a page, and requiring a sign-in. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Session, User } from '../core/accounts/ports.js';
import { type Unreadable, unreadableTotpLine } from '../core/accounts/two-step.js';
import { DEFAULT_LOCALE, type Translator } from '../core/locales.js';
import { retryWait } from '../core/time.js';
import { translator } from '../i18n/catalogs.js';
import { currentSignIn } from './plugins/session.js';
import type { Html } from './views/html.js';

/** The notice a page's `?notice=` names among `notices` (after a form's 303), if it names one. */
export function noticeFrom<Notice>(request: FastifyRequest, notices: Readonly<Record<string, Notice>>): Notice | undefined {
  const key = (request.query as { notice?: unknown } | undefined)?.notice;
  return typeof key === 'string' && Object.hasOwn(notices, key) ? notices[key] : undefined;
}

/** Pages are per person and often hold a fresh secret or CSRF token: never cached. */
export function sendPage(reply: FastifyReply, page: Html, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(page.value);
}

/**
 * How long after an answer has gone work left for later waits: the answer's last bytes reach the
 * client before that work takes the CPU (on a small machine, the client's too), so it never shows
 * in how long the answer took.
 */
const AFTER_ANSWER_MS = 50;

/** Resolves a moment after the answer has gone (or its connection closed first): when work left for after answering may start. */
export function answered(reply: FastifyReply): Promise<void> {
  return new Promise((resolve) => {
    const later = () => setTimeout(resolve, AFTER_ANSWER_MS);
    // A client that hung up before the handler got here has had its 'close' already, and it comes
    // once: waited for, the work never started (a reset link never mailed) and a stop waited for
    // it until its grace ran out (attack103).
    if (reply.raw.closed) later();
    else reply.raw.once('close', later);
  });
}

/**
 * The signed-in user and session, or `undefined` after answering with a redirect to the sign-in
 * page that comes back here (a POST comes back to the page the form was on, `back`).
 */
export async function requireSignIn(request: FastifyRequest, reply: FastifyReply, back?: string): Promise<{ session: Session; user: User } | undefined> {
  const signIn = await currentSignIn(request);
  if (signIn) return signIn;
  const returnTo = back ?? request.url;
  await reply.redirect(`/login?return_to=${encodeURIComponent(returnTo)}`, 303);
  return undefined;
}

/** The signed-in user, or `undefined` once answered as `requireSignIn` does. */
export async function requireUser(request: FastifyRequest, reply: FastifyReply, back?: string): Promise<User | undefined> {
  return (await requireSignIn(request, reply, back))?.user;
}

/**
 * Where a signed-in user goes to sign in again before a change that needs a recent sign-in
 * (`isRecentSignIn`), and comes back to `back` from.
 */
export function signInAgainPath(back: string): string {
  return `/login?reauth=1&return_to=${encodeURIComponent(back)}`;
}

/** The strings of a form field that may be sent once, many times, or not at all. */
export function fieldValues(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? [value] : [];
}

/**
 * A code of an authenticator app whose secret does not open with this KEYS_SECRET (`Unreadable`):
 * one error line for the operator naming the cause, and the words for the page (in the reader's
 * language, `t`; English by default), which answers with `UNREADABLE_STATUS`: the fault is the
 * server's, not the person's.
 */
export function unreadableTotp(request: FastifyRequest, userId: number, unreadable: Unreadable, t: Translator = translator(DEFAULT_LOCALE)): string {
  request.log.error({ userId }, unreadableTotpLine(unreadable));
  return t.text('errors.totpUnreadable');
}

export const UNREADABLE_STATUS = 503;

/**
 * "Try again in 12 minutes" (or "in 10 hours") after `what` (already in the reader's language): what a throttled
 * person needs to know (INTERFACE section 4), in `t`'s language; English by default.
 */
export function retryMessage(what: string, retryAfterSeconds: number, t: Translator = translator(DEFAULT_LOCALE)): string {
  return t.text('errors.retry', { what, ...retryWait(retryAfterSeconds) });
}
