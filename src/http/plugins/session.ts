/**
 * Sign-in sessions and CSRF protection for the pages.
 * - The session cookie holds a random id; only its SHA-256 is stored (sessions table), so a
 *   database leak gives no usable cookie. A new id is issued on every sign-in (no fixation).
 * - CSRF: a random token in its own HttpOnly cookie must come back in the form (`_csrf`), and a
 *   form post whose `Origin` is another site is refused (double submit plus origin check).
 * Cookies are HttpOnly and SameSite=Lax, Secure with the `__Host-` prefix on https.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual, generateOpaqueId, hashSecret } from '../../core/credentials.js';
import { OAuthError } from '../../core/errors.js';
import { DEVICE_COOKIE_LIFETIME_SECONDS } from '../../core/device-cookies.js';
import { endSignInSession } from '../../core/logout/events.js';
import type { Session, User } from '../../core/ports.js';
import { SESSION_LIFETIME_MS, isIdle, needsTouch } from '../../core/sessions.js';
import type { Deps } from '../../deps.js';
import type { PageContext } from '../views/layout.js';

declare module 'fastify' {
  interface FastifyInstance {
    deps: Deps;
  }
  interface FastifyRequest {
    /** Memo of the sign-in lookup: `null` once looked up and absent. */
    signIn?: { session: Session; user: User } | null;
    csrfToken?: string;
  }
}

function secure(request: FastifyRequest): boolean {
  return request.server.deps.settings.baseUrl.startsWith('https:');
}

export function cookieName(request: FastifyRequest, base: 'session' | 'csrf' | 'device'): string {
  return secure(request) ? `__Host-svc_${base}` : `svc_${base}`;
}

function cookieOptions(request: FastifyRequest, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: secure(request),
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  };
}

/** The signed-in user and session, looked up once per request. */
export async function currentSignIn(request: FastifyRequest): Promise<{ session: Session; user: User } | undefined> {
  if (request.signIn !== undefined) return request.signIn ?? undefined;
  const id = request.cookies[cookieName(request, 'session')];
  const { stores, clock } = request.server.deps;
  const now = clock.now();
  const found = id ? await stores.sessions.findLive(hashSecret(id), now) : undefined;
  request.signIn = found && found.user.status === 'active' && !isIdle(found.session, now) ? found : null;
  if (request.signIn && needsTouch(request.signIn.session, now)) await stores.sessions.touch(request.signIn.session.idHash, now);
  return request.signIn ?? undefined;
}

/**
 * Starts a session under a new id (ending the old one), as on every sign-in, with a new CSRF
 * token: neither a session id nor a CSRF token known before the sign-in is good after it.
 */
export async function startSession(request: FastifyRequest, reply: FastifyReply, user: User): Promise<Session> {
  await endSession(request, reply);
  setCsrfToken(request, reply, generateOpaqueId());
  const { stores, clock } = request.server.deps;
  const id = generateOpaqueId();
  const now = clock.now();
  const session = await stores.sessions.create({
    idHash: hashSecret(id), userId: user.id, authTime: now, expiresAt: now + SESSION_LIFETIME_MS,
  }, now);
  reply.setCookie(cookieName(request, 'session'), id, cookieOptions(request, SESSION_LIFETIME_MS / 1000));
  request.signIn = { session, user };
  return session;
}

/**
 * Signs the browser out: its session ends and every app the user holds a live grant with is
 * sent a back-channel logout (INTERFACE section 5), queued in the same transaction.
 */
export async function endSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const name = cookieName(request, 'session');
  const id = request.cookies[name];
  if (id) {
    const { stores, clock } = request.server.deps;
    await endSignInSession(stores, clock, hashSecret(id));
    reply.clearCookie(name, cookieOptions(request));
  }
  request.signIn = null;
}

/** This browser's CSRF token, set as a cookie the first time a form is shown. */
export function csrfToken(request: FastifyRequest, reply: FastifyReply): string {
  if (request.csrfToken) return request.csrfToken;
  const name = cookieName(request, 'csrf');
  const token = request.cookies[name];
  if (token && /^[A-Za-z0-9_-]{43}$/.test(token)) {
    request.csrfToken = token;
    return token;
  }
  return setCsrfToken(request, reply, generateOpaqueId());
}

function setCsrfToken(request: FastifyRequest, reply: FastifyReply, token: string): string {
  reply.setCookie(cookieName(request, 'csrf'), token, cookieOptions(request));
  request.csrfToken = token;
  return token;
}

/** The browser's device cookie (sign-in throttling, INTERFACE section 4), as sent. */
export function deviceCookie(request: FastifyRequest): string | undefined {
  return request.cookies[cookieName(request, 'device')];
}

export function setDeviceCookie(request: FastifyRequest, reply: FastifyReply, value: string): void {
  reply.setCookie(cookieName(request, 'device'), value, cookieOptions(request, DEVICE_COOKIE_LIFETIME_SECONDS));
}

/** Refuses a form post without the browser's CSRF token or from another origin. */
export function verifyCsrf(request: FastifyRequest): void {
  const origin = request.headers.origin;
  const expectedOrigin = new URL(request.server.deps.settings.baseUrl).origin;
  const cookie = request.cookies[cookieName(request, 'csrf')];
  const body = request.body as Record<string, unknown> | undefined;
  const sent = typeof body?._csrf === 'string' ? body._csrf : '';
  const originOk = origin === undefined || origin === expectedOrigin;
  if (!originOk || !cookie || !constantTimeEqual(cookie, sent)) {
    throw new OAuthError('invalid_request', 'This form has expired or came from another site. Go back, reload the page and try again.', { status: 403 });
  }
}

/**
 * What every page needs. `mintCsrf: false` (the not-found page) never sets a new CSRF cookie:
 * a browser's background fetch (a favicon) racing the first page would otherwise replace the
 * cookie that page's forms were given.
 */
export async function pageContext(request: FastifyRequest, reply: FastifyReply, options: { mintCsrf?: boolean } = {}): Promise<PageContext> {
  const signIn = await currentSignIn(request).catch(() => undefined);
  const csrf = options.mintCsrf === false ? request.cookies[cookieName(request, 'csrf')] ?? '' : csrfToken(request, reply);
  return { user: signIn?.user, csrf };
}
