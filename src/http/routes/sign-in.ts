/**
 * GET/POST /login and POST /logout (INTERFACE sections 1 and 10), the second step of sign-in for
 * accounts with two-step verification or passkeys, and sign-in with a passkey alone (issue 18).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../core/accounts/ports.js';
import type { Translator } from '../../core/locales.js';
import { TYPED_USERNAME_MAX_LENGTH, typedEmailAddress } from '../../core/accounts/accounts.js';
import { authenticateWithPasskey, authenticationOptions, passkeyAmr, passkeyRef } from '../../core/accounts/passkeys.js';
import type { SecurityEventKind } from '../../core/accounts/security-log.js';
import {
  PENDING_SIGN_IN_MS, amrAfterCode, findPendingSignIn, finishPendingSignIn, finishSignInWithCode, requiresSecondStep, secondFactorsOf,
  startPendingSignIn,
} from '../../core/accounts/two-step.js';
import { MAX_RETURN_TO_LENGTH, applicationReturnedTo } from '../../core/oauth/authorize/flow.js';
import { recordRefusedSignIn, recordUnusableSignIn, signIn } from '../../core/accounts/sign-in.js';
import { percentEncodeNonAscii } from '../../core/urls.js';
import { throttledHeaders } from '../../core/rate-limit-fields.js';
import { UNREADABLE_STATUS, retryMessage, sendPage, unreadableTotp } from '../pages.js';
import {
  MAX_LOST_UI_LOCALES_LENGTH, type SignInProof, attemptOrigin, clearPendingCookie, currentSignIn, deviceCookie, endSession, eventOrigin, lostRequestLocale, pageContext, pendingCookie,
  setDeviceCookie, setPendingCookie, startSession, uiLocalesOfReturnTo, verifyCsrf,
} from '../plugins/session.js';
import { secondStepPage } from '../views/security.js';
import { signOutPage, signedOutPage } from '../views/logout.js';
import { type LostRequest, SIGN_IN_USERNAME_MAX_LENGTH, signInPage } from '../views/sign-in.js';
import { PASSWORD_MAX_LENGTH } from '../../core/accounts/passwords.js';
import type { FieldProblem } from '../../core/errors.js';
import { loginTooLong, passwordTooLong } from './settings-problems.js';
import { clientAddress, visitor } from '../client-address.js';
import { documentHost } from '../../core/oauth/client-metadata.js';
import { TYPED_FIELD } from '../typed-field.js';

/**
 * Only a path on this site may be returned to, never another origin (no open redirect); other
 * characters than ASCII are percent-encoded, so the path fits a `Location` header.
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length > MAX_RETURN_TO_LENGTH) return '/';
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\') || /[\x00-\x1f]/.test(value)) return '/';
  return percentEncodeNonAscii(value);
}

/**
 * The registered name of the app whose authorization request `returnTo` leads back to, for the
 * page to name; for an app its own document describes, the document's host, which is all anyone
 * vouches for (its name is its own claim, INTERFACE section 13).
 */
export async function appNameFor(app: FastifyInstance, request: FastifyRequest, returnTo: string): Promise<string | undefined> {
  const client = await applicationReturnedTo(app.deps, returnTo, visitor(request));
  return client && (documentHost(client) ?? client.name);
}

/** The fields of the sign-in and sign-up pages that carry a `LostRequest`, in their body schemas. */
export const lostRequestBody = {
  /** `1` when the app's request was too long to return to: a failed attempt's page says so again. */
  too_long: { type: 'string', maxLength: 8 },
  /** The request's language, which its dropped return_to held. */
  ui_locales: { type: 'string', maxLength: MAX_LOST_UI_LOCALES_LENGTH },
} as const;

/**
 * The `LostRequest` a sign-in or sign-up page's query or form carries: its language by the rule
 * the page's own language is chosen by (`lostRequestLocale`), carried on as that one tag.
 */
export function lostRequestOf(sent: { too_long?: unknown; ui_locales?: unknown } | undefined): LostRequest {
  return { requestTooLong: sent?.too_long === '1', uiLocales: lostRequestLocale(sent?.ui_locales) };
}

/** The refusals of sign-in, in the catalogs. */
const WRONG_CREDENTIALS = { key: 'sign-in.wrongCredentials' };
/**
 * The right password, or a passkey that verified, of an account that is not active: its status,
 * and that a reset will not help, saying which of the two the member showed (`factor`).
 */
const ACCOUNT_NOT_ACTIVE = { key: 'sign-in.accountNotActive' };
const WRONG_PASSKEY = { key: 'sign-in.wrongPasskey' };
const WRONG_CODE = { key: 'sign-in.wrongCode' };
const PENDING_GONE = { key: 'sign-in.pendingGone' };

interface CredentialBody {
  credential?: string;
  return_to?: string;
  too_long?: string;
  ui_locales?: string;
  _csrf?: string;
}

const credentialBody = {
  type: 'object',
  properties: {
    credential: { type: 'string', maxLength: 20_000 }, return_to: { type: 'string', maxLength: MAX_RETURN_TO_LENGTH }, ...lostRequestBody, _csrf: { type: 'string', maxLength: 200 },
  },
} as const;
/** Passkey challenges (stored: a registration's, a second step's) one user or waiting sign-in may ask for in a minute. */
export const PASSKEY_OPTIONS_PER_MINUTE = 30;
/**
 * The refusals of the passkey options the site's script asks for are JSON, in the shape of every
 * other JSON error of the service (RFC 6749 5.2: `error` and `error_description`); the script reads `error`.
 */
export const PASSKEY_OPTIONS_LIMITED = { error: 'rate_limited', error_description: 'Too many passkey requests; try again in a minute.' } as const;
const csrfOnlyBody = { type: 'object', properties: { _csrf: { type: 'string', maxLength: 200 } } } as const;

interface SignInBody {
  username?: string;
  password?: string;
  return_to?: string;
  reauth?: string;
  too_long?: string;
  ui_locales?: string;
  _csrf?: string;
}

const signInBody = {
  type: 'object',
  properties: {
    username: TYPED_FIELD,
    password: TYPED_FIELD,
    return_to: { type: 'string', maxLength: MAX_RETURN_TO_LENGTH },
    /** `1` when the page asked to sign in again: a failed attempt's page says so again. */
    reauth: { type: 'string', maxLength: 8 },
    ...lostRequestBody,
    _csrf: { type: 'string', maxLength: 200 },
  },
} as const;

/**
 * The problems of a username no account can have (longer than any, or an e-mail address) or a
 * password longer than any, which no check needs to see: none counts as a failed sign-in, and
 * none tells which accounts exist.
 */
function unsignableProblems(username: string, password: string): FieldProblem[] {
  return [
    ...(username.length > SIGN_IN_USERNAME_MAX_LENGTH ? [loginTooLong('username', SIGN_IN_USERNAME_MAX_LENGTH, 'sign-in.usernameTooLong')]
      : typedEmailAddress(username) ? [{ field: 'username', message: 'sign in with your username: an e-mail address does not sign in', words: { key: 'sign-in.usernameNotEmail' } }] : []),
    ...(password.length > PASSWORD_MAX_LENGTH ? [passwordTooLong(PASSWORD_MAX_LENGTH)] : []),
  ];
}

export async function signInRoutes(app: FastifyInstance): Promise<void> {
  const page = { config: { html: true } };

  /**
   * What the page says to the holder of `user`, an account that is not active, who showed its
   * password or a passkey of it: the status (`error`), and the way to appeal (`notActive`).
   */
  function toldNotActive(t: Translator, user: User, factor: 'password' | 'passkey') {
    return {
      error: t.text(ACCOUNT_NOT_ACTIVE.key, { status: user.status, factor }),
      notActive: { username: user.username, appealTo: app.deps.settings.appealContact },
    };
  }

  app.get('/login', page, async (request: FastifyRequest<{ Querystring: { return_to?: string; login_hint?: string; reauth?: string; too_long?: string; ui_locales?: string } }>, reply) => {
    const context = await pageContext(request, reply);
    const returnTo = safeReturnTo(request.query.return_to);
    // A hint longer than any typed username (the authorization endpoint passes only one a username
    // reads as, `agreedLoginHint`, but this address is anyone's to open) can name no account: cut short it would name
    // another, so the field is left empty; so is one with a control character, as no
    // username holds one and the browser drops a line break from the field, joining the rest;
    // and so is an e-mail address (OpenID Connect Core 3.1.2.1's example of a hint), which signs
    // no one in here: the member would type a password only to be told so.
    const sent = request.query.login_hint;
    const hint = typeof sent === 'string' && sent.length <= TYPED_USERNAME_MAX_LENGTH && !/\p{Cc}/u.test(sent) && !typedEmailAddress(sent) ? sent : '';
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store')
      .send(signInPage(context, { username: hint, returnTo, appName: await appNameFor(app, request, returnTo), reauthenticate: request.query.reauth === '1',
        ...lostRequestOf(request.query) }).value);
  });

  app.post('/login', { ...page, schema: { body: signInBody } }, async (request: FastifyRequest<{ Body: SignInBody }>, reply) => {
    verifyCsrf(request);
    const { deps } = app;
    const username = request.body.username ?? '';
    const password = request.body.password ?? '';
    const returnTo = safeReturnTo(request.body.return_to);
    const unsignable = unsignableProblems(username, password);
    if (unsignable.length > 0) {
      // Sent back with the username as typed, so it can be mended; never the password.
      return sendPage(reply, signInPage(await pageContext(request, reply), {
        username, returnTo, appName: await appNameFor(app, request, returnTo), errors: unsignable,
        reauthenticate: request.body.reauth === '1', ...lostRequestOf(request.body),
      }), 400);
    }
    const outcome = await signIn(deps, { username, password, ...attemptOrigin(request) });
    // An account with two-step verification on is not signed in by its password alone: the
    // browser gets a pending sign-in and the second step's page, and no session yet. So does the
    // right password of one that is not active: its status is told after the second step, so the
    // password alone (one factor of two) learns no more than an active account's would.
    const passed = outcome.ok || outcome.reason === 'account_unusable' ? outcome.user : undefined;
    if (passed && await requiresSecondStep(deps.stores, passed.id)) {
      if (!outcome.ok) deps.metrics.signInFailures.inc({ reason: 'invalid_credentials' });
      const pending = await startPendingSignIn(deps, passed, ['pwd'], returnTo);
      setPendingCookie(request, reply, pending, PENDING_SIGN_IN_MS / 1000);
      return reply.redirect('/login/second-step', 303);
    }
    if (!outcome.ok) {
      // One label for every wrong sign-in: the metrics must not tell a right password of a suspended account apart.
      deps.metrics.signInFailures.inc({ reason: outcome.reason === 'throttled' ? 'throttled' : 'invalid_credentials' });
      const context = await pageContext(request, reply);
      if (outcome.reason === 'throttled') reply.code(429).headers(throttledHeaders('sign-in', outcome.retryAfterSeconds));
      else reply.code(401);
      // Someone elsewhere can keep an account locked for browsers without its device cookie, so
      // waiting may never be enough: the page names the ways in that no lock holds back.
      const wayOut = (refusal: string) => deps.mailer.enabled ? context.t.text('sign-in.tooManySignInsWayOut', { refusal }) : refusal;
      const told = outcome.reason === 'account_unusable'
        ? toldNotActive(context.t, outcome.user, 'password')
        : {
          error: outcome.reason === 'throttled'
            ? wayOut(retryMessage(context.t.text('sign-in.tooManySignIns'), outcome.retryAfterSeconds, context.t))
            : context.t.text(WRONG_CREDENTIALS.key),
        };
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store')
        .send(signInPage(context, {
          username, returnTo, appName: await appNameFor(app, request, returnTo), ...told, wrongCredentials: outcome.reason === 'invalid_credentials',
          reauthenticate: request.body.reauth === '1', ...lostRequestOf(request.body),
        }).value);
    }
    setDeviceCookie(request, reply, outcome.deviceCookie);
    return signedIn(request, reply, outcome.user, { amr: ['pwd'], method: 'password' }, returnTo);
  });

  /**
   * The session starts (which logs the sign-in, for the account and in the audit log), after
   * `extra` events of the sign-in, and the browser goes where it was going.
   */
  async function signedIn(request: FastifyRequest, reply: FastifyReply, user: User, proof: SignInProof, returnTo: string, extra: SecurityEventKind[] = []) {
    const origin = eventOrigin(request);
    for (const kind of extra) await app.deps.securityLog.record({ userId: user.id, kind, origin });
    await startSession(request, reply, user, proof);
    return reply.redirect(returnTo, 303);
  }

  /** The sign-in waiting for its second step, or an answer that sends the browser back to /login. */
  async function pendingOr(request: FastifyRequest, reply: FastifyReply) {
    const found = await findPendingSignIn(app.deps, pendingCookie(request));
    if (!found) clearPendingCookie(request, reply);
    return found;
  }

  /**
   * The second step's page context: in the language of the authorization request the sign-in
   * returns to (`ui_locales`, INTERFACE section 12), which the page's own URL no longer carries.
   */
  async function secondStepContext(request: FastifyRequest, reply: FastifyReply, pending: { returnTo: string }) {
    return pageContext(request, reply, { uiLocales: uiLocalesOfReturnTo(pending.returnTo) });
  }

  /**
   * A second step passed for an account that is not active (`user.status`, as the write that took
   * the code or passkey found it): no session; its holder, who has shown both factors, is told the
   * status, and the audit log gets the refusal the password's is. Neither step counted toward a
   * lock-out, as an active account's right password and code do not. A waiting sign-in always
   * began with the password.
   */
  async function notActive(request: FastifyRequest, reply: FastifyReply, user: User, pending: { returnTo: string }, passkeyId?: string) {
    recordUnusableSignIn(app.deps, user, eventOrigin(request), passkeyId);
    clearPendingCookie(request, reply);
    const context = await secondStepContext(request, reply, pending);
    return sendPage(reply, signInPage(context, { username: '', returnTo: pending.returnTo, ...toldNotActive(context.t, user, 'password') }), 401);
  }

  /** The sign-in page again, saying the waiting sign-in is gone. */
  async function pendingGone(request: FastifyRequest, reply: FastifyReply) {
    const context = await pageContext(request, reply);
    return sendPage(reply, signInPage(context, { username: '', returnTo: '/', error: context.t.text(PENDING_GONE.key) }), 401);
  }

  app.get('/login/second-step', page, async (request, reply) => {
    const found = await pendingOr(request, reply);
    if (!found) return reply.redirect('/login', 303);
    const factors = await secondFactorsOf(app.deps.stores, found.user.id);
    return sendPage(reply, secondStepPage(await secondStepContext(request, reply, found.pending), { factors }));
  });

  app.post('/login/second-step', { ...page, schema: { body: { type: 'object', properties: { code: TYPED_FIELD, _csrf: { type: 'string', maxLength: 200 } } } } },
    async (request: FastifyRequest<{ Body: { code?: string } }>, reply) => {
      verifyCsrf(request);
      const { deps } = app;
      const found = await pendingOr(request, reply);
      if (!found) return pendingGone(request, reply);
      const { pending, user } = found;
      const origin = attemptOrigin(request);
      // The code is spent only if this request finishes the sign-in (`finishSignInWithCode`).
      const checked = await finishSignInWithCode(deps, pending, user, request.body.code ?? '', origin);
      if (!checked.ok && checked.reason === 'not_active') return notActive(request, reply, { ...user, status: checked.status }, pending);
      if (!checked.ok && checked.reason === 'gone') {
        clearPendingCookie(request, reply);
        return pendingGone(request, reply);
      }
      if (!checked.ok && checked.reason === 'unreadable') {
        const factors = await secondFactorsOf(deps.stores, user.id);
        const context = await secondStepContext(request, reply, pending);
        return sendPage(reply, secondStepPage(context, { factors, error: unreadableTotp(request, user.id, checked, context.t) }), UNREADABLE_STATUS);
      }
      if (!checked.ok) {
        deps.metrics.signInFailures.inc({ reason: checked.reason === 'throttled' ? 'throttled' : 'invalid_credentials' });
        await recordRefusedSignIn(deps, user, origin, checked.reason === 'throttled' ? 'throttled' : 'invalid_second_factor');
        const factors = await secondFactorsOf(deps.stores, user.id);
        const context = await secondStepContext(request, reply, pending);
        if (checked.reason === 'throttled') {
          reply.headers(throttledHeaders('sign-in', checked.retryAfterSeconds));
          return sendPage(reply, secondStepPage(context, {
            factors, error: retryMessage(context.t.text('sign-in.tooManyCodes'), checked.retryAfterSeconds, context.t),
          }), 429);
        }
        return sendPage(reply, secondStepPage(context, { factors, error: context.t.text(WRONG_CODE.key) }), 401);
      }
      // The code's write found the account active (`finishSignInWithCode`), whatever `user`, read
      // before it, says: the code is spent, so the sign-in it paid for finishes.
      const recovery = checked.method === 'recovery';
      clearPendingCookie(request, reply);
      setDeviceCookie(request, reply, await deps.deviceCookies.afterSignIn(deviceCookie(request), user.username.toLowerCase()));
      return signedIn(request, reply, user, { amr: amrAfterCode(pending), method: recovery ? 'password_recovery_code' : 'password_totp' },
        pending.returnTo, recovery ? ['recovery_code.used'] : []);
    });

  app.post('/login/second-step/passkey/options', { ...page, schema: { body: csrfOnlyBody } }, async (request, reply) => {
    verifyCsrf(request);
    const found = await pendingOr(request, reply);
    if (!found) return reply.code(401).header('cache-control', 'no-store').send({ error: 'sign_in_expired', error_description: 'The sign-in waiting for its second step has expired; sign in again.' });
    // Each stores a challenge: one waiting sign-in gets a bounded number.
    const decision = await app.deps.limiter.hit(`passkey-options:pending:${found.pending.idHash}`, PASSKEY_OPTIONS_PER_MINUTE, 60, app.deps.clock.now());
    if (!decision.allowed) return reply.code(429).headers(throttledHeaders('passkey-options', 60)).header('cache-control', 'no-store').send(PASSKEY_OPTIONS_LIMITED);
    return reply.header('cache-control', 'no-store').send(await authenticationOptions(app.deps, 'second_step', found.user));
  });

  app.post('/login/second-step/passkey', { ...page, schema: { body: credentialBody } }, async (request: FastifyRequest<{ Body: CredentialBody }>, reply) => {
    verifyCsrf(request);
    const { deps } = app;
    const found = await pendingOr(request, reply);
    if (!found) return pendingGone(request, reply);
    const { pending, user } = found;
    const checked = await authenticateWithPasskey(deps, 'second_step', request.body.credential ?? '', user.id);
    if (!checked.ok) {
      deps.metrics.signInFailures.inc({ reason: 'invalid_credentials' });
      const origin = attemptOrigin(request);
      await recordRefusedSignIn(deps, user, origin, 'invalid_passkey', checked.passkey && passkeyRef(checked.passkey.credentialId));
      const factors = await secondFactorsOf(deps.stores, user.id);
      const context = await secondStepContext(request, reply, pending);
      return sendPage(reply, secondStepPage(context, { factors, error: context.t.text(WRONG_PASSKEY.key) }), 401);
    }
    if (!(await finishPendingSignIn(deps, pending))) {
      clearPendingCookie(request, reply);
      return pendingGone(request, reply);
    }
    const { passkey } = checked;
    // The status the write that recorded the passkey's use found, not `user`'s, read before it.
    if (checked.status !== 'active') return notActive(request, reply, { ...user, status: checked.status }, pending, passkeyRef(passkey.credentialId));
    clearPendingCookie(request, reply);
    setDeviceCookie(request, reply, await deps.deviceCookies.afterSignIn(deviceCookie(request), user.username.toLowerCase()));
    return signedIn(request, reply, user, {
      amr: [...new Set([...pending.amr, ...passkeyAmr(passkey)])], method: 'password_passkey', passkeyId: passkeyRef(passkey.credentialId),
    }, pending.returnTo);
  });

  app.post('/login/passkey/options', { ...page, schema: { body: csrfOnlyBody } }, async (request, reply) => {
    verifyCsrf(request);
    // Not limited per address: the challenge is signed, not stored, so asking costs no storage,
    // and a limit would let one script behind a shared address refuse everyone there.
    return reply.header('cache-control', 'no-store').send(await authenticationOptions(app.deps, 'sign_in'));
  });

  // A passkey alone: discoverable, with user verification, so it is two factors by itself.
  app.post('/login/passkey', { ...page, schema: { body: credentialBody } }, async (request: FastifyRequest<{ Body: CredentialBody }>, reply) => {
    verifyCsrf(request);
    const { deps } = app;
    const returnTo = safeReturnTo(request.body.return_to);
    const checked = await authenticateWithPasskey(deps, 'sign_in', request.body.credential ?? '');
    const user = checked.passkey && await deps.stores.users.findById(checked.passkey.userId);
    const passkeyId = checked.passkey && passkeyRef(checked.passkey.credentialId);
    if (!checked.ok || !user || user.status !== 'active') {
      deps.metrics.signInFailures.inc({ reason: 'invalid_credentials' });
      const origin = attemptOrigin(request);
      // Nothing was typed: the passkey names the account, if it names one.
      if (!user) deps.audit.record({ audit: 'sign_in.failed', username: '', reason: 'invalid_passkey', address: origin.address }, request.id);
      else if (!checked.ok) await recordRefusedSignIn(deps, user, origin, 'invalid_passkey', passkeyId);
      else recordUnusableSignIn(deps, user, origin, passkeyId);
      const context = await pageContext(request, reply);
      // A passkey that verified is the account's holder, as the right password is: told the status.
      const told = checked.ok && user ? toldNotActive(context.t, user, 'passkey')
        : !checked.ok && checked.unknownCredentialId !== undefined ? { error: context.t.text('sign-in.unknownPasskey'), unknownCredentialId: checked.unknownCredentialId }
          : { error: context.t.text(WRONG_PASSKEY.key) };
      return sendPage(reply, signInPage(context, {
        username: '', returnTo, appName: await appNameFor(app, request, returnTo), ...told, ...lostRequestOf(request.body),
      }), 401);
    }
    setDeviceCookie(request, reply, await deps.deviceCookies.afterSignIn(deviceCookie(request), user.username.toLowerCase()));
    return signedIn(request, reply, user, { amr: passkeyAmr(checked.passkey), method: 'passkey', passkeyId }, returnTo);
  });

  app.post('/logout', page, async (request, reply) => {
    verifyCsrf(request);
    const signedIn = await currentSignIn(request);
    await endSession(request, reply);
    if (signedIn) app.deps.audit.record({ audit: 'sign_out', userId: signedIn.user.id, address: clientAddress(request) }, request.id);
    // Post/redirect/get to a page that says so: the person sees the sign-out worked.
    return reply.redirect('/logout', 303);
  });

  // Signed out: says so; still signed in (a link, a page kept open): the button to sign out.
  app.get('/logout', page, async (request, reply) => {
    const signedIn = await currentSignIn(request);
    const context = await pageContext(request, reply);
    return sendPage(reply, signedIn ? signOutPage(context, signedIn.user) : signedOutPage(context, { client: undefined, refusedRedirect: undefined }));
  });
}
