/**
 * Sign-in sessions and CSRF protection for the pages.
 * - The session cookie holds a random id; only its SHA-256 is stored (sessions table), so a
 *   database leak gives no usable cookie. A new id is issued on every sign-in (no fixation).
 * - CSRF: a random token in its own HttpOnly cookie must come back in the form (`_csrf`), and a
 *   form post whose `Origin` is another site is refused (double submit plus origin check).
 * Cookies are HttpOnly and SameSite=Lax, Secure with the `__Host-` prefix on https.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual, generateOpaqueId, hashSecret } from '../../core/credentials/formats.js';
import { AccountUnusableError, OAuthError } from '../../core/errors.js';
import { DEVICE_COOKIE_LIFETIME_SECONDS, accountKey } from '../../core/accounts/device-cookies.js';
import { endSignInSession, endSignInSessionWithin } from '../../core/oidc/logout/events.js';
import type { SignInMethod } from '../../core/audit.js';
import type { Session, User } from '../../core/accounts/ports.js';
import type { AttemptOrigin } from '../../core/accounts/sign-in.js';
import { type EventOrigin, SIGN_IN_METHOD_WORDS } from '../../core/accounts/security-log.js';
import { SESSION_LIFETIME_MS, liveSignIn, needsTouch } from '../../core/accounts/sessions.js';
import type { Deps } from '../../deps.js';
import type { Stores } from '../../core/stores.js';
import type { PageContext } from '../views/layout.js';
import { type Locale, chooseLocale, localeOfUiLocales } from '../../core/locales.js';
import { AUTHORIZE_PATH } from '../../core/oauth/authorize/flow.js';
import { readerTimeZone } from '../../core/site-time.js';
import { clientAddress } from '../client-address.js';
import { afterCommit } from '../logging.js';

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

export function cookieName(request: FastifyRequest, base: 'session' | 'csrf' | 'device' | 'pending' | 'reveal' | 'mailbox'): string {
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
  request.signIn = (id ? await liveSignIn(stores.sessions, hashSecret(id), now) : undefined) ?? null;
  if (request.signIn && needsTouch(request.signIn.session, now)) {
    try {
      await stores.sessions.touch(request.signIn.session.idHash, now);
    } catch (error) {
      // The last activity is informative, as a token's last use is (docs/api.md): failing to write
      // it must not fail the page; the next request, reading the older time, writes it again.
      request.log.warn({ err: error }, 'could not record session activity');
    }
  }
  return request.signIn ?? undefined;
}

/** The browser's User-Agent as sent (the sessions list and the security log name the browser by it). */
export function userAgent(request: FastifyRequest): string {
  const value = request.headers['user-agent'];
  return typeof value === 'string' ? value.slice(0, 512) : '';
}

/** Where an event of the security log comes from: the address, the browser, the page's language and the request's id. */
export function eventOrigin(request: FastifyRequest): EventOrigin {
  return { address: clientAddress(request), userAgent: userAgent(request), locale: requestLocale(request), requestId: request.id };
}

/** Where a sign-in attempt or a re-check comes from, as its counters and the security log see it. */
export function attemptOrigin(request: FastifyRequest): AttemptOrigin {
  return { ...eventOrigin(request), deviceCookie: deviceCookie(request) };
}

/** The page's language (INTERFACE section 12), from what the request carries and the sign-in already read. */
export function requestLocale(request: FastifyRequest, uiLocales = requestedUiLocales(request)): Locale {
  return chooseLocale({
    uiLocales,
    saved: request.signIn?.user.language,
    cookie: request.cookies[LANGUAGE_COOKIE],
    acceptLanguage: request.headers['accept-language'],
  });
}

/** How a session's user proved who they are: the RFC 8176 methods, and the method the logs name. */
export interface SignInProof {
  amr: readonly string[];
  method: SignInMethod;
  /** `passkeyRef` of the passkey that signed in, if one did. */
  passkeyId?: string | undefined;
}

/**
 * A session is written only while its account is active, holding the account's row until the
 * transaction ends: the sign-in read the account active before, and the member's own deletion
 * committed since would have erased every session but this one (docs/site.md, "Deleting the
 * account"). The deletion waits for the hold, or the hold sees it and the sign-in is refused.
 */
async function holdActive(tx: Stores, user: User): Promise<void> {
  if (!(await tx.users.holdActive(user.id))) throw new AccountUnusableError(`account "${user.username}" is not active; no session is started for it`);
}

/**
 * Starts a session under a new id (ending the old one), as on every sign-in, with a new CSRF
 * token: neither a session id nor a CSRF token known before the sign-in is good after it. `amr`
 * says how the user signed in (RFC 8176); the browser and address are kept for the sessions list.
 * Every session begins here, so every one is logged as a sign-in, once: in the account's security
 * log and as the audit event `sign_in.succeeded`.
 */
export async function startSession(request: FastifyRequest, reply: FastifyReply, user: User, proof: SignInProof): Promise<Session> {
  const { amr, method, passkeyId } = proof;
  await endSession(request, reply);
  setCsrfToken(request, reply, generateOpaqueId());
  const { stores, clock, securityLog, audit, deviceCookies } = request.server.deps;
  const id = generateOpaqueId();
  const now = clock.now();
  const origin = eventOrigin(request);
  // A browser that never signed into the account (no device cookie for it) gets its owner a notice (INTERFACE section 12).
  const known = await deviceCookies.entryFor(deviceCookie(request), accountKey(user.username));
  // The session and its line in the owner's log land together or not at all: a log that cannot
  // be written signs no one in.
  const { session, announce } = await stores.transaction(async (tx) => {
    await holdActive(tx, user);
    return {
      session: await tx.sessions.create({
        idHash: hashSecret(id), userId: user.id, authTime: now, expiresAt: now + SESSION_LIFETIME_MS, amr: [...amr], address: origin.address, userAgent: origin.userAgent,
      }, now),
      announce: await securityLog.recordAll([{
        userId: user.id, kind: 'sign_in.succeeded', origin, detail: { method: SIGN_IN_METHOD_WORDS[method], ...(known ? {} : { new_browser: 'yes' }) },
      }], tx.securityEvents),
    };
  });
  // The member is signed in: a notice that cannot be queued is the operators' error line, not a failed sign-in.
  await afterCommit(request.log, 'a member signed in, but the sign-in\'s notice mail could not be queued', { userId: user.id }, announce);
  audit.record({ audit: 'sign_in.succeeded', userId: user.id, username: user.username, address: origin.address, method, ...(passkeyId ? { passkeyId } : {}) }, request.id);
  reply.setCookie(cookieName(request, 'session'), id, cookieOptions(request, SESSION_LIFETIME_MS / 1000));
  request.signIn = { session, user };
  return session;
}

/**
 * The signed-in session under a new id, everything else kept (its sign-in time, methods and
 * lifetime): after a password change, an id that leaked before it is worth nothing. The apps
 * signed into in the old one are sent a back-channel logout: their sign-in there named it.
 */
export async function rotateSession(request: FastifyRequest, reply: FastifyReply, current: { session: Session; user: User }): Promise<Session> {
  const { stores, clock } = request.server.deps;
  const id = generateOpaqueId();
  const now = clock.now();
  const { session: old, user } = current;
  const session = await stores.transaction(async (tx) => {
    await holdActive(tx, user);
    const created = await tx.sessions.create({
      idHash: hashSecret(id), userId: user.id, authTime: old.authTime, expiresAt: old.expiresAt, amr: old.amr, userAgent: old.userAgent, address: old.address,
    }, now);
    // The old session ends as a sign-out does: the apps signed into in it are told (its sid).
    await endSignInSessionWithin(tx, now, old.idHash);
    return created;
  });
  reply.setCookie(cookieName(request, 'session'), id, cookieOptions(request, Math.max(1, Math.floor((old.expiresAt - now) / 1000))));
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

/**
 * The browser's mailbox pass: it refused a verification link mailed to an address, and may ask for
 * that address past the address's limit (`refuseEmailLink` in src/core/accounts/email.ts).
 */
export function mailboxPassCookie(request: FastifyRequest): string | undefined {
  return request.cookies[cookieName(request, 'mailbox')];
}

export function setMailboxPassCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
  reply.setCookie(cookieName(request, 'mailbox'), value, cookieOptions(request, maxAgeSeconds));
}

/** A sign-in waiting for its second step: the random id of `pending_sign_ins`, for the /login pages only. */
export function pendingCookie(request: FastifyRequest): string | undefined {
  return request.cookies[cookieName(request, 'pending')];
}

export function setPendingCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
  // The `__Host-` prefix needs path=/: the cookie goes to every page, and only /login reads it.
  reply.setCookie(cookieName(request, 'pending'), value, cookieOptions(request, maxAgeSeconds));
}

export function clearPendingCookie(request: FastifyRequest, reply: FastifyReply): void {
  if (pendingCookie(request) !== undefined) reply.clearCookie(cookieName(request, 'pending'), cookieOptions(request));
}

/**
 * A new secret on its way to the page that shows it once (`src/core/credentials/one-time-secrets.ts`): the
 * cookie holds the id and key of its sealed row, for a few minutes.
 */
export function setRevealCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
  reply.setCookie(cookieName(request, 'reveal'), value, cookieOptions(request, maxAgeSeconds));
}

/** The reveal cookie as sent, cleared from the browser at once: it opens its secret once at most. */
export function takeRevealCookie(request: FastifyRequest, reply: FastifyReply): string | undefined {
  const name = cookieName(request, 'reveal');
  const value = request.cookies[name];
  if (value !== undefined) reply.clearCookie(name, cookieOptions(request));
  return value;
}

function formExpired(): OAuthError {
  return new OAuthError('invalid_request', 'This form has expired or came from another site. Go back, reload the page and try again.', { status: 403, words: { key: 'errors.formExpired' } });
}

/**
 * The part of `verifyCsrf` that reads no body: a post from another origin, or from a browser that
 * holds no CSRF cookie, is refused whatever its form holds, so it may be refused before its body is read.
 */
export function verifyCsrfBeforeBody(request: FastifyRequest): void {
  const origin = request.headers.origin;
  const expectedOrigin = new URL(request.server.deps.settings.baseUrl).origin;
  if ((origin !== undefined && origin !== expectedOrigin) || !request.cookies[cookieName(request, 'csrf')]) throw formExpired();
}

/** Refuses a form post without the browser's CSRF token or from another origin. */
export function verifyCsrf(request: FastifyRequest): void {
  verifyCsrfBeforeBody(request);
  const cookie = request.cookies[cookieName(request, 'csrf')]!;
  const body = request.body as Record<string, unknown> | undefined;
  const sent = typeof body?._csrf === 'string' ? body._csrf : '';
  if (!constantTimeEqual(cookie, sent)) throw formExpired();
}

/**
 * What every page needs. `mintCsrf: false` (the not-found page) never sets a new CSRF cookie:
 * a browser's background fetch (a favicon) racing the first page would otherwise replace the
 * cookie that page's forms were given.
 */
export async function pageContext(request: FastifyRequest, reply: FastifyReply, options: { mintCsrf?: boolean; uiLocales?: string | undefined } = {}): Promise<PageContext> {
  const signIn = await currentSignIn(request).catch(() => undefined);
  const csrf = options.mintCsrf === false ? request.cookies[cookieName(request, 'csrf')] ?? '' : csrfToken(request, reply);
  const locale = requestLocale(request, options.uiLocales);
  // RFC 9110 12.5.5 and 8.5: the page's language, and what chose it, for caches.
  reply.header('content-language', locale).header('vary', 'Accept-Language, Cookie');
  return {
    user: signIn?.user,
    csrf,
    t: request.server.deps.words(locale),
    timeZone: readerTimeZone(signIn?.user.timeZone ?? null, request.server.deps.settings.siteTimeZone),
    now: request.server.deps.clock.now(),
    // As the browser asked for it: the router may have been given another (`routableUrl`).
    path: request.originalUrl,
  };
}

/** The cookie the language picker sets (INTERFACE section 12): its name is the contract's, without a prefix. */
export const LANGUAGE_COOKIE = 'lang';

/** A year: the reader's language is a lasting choice. */
const LANGUAGE_COOKIE_SECONDS = 365 * 86_400;

export function setLanguageCookie(request: FastifyRequest, reply: FastifyReply, locale: Locale): void {
  reply.setCookie(LANGUAGE_COOKIE, locale, cookieOptions(request, LANGUAGE_COOKIE_SECONDS));
}

/**
 * `ui_locales` of the authorization request this page belongs to (OpenID Connect Core 3.1.2.1):
 * the request itself at the authorization endpoint, or the one `return_to` leads back to on the
 * sign-in and sign-up pages, which carry it there (or, for a request too long to return to, its
 * own `ui_locales`).
 */
function requestedUiLocales(request: FastifyRequest): string | undefined {
  // A target the router refused may be no URL at all (`GET http://%zz/`, absolute form): it asks for none.
  const url = addressOnSite(request.url);
  if (url === undefined) return undefined;
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
  if (url.pathname === AUTHORIZE_PATH) {
    const sent = url.searchParams.get('ui_locales') ?? body.ui_locales;
    return typeof sent === 'string' ? sent : undefined;
  }
  const back = url.searchParams.get('return_to') ?? body.return_to;
  const returnedTo = typeof back === 'string' ? uiLocalesOfReturnTo(back) : undefined;
  if (returnedTo !== undefined || !LOST_REQUEST_PAGES.has(url.pathname)) return returnedTo;
  // A request too long to return to is not in `return_to`: the notice carries its language itself.
  return lostRequestLocale(url.searchParams.get('ui_locales') ?? body.ui_locales);
}

/**
 * The pages that carry the language of an authorization request too long to return to, as
 * `ui_locales` of their own (`LostRequest` in src/http/views/sign-in.ts): sign-in, a passkey's
 * sign-in, and sign-up.
 */
const LOST_REQUEST_PAGES = new Set(['/login', '/login/passkey', '/signup']);

/**
 * The longest `ui_locales` a page of `LOST_REQUEST_PAGES` reads: the notice carries one supported
 * tag; more is no request's but a script's.
 */
export const MAX_LOST_UI_LOCALES_LENGTH = 200;

/**
 * The language such a page carries (its query's or form's `ui_locales`, `carried`), read as OpenID
 * Connect Core 3.1.2.1 reads `ui_locales`: its first supported tag; none for a longer value. The
 * one rule for the page's language and for the fields it carries on (`lostRequestOf`).
 */
export function lostRequestLocale(carried: unknown): Locale | undefined {
  return typeof carried === 'string' && carried.length <= MAX_LOST_UI_LOCALES_LENGTH ? localeOfUiLocales(carried) : undefined;
}

/**
 * `returnTo` with `locale` as the language it carries, when it is a page of `LOST_REQUEST_PAGES`
 * that carries one: that `ui_locales` is the site's copy of a lost request's language, and the
 * picker's choice on the page is the reader's (INTERFACE section 12), so the page comes back in it
 * and carries it on. A request's own `ui_locales`, inside a `return_to`, is left as the app sent it.
 */
export function withPickedLanguage(returnTo: string, locale: Locale): string {
  const url = addressOnSite(returnTo);
  if (url === undefined || !LOST_REQUEST_PAGES.has(url.pathname) || !url.searchParams.has('ui_locales')) return returnTo;
  url.searchParams.set('ui_locales', locale);
  return `${url.pathname}${url.search}`;
}

/** `ui_locales` of the authorization request a sign-in returns to (`returnTo`, a path on this site). */
export function uiLocalesOfReturnTo(returnTo: string): string | undefined {
  if (!returnTo.startsWith('/') || returnTo.startsWith('//')) return undefined;
  // `/\host…` is a network-path reference to the WHATWG URL parser (a backslash is a slash in
  // http: URLs), and `/\%zz` names no host: no URL, so no page of this site, and no language
  // asked for. Thrown, it failed every page that reads its language (sign-in, sign-up, the error
  // pages, the router's refusal), and the error handler's own page after it.
  const target = addressOnSite(returnTo);
  return target?.pathname === AUTHORIZE_PATH ? target.searchParams.get('ui_locales') ?? undefined : undefined;
}

/**
 * `target` read as an address on this site, parsed once (`URL.canParse` then `new URL` parsed it
 * twice; `URL.parse` is not in every Node 20 the service runs on); `undefined` when it is no URL.
 */
function addressOnSite(target: string): URL | undefined {
  try {
    return new URL(target, 'http://site.invalid');
  } catch {
    return undefined;
  }
}
