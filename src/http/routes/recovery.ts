/**
 * E-mail and the way back in (INTERFACE section 12): `/settings/email`, `GET /email/verify`,
 * `/password/forgot` and `/password/reset`. A link's token arrives in the query string, which the
 * log redacts (`token` in src/http/logging.ts).
 */
import { EMAIL_CANCEL_PATH, EMAIL_REFUSE_PATH, EMAIL_SETTINGS_PATH, RESET_PASSWORD_PATH } from '../../core/urls.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { accountKey } from '../../core/accounts/device-cookies.js';
import { MAILBOX_PASS_MS, cancelEmailChange, changeEmail, emailSettings, findVerificationLink, refuseEmailLink, verifyEmail } from '../../core/accounts/email.js';
import { RESET_LINK_MS, findResetLink, requestPasswordReset, resetPassword } from '../../core/accounts/password-reset.js';
import { isRecentSignIn } from '../../core/accounts/sessions.js';
import { InputError } from '../../core/errors.js';
import { throttledHeaders } from '../../core/rate-limit-fields.js';
import { answered, requireSignIn, sendPage, signInAgainPath } from '../pages.js';
import { attemptOrigin, currentSignIn, deviceCookie, eventOrigin, mailboxPassCookie, pageContext, setDeviceCookie, setMailboxPassCookie, verifyCsrf } from '../plugins/session.js';
import { emailSettingsPage, emailVerifiedPage, forgotPasswordPage, passwordResetDonePage, refuseEmailPage, resetPasswordPage } from '../views/recovery.js';
import { TYPED_FIELD } from '../typed-field.js';
import { loginTooLong, tryAgain } from './settings-problems.js';

const field = (maxLength: number) => ({ type: 'string', maxLength } as const);
const csrf = field(200);
const tokenQuery = { type: 'object', properties: { token: TYPED_FIELD } } as const;
/** The longest `login` the forgotten-password form looks up; longer is sent back on the form. */
const LOGIN_MAX_LENGTH = 1000;

export async function recoveryRoutes(app: FastifyInstance): Promise<void> {
  const { deps } = app;
  const page = { config: { html: true } };

  app.get(EMAIL_SETTINGS_PATH, page, async (request, reply) => {
    const signIn = await requireSignIn(request, reply);
    if (!signIn) return reply;
    return sendPage(reply, emailSettingsPage(await pageContext(request, reply), { ...await emailSettings(deps, signIn.user.id), mailEnabled: deps.mailer.enabled }));
  });

  app.post(EMAIL_SETTINGS_PATH, { ...page, schema: { body: { type: 'object', properties: { email: TYPED_FIELD, _csrf: csrf } } } }, async (request: FastifyRequest<{ Body: { email?: string } }>, reply) => {
    verifyCsrf(request);
    const signIn = await requireSignIn(request, reply, EMAIL_SETTINGS_PATH);
    if (!signIn) return reply;
    // The address is the way back in: only a recent sign-in moves it, as it does the second step.
    if (!isRecentSignIn(signIn.session, deps.clock.now())) return reply.redirect(signInAgainPath(EMAIL_SETTINGS_PATH), 303);
    const value = request.body.email ?? '';
    const context = await pageContext(request, reply);
    const state = { mailEnabled: deps.mailer.enabled, value };
    try {
      const changed = await changeEmail(deps, signIn.user, value, eventOrigin(request), context.t.locale, mailboxPassCookie(request));
      const shown = await emailSettings(deps, signIn.user.id);
      const { email } = shown;
      if (!changed.ok && changed.reason === 'throttled') {
        reply.headers(throttledHeaders('verify-mail', changed.retryAfterSeconds));
        // A member waiting for their own link is told it still works (or, its mail still in the
        // outbox, that it has not gone out yet; or, given up, that none is coming), and not sent
        // to "Not you?", which would take the address off their account or is in a mail that never
        // came. Else the address's own limit says how its owner gets past what others asked for.
        const hint = changed.lastLink === null && changed.byAddress ? context.t.text('recovery.throttledAddressHint') : undefined;
        return sendPage(reply, emailSettingsPage(context, { ...state, ...shown, notice: hint, lastLink: changed.lastLink ?? undefined, throttled: true, errors: tryAgain('email', 'recovery.throttled', changed.retryAfterSeconds) }), 429);
      }
      if (!changed.ok) return sendPage(reply, emailSettingsPage(context, { ...state, ...shown }), 409);
      const words = !changed.changed
        ? changed.cancelled !== null && email
          ? context.t.text('recovery.emailChangeCancelled', { pending: changed.cancelled, address: email.address })
          : context.t.text('recovery.emailUnchanged')
        : email?.pending ? context.t.text('recovery.emailSentPending', { pending: email.pending, address: email.address })
        : changed.cancelled !== null ? context.t.text('recovery.emailSentChangeCancelled', { pending: changed.cancelled, address: email?.address ?? value })
        : context.t.text('recovery.emailSent', { address: email?.address ?? value });
      return sendPage(reply, emailSettingsPage(context, { ...state, ...shown, notice: words }));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      return sendPage(reply, emailSettingsPage(context, { ...state, ...await emailSettings(deps, signIn.user.id), errors: error.problems }), 400);
    }
  });

  // Cancelling keeps the verified address, so it asks no recent sign-in: it can take nothing away.
  app.post(EMAIL_CANCEL_PATH, { ...page, schema: { body: { type: 'object', properties: { _csrf: csrf } } } }, async (request, reply) => {
    verifyCsrf(request);
    const signIn = await requireSignIn(request, reply, EMAIL_SETTINGS_PATH);
    if (!signIn) return reply;
    const cancelled = await cancelEmailChange(deps, signIn.user.id);
    const shown = await emailSettings(deps, signIn.user.id);
    const { email } = shown;
    const context = await pageContext(request, reply);
    // A page left open says nothing of a change verified since (a borrowed session's, perhaps):
    // "cancelled" would have hidden that the address is now the new one.
    const notice = email ? context.t.text(cancelled ? 'recovery.emailCancelled' : 'recovery.emailNothingToCancel', { address: email.address }) : undefined;
    return sendPage(reply, emailSettingsPage(context, { mailEnabled: deps.mailer.enabled, ...shown, notice }));
  });

  // GET changes state here only as every mailed link does: the single-use token is the proof, and
  // a prefetch that spends it leaves the address unverified, never verified by someone else.
  app.get('/email/verify', { ...page, schema: { querystring: tokenQuery } }, async (request: FastifyRequest<{ Querystring: { token?: string } }>, reply) => {
    const signIn = await currentSignIn(request).catch(() => undefined);
    const verified = await verifyEmail(deps, request.query.token ?? '', { origin: eventOrigin(request), signedInUserId: signIn?.user.id });
    return sendPage(reply, emailVerifiedPage(await pageContext(request, reply), verified), verified === 'verified' ? 200 : 400);
  });

  // "Not you?" of a verification mail: GET says what refusing does and changes nothing (a mail
  // scanner opens links); the POST refuses, and gives this browser the mailbox pass.
  app.get(EMAIL_REFUSE_PATH, { ...page, schema: { querystring: tokenQuery } }, async (request: FastifyRequest<{ Querystring: { token?: string } }>, reply) => {
    const token = request.query.token ?? '';
    const found = await findVerificationLink(deps, token);
    const context = await pageContext(request, reply);
    if (!found) return sendPage(reply, refuseEmailPage(context, { state: 'invalid' }), 400);
    // Refused already (a reload, the mail opened again): it says so, not what refusing would do.
    if (found.refused) return sendPage(reply, refuseEmailPage(context, { state: 'refused' }));
    return sendPage(reply, refuseEmailPage(context, { state: 'ask', token, ...found }));
  });

  app.post(EMAIL_REFUSE_PATH, { ...page, schema: { body: { type: 'object', properties: { token: TYPED_FIELD, _csrf: csrf } } } }, async (request: FastifyRequest<{ Body: { token?: string } }>, reply) => {
    verifyCsrf(request);
    const refused = await refuseEmailLink(deps, request.body.token ?? '', request.id);
    const context = await pageContext(request, reply);
    if (!refused.ok && refused.reason === 'invalid') return sendPage(reply, refuseEmailPage(context, { state: 'invalid' }), 400);
    // The language picker goes on to the e-mail settings, where the page says to save the address:
    // back to this path without its token would say the link is not valid.
    const settingsNext = { ...context, path: EMAIL_SETTINGS_PATH };
    // Sent again (a second click, the page reloaded): nothing was done again, and no new pass given.
    if (!refused.ok) return sendPage(reply, refuseEmailPage(settingsNext, { state: 'refused' }));
    setMailboxPassCookie(request, reply, refused.pass, MAILBOX_PASS_MS / 1000);
    return sendPage(reply, refuseEmailPage(settingsNext, { state: 'done', address: refused.address, released: refused.released }));
  });

  const forgotState = () => ({ mailEnabled: deps.mailer.enabled, minutes: RESET_LINK_MS / 60_000 });

  app.get('/password/forgot', page, async (request, reply) =>
    sendPage(reply, forgotPasswordPage(await pageContext(request, reply), forgotState())));

  app.post('/password/forgot', { ...page, schema: { body: { type: 'object', properties: { login: TYPED_FIELD, _csrf: csrf } } } }, async (request: FastifyRequest<{ Body: { login?: string } }>, reply) => {
    verifyCsrf(request);
    const context = await pageContext(request, reply);
    if (!deps.mailer.enabled) return sendPage(reply, forgotPasswordPage(context, forgotState()));
    const login = request.body.login ?? '';
    // Sent back as typed, to be mended: the field's maxlength does not cut a value the page fills in.
    if (login.length > LOGIN_MAX_LENGTH) return sendPage(reply, forgotPasswordPage(context, { ...forgotState(), login, errors: [loginTooLong('login', LOGIN_MAX_LENGTH)] }), 400);
    // The same page, status and words whatever `login` names (no account enumeration).
    const outcome = await requestPasswordReset(deps, login, attemptOrigin(request), context.t.locale);
    if (!outcome.ok) {
      reply.headers(throttledHeaders('password-reset', outcome.retryAfterSeconds));
      return sendPage(reply, forgotPasswordPage(context, { ...forgotState(), login, errors: tryAgain('login', 'recovery.throttled', outcome.retryAfterSeconds) }), 429);
    }
    // Who `login` names is looked up and mailed after the answer has gone, so its timing is the
    // same whether or not an account exists (INTERFACE section 12).
    deps.background.run('password reset mail', outcome.mailLinks, answered(reply), request.log);
    return sendPage(reply, forgotPasswordPage(context, { ...forgotState(), sent: true }));
  });

  app.get(RESET_PASSWORD_PATH, { ...page, schema: { querystring: tokenQuery } }, async (request: FastifyRequest<{ Querystring: { token?: string } }>, reply) => {
    const token = request.query.token ?? '';
    const found = await findResetLink(deps, token);
    const context = await pageContext(request, reply);
    if (!found) return sendPage(reply, resetPasswordPage(context, { token: undefined }), 400);
    return sendPage(reply, resetPasswordPage(context, { token, username: found.user.username, needsCode: found.needsCode }));
  });

  const resetBody = { type: 'object', properties: { token: TYPED_FIELD, password: field(1024), code: field(64), username: field(256), _csrf: csrf } } as const;
  app.post(RESET_PASSWORD_PATH, { ...page, schema: { body: resetBody } }, async (request: FastifyRequest<{ Body: { token?: string; password?: string; code?: string } }>, reply) => {
    verifyCsrf(request);
    const token = request.body.token ?? '';
    const outcome = await resetPassword(deps, { token, password: request.body.password ?? '', code: request.body.code ?? '' }, attemptOrigin(request));
    const answer = await pageContext(request, reply);
    if (outcome.ok) {
      // The browser that reset the password proved the mailbox (and the second step): it keeps
      // its own sign-in attempts from now on, so failures someone else piles on the account do
      // not keep its owner out right after recovering it (INTERFACE section 4).
      setDeviceCookie(request, reply, await deps.deviceCookies.afterSignIn(deviceCookie(request), accountKey(outcome.user.username)));
      // The language picker goes on to sign-in, which the page asks for: the link is spent.
      return sendPage(reply, passwordResetDonePage({ ...answer, path: '/login' }));
    }
    if (outcome.reason === 'invalid_link') return sendPage(reply, resetPasswordPage(answer, { token: undefined }), 400);
    // The form again: the language picker comes back to the link, which still works, not to a
    // GET without its token ("the link is used, expired or invalid").
    const context = { ...answer, path: `${RESET_PASSWORD_PATH}?${new URLSearchParams({ token })}` };
    const found = await findResetLink(deps, token);
    const state = { token, username: found?.user.username ?? '', needsCode: found?.needsCode ?? false };
    if (outcome.reason === 'throttled') {
      reply.headers(throttledHeaders('sign-in', outcome.retryAfterSeconds));
      return sendPage(reply, resetPasswordPage(context, { ...state, errors: tryAgain('code', 'recovery.throttled', outcome.retryAfterSeconds) }), 429);
    }
    return sendPage(reply, resetPasswordPage(context, { ...state, errors: outcome.problems }), 400);
  });
}
