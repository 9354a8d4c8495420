/**
 * GET, POST /settings/security (INTERFACE section 11, issue 18 items 1–5): password change,
 * two-step verification, passkeys, signed-in sessions and the security log. Every change is a
 * POST of a form with the CSRF token and an `action` naming it, handled by one entry of
 * `ACTIONS`; the one JSON answer is the passkey registration options the page's script asks for.
 */
import { endOtherSignInSessions, endSignInSession } from '../../core/oidc/logout/events.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InputError, type Words } from '../../core/errors.js';
import type { Session, User } from '../../core/accounts/ports.js';
import { changePassword } from '../../core/accounts/password-change.js';
import { acceptedCredentials, checkPasskeyName, passkeyCapRefusal, passkeyRef, registerPasskey, registrationOptions, unknownCredentialOf } from '../../core/accounts/passkeys.js';
import type { EventOrigin, NewSecurityEvent } from '../../core/accounts/security-log.js';
import {
  type CodeCheck, beginTotpEnrolment, confirmTotpEnrolment, disableTotp, pendingTotpEnrolment, regenerateRecoveryCodes, secondFactorsOf,
} from '../../core/accounts/two-step.js';
import { describeUserAgent } from '../../core/accounts/user-agent.js';
import type { AttemptOrigin } from '../../core/accounts/sign-in.js';
import { isRecentSignIn } from '../../core/accounts/sessions.js';
import { throttledHeaders } from '../../core/rate-limit-fields.js';
import { PASSKEY_OPTIONS_LIMITED, PASSKEY_OPTIONS_PER_MINUTE } from './sign-in.js';
import { UNREADABLE_STATUS, noticeFrom, requireSignIn, sendPage, signInAgainPath } from '../pages.js';
import { codesUnreadable, tryAgain } from './settings-problems.js';
import { attemptOrigin, currentSignIn, endSession, pageContext, requestLocale, rotateSession, setDeviceCookie, userAgent, verifyCsrf } from '../plugins/session.js';
import { SECURITY_LOG_PAGE_SIZE, type SecurityPageState, securityPage } from '../views/security.js';
import type { FormError } from '../views/settings.js';
import { sentence, sentences } from '../views/forms.js';
import { problemText } from '../views/words.js';

const PATH = '/settings/security';
const page = { config: { html: true } };
const text = { type: 'string', maxLength: 20_000 } as const;

type Body = Partial<Record<'action' | 'current_password' | 'new_password' | 'code' | 'name' | 'credential' | 'credential_id' | 'session', string>>;

/**
 * The name typed for a passkey, or, when none was, the word its field showed as placeholder, in
 * the page's language: a Chinese page's member is not given a passkey named "Passkey".
 */
function typedPasskeyName(request: FastifyRequest, typed: string): string {
  return typed.trim() === '' ? request.server.deps.words(requestLocale(request)).text('security.passkeyPlaceholder') : typed;
}

/**
 * What is wrong with the name typed for a new passkey, in the words its field shows on the page
 * (`fieldMessage`), or `undefined` for a name the form takes: the page's script asks before the
 * device makes a passkey, which a refused name would leave on it.
 */
function passkeyNameProblem(request: FastifyRequest, typed: string): string | undefined {
  try {
    checkPasskeyName(typedPasskeyName(request, typed));
    return undefined;
  } catch (error) {
    return problemWords(request, error);
  }
}

/** An `InputError`'s problems in the page's words, as one text; anything else is thrown again. */
function problemWords(request: FastifyRequest, error: unknown): string {
  if (!(error instanceof InputError)) throw error;
  const t = request.server.deps.words(requestLocale(request));
  return sentences(error.problems.map((p) => sentence(problemText(t, p))));
}

/** What `?notice=` after a change says, in the catalogs' words. */
const NOTICES: Readonly<Record<string, Words>> = {
  password: { key: 'security.noticePassword' },
  'totp-off': { key: 'security.noticeTotpOff' },
  'passkey-added': { key: 'security.noticePasskeyAdded' },
  'passkey-renamed': { key: 'security.noticePasskeyRenamed' },
  'passkey-removed': { key: 'security.noticePasskeyRemoved' },
  'signed-out': { key: 'security.noticeSignedOut' },
  'signed-out-others': { key: 'security.noticeSignedOutOthers' },
};

/** The changes that need a recent sign-in (`isRecentSignIn`): each could lock the owner out, or let someone in later. */
const NEEDS_RECENT_SIGN_IN = new Set(['totp-start', 'totp-confirm', 'totp-disable', 'recovery-codes', 'passkey-add', 'passkey-remove']);
/** Where a stale session goes to sign in again, and comes back from. */
const SIGN_IN_AGAIN = signInAgainPath(PATH);

/** What a POST handler gets: the signed-in user and session, the form, and how to answer. */
interface ActionContext {
  request: FastifyRequest<{ Body: Body }>;
  reply: FastifyReply;
  user: User;
  session: Session;
  body: Body;
  origin: AttemptOrigin & EventOrigin;
  /** The page again with `state` (an error, enrolment, codes) and `status`. */
  render(state: Partial<SecurityPageState>, status: number): Promise<FastifyReply>;
  /** Back to the page with a notice (post/redirect/get). */
  done(notice: keyof typeof NOTICES): FastifyReply;
  /**
   * Writes the change's security-log line (and its notice), after the change committed. A line that
   * cannot be written is the operators' error line, not the member's error page: the page answers
   * what was done, and new recovery codes, shown once, are not lost behind a 500. Its notice is
   * mailed all the same (`SecurityLog.record`).
   */
  record(event: Omit<NewSecurityEvent, 'userId' | 'origin'>): Promise<void>;
}

/** The answer to a code that was wrong, throttled or could not be checked, in the two-step section. */
function codeRefused(ctx: ActionContext, checked: Exclude<CodeCheck, { ok: true }>): Promise<FastifyReply> {
  if (checked.reason === 'unreadable') return ctx.render({ errors: codesUnreadable(ctx.request, ctx.user.id, checked) }, UNREADABLE_STATUS);
  if (checked.reason === 'throttled') {
    ctx.reply.headers(throttledHeaders('sign-in', checked.retryAfterSeconds));
    return ctx.render({ errors: tryAgain('code', 'security.tooManyCodes', checked.retryAfterSeconds) }, 429);
  }
  return ctx.render({ errors: { field: 'code', message: 'that code is not right, or was used already; codes change every 30 seconds', words: { key: 'security.codeWrong' } } }, 400);
}

async function qrDataUri(uri: string): Promise<string> {
  // qrcode is loaded on the first enrolment page, not at start (docs/performance.md, decision 19).
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

const ACTIONS: Record<string, (ctx: ActionContext) => Promise<FastifyReply>> = {
  async 'change-password'(ctx) {
    const { request, reply, user, session, body } = ctx;
    const result = await changePassword(request.server.deps, user, { current: body.current_password ?? '', next: body.new_password ?? '' }, ctx.origin, session.idHash);
    // The right current password renews the device cookie as a sign-in does, so the wrong ones
    // typed before it stop counting against this browser (INTERFACE section 4), as the personal
    // token form's password does.
    if ('deviceCookie' in result && result.deviceCookie !== undefined) setDeviceCookie(request, reply, result.deviceCookie);
    if (result.ok) {
      // A session id that leaked before the change is worth nothing after it.
      await rotateSession(request, reply, { session, user });
      return ctx.done('password');
    }
    if (result.reason === 'invalid') return ctx.render({ errors: result.problems }, 400);
    reply.headers(throttledHeaders('sign-in', result.retryAfterSeconds));
    return ctx.render({ errors: tryAgain('current_password', 'settings.tooManyPasswords', result.retryAfterSeconds) }, 429);
  },

  async 'totp-start'(ctx) {
    const enrolment = await beginTotpEnrolment(ctx.request.server.deps, ctx.user);
    if (!enrolment) return ctx.render({ errors: { field: 'code', message: 'two-step verification is already on', words: { key: 'security.alreadyOn' } } }, 409);
    return ctx.render({ enrolment: { ...enrolment, qr: await qrDataUri(enrolment.uri) } }, 200);
  },

  async 'totp-confirm'(ctx) {
    const deps = ctx.request.server.deps;
    try {
      const recoveryCodes = await confirmTotpEnrolment(deps, ctx.user, ctx.body.code ?? '');
      await ctx.record({ kind: 'totp.enabled' });
      return ctx.render({ recoveryCodes }, 200);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      const pending = await pendingTotpEnrolment(deps, ctx.user);
      return ctx.render({
        errors: error.problems.map((p) => ({ ...p, field: 'code' })),
        ...(pending ? { enrolment: { ...pending, qr: await qrDataUri(pending.uri) } } : {}),
      }, 400);
    }
  },

  async 'totp-disable'(ctx) {
    const checked = await disableTotp(ctx.request.server.deps, ctx.user, ctx.body.code ?? '', ctx.origin);
    if (!checked.ok) return codeRefused(ctx, checked);
    await ctx.record({ kind: 'totp.disabled', detail: { method: checked.method === 'totp' ? 'authenticator app code' : 'recovery code' } });
    return ctx.done('totp-off');
  },

  async 'recovery-codes'(ctx) {
    const result = await regenerateRecoveryCodes(ctx.request.server.deps, ctx.user, ctx.body.code ?? '', ctx.origin);
    if (!result.ok) return codeRefused(ctx, result);
    await ctx.record({ kind: 'recovery_codes.regenerated' });
    return ctx.render({ recoveryCodes: (result as { codes: string[] }).codes }, 200);
  },

  async 'passkey-add'(ctx) {
    const deps = ctx.request.server.deps;
    const credential = ctx.body.credential ?? '';
    // The form sent by Enter in its name field, or without script: no ceremony took place.
    if (!credential) return ctx.render({ errors: { field: 'passkey', message: 'no passkey came with the form: adding one needs a browser with passkeys and JavaScript', words: { key: 'security.passkeyNotSent' } }, sentPasskey: { name: ctx.body.name ?? '' } }, 400);
    // Refused, the passkey the device made is no account's: the page asks the browser to forget it.
    const refused = (errors: FormError[], unknownCredentialId: string | undefined) =>
      ctx.render({ errors, sentPasskey: { name: ctx.body.name ?? '', unknownCredentialId } }, 400);
    try {
      const added = await registerPasskey(deps, ctx.user, credential, typedPasskeyName(ctx.request, ctx.body.name ?? ''));
      if (!added.ok) {
        return refused([{ field: 'passkey', message: 'the passkey could not be verified; try adding it again', words: { key: 'security.passkeyNotVerified' } }], added.unknownCredentialId);
      }
      const { passkey } = added;
      await ctx.record({ kind: 'passkey.added', detail: { name: passkey.name, passkey_id: passkeyRef(passkey.credentialId) } });
      return ctx.done('passkey-added');
    } catch (error) {
      // A refused name (the response untried) or a passkey already stored, which this names not.
      if (error instanceof InputError) return refused(error.problems.map((p) => ({ ...p, field: p.field === 'name' ? 'name' : 'passkey' })), await unknownCredentialOf(deps, credential));
      throw error;
    }
  },

  async 'passkey-rename'(ctx) {
    let name: string;
    try {
      name = checkPasskeyName(typedPasskeyName(ctx.request, ctx.body.name ?? ''));
    } catch (error) {
      if (error instanceof InputError) return ctx.render({ errors: error.problems, sentPasskey: { credentialId: ctx.body.credential_id, name: ctx.body.name ?? '' } }, 400);
      throw error;
    }
    if (!(await ctx.request.server.deps.stores.passkeys.rename(ctx.user.id, ctx.body.credential_id ?? '', name))) {
      return ctx.render({ errors: { field: 'passkey', message: 'you have no passkey with that id', words: { key: 'security.noSuchPasskey' } } }, 404);
    }
    return ctx.done('passkey-renamed');
  },

  async 'passkey-remove'(ctx) {
    const removed = await ctx.request.server.deps.stores.passkeys.remove(ctx.user.id, ctx.body.credential_id ?? '');
    if (!removed) return ctx.render({ errors: { field: 'passkey', message: 'you have no passkey with that id; it may have been removed already', words: { key: 'security.noSuchPasskey' } } }, 404);
    await ctx.record({ kind: 'passkey.removed', detail: { name: removed.name, passkey_id: passkeyRef(removed.credentialId) } });
    return ctx.done('passkey-removed');
  },

  async 'session-sign-out'(ctx) {
    const { stores, clock } = ctx.request.server.deps;
    const target = ctx.body.session ?? '';
    if (target === ctx.session.idHash) {
      // This browser's own session: a sign-out, as at /logout.
      await endSession(ctx.request, ctx.reply);
      ctx.request.server.deps.audit.record({ audit: 'sign_out', userId: ctx.user.id, address: ctx.origin.address }, ctx.request.id);
      return ctx.reply.redirect('/', 303);
    }
    const sessions = await stores.sessions.listForUser(ctx.user.id, clock.now());
    // Only a session of this user's own list may be ended, and its apps are told (back-channel).
    const ended = sessions.find((s) => s.idHash === target);
    if (!ended || !(await endSignInSession(stores, clock, target))) {
      return ctx.render({ errors: { field: 'session', message: 'that session is not signed in any more', words: { key: 'security.noSuchSession' } } }, 404);
    }
    await ctx.record({ kind: 'session.signed_out', detail: { device: describeUserAgent(ended.userAgent) } });
    return ctx.done('signed-out');
  },

  async 'sign-out-others'(ctx) {
    const { stores, clock } = ctx.request.server.deps;
    const count = await stores.transaction((tx) => endOtherSignInSessions(tx, clock.now(), ctx.user.id, ctx.session.idHash));
    await ctx.record({ kind: 'sessions.signed_out_elsewhere', detail: { sessions: String(count) } });
    return ctx.done('signed-out-others');
  },
};

export async function securitySettingsRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.deps;

  async function render(request: FastifyRequest, reply: FastifyReply, user: User, session: Session, state: Partial<SecurityPageState>, status: number) {
    const query = request.query as { page?: unknown } | undefined;
    const requested = typeof query?.page === 'string' && /^\d{1,6}$/.test(query.page) ? Number(query.page) : 0;
    const [factors, passkeys, sessions] = await Promise.all([
      secondFactorsOf(stores, user.id),
      stores.passkeys.listForUser(user.id),
      stores.sessions.listForUser(user.id, clock.now()),
    ]);
    const events = await stores.securityEvents.listForUser(user.id, requested * SECURITY_LOG_PAGE_SIZE, SECURITY_LOG_PAGE_SIZE);
    const notice = noticeFrom(request, NOTICES);
    return sendPage(reply, securityPage(await pageContext(request, reply), {
      username: user.username, factors, passkeys, sessions, currentSession: session.idHash, events, logPage: requested, notice,
      acceptedCredentials: acceptedCredentials(app.deps, user.id, passkeys), ...state,
    }), status);
  }

  /** The signed-in user and session, or a redirect to sign in that comes back here. */
  const signedIn = (request: FastifyRequest, reply: FastifyReply) => requireSignIn(request, reply, request.method === 'GET' ? request.url : PATH);

  app.get(PATH, page, async (request, reply) => {
    const found = await signedIn(request, reply);
    if (!found) return reply;
    return render(request, reply, found.user, found.session, {}, 200);
  });

  app.post(PATH, {
    ...page,
    schema: { body: { type: 'object', properties: Object.fromEntries(['_csrf', 'action', 'current_password', 'new_password', 'code', 'name', 'credential', 'credential_id', 'session'].map((f) => [f, text])) } },
  }, async (request: FastifyRequest<{ Body: Body }>, reply) => {
    verifyCsrf(request);
    const found = await signedIn(request, reply);
    if (!found) return reply;
    const { user, session } = found;
    const action = request.body.action ?? '';
    // Own keys only: `constructor` or `__proto__` name no action.
    const handler = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
    if (handler && NEEDS_RECENT_SIGN_IN.has(action) && !isRecentSignIn(session, clock.now())) return reply.redirect(SIGN_IN_AGAIN, 303);
    const origin = attemptOrigin(request);
    const ctx: ActionContext = {
      request, reply, user, session, body: request.body, origin,
      // Its problems are marked on this form only: others on the page have fields of the same name.
      render: (state, status) => render(request, reply, user, request.signIn?.session ?? session, { sentAction: action, ...state }, status),
      done: (notice) => reply.redirect(`${PATH}?notice=${notice}`, 303),
      record: (event) => app.deps.securityLog.record({ ...event, userId: user.id, origin }),
    };
    if (!handler) return ctx.render({ errors: { field: 'action', message: 'choose one of the buttons on this page', words: { key: 'security.unknownAction' } } as FormError }, 400);
    return handler(ctx);
  });

  // `name`, the new passkey's as typed, and the account's room for one are checked before any
  // challenge: refused, no passkey is made.
  app.post(`${PATH}/passkeys/options`, { ...page, schema: { body: { type: 'object', properties: { _csrf: text, name: text } } } }, async (request: FastifyRequest<{ Body: { name?: string } }>, reply) => {
    verifyCsrf(request);
    const found = await currentSignIn(request);
    if (!found) return reply.code(401).header('cache-control', 'no-store').send({ error: 'sign_in_required', error_description: 'Sign in to add a passkey.' });
    if (!isRecentSignIn(found.session, clock.now())) {
      return reply.code(401).header('cache-control', 'no-store').send({ error: 'sign_in_again', error_description: 'Sign in again to add a passkey: the sign-in is not recent enough.', location: SIGN_IN_AGAIN });
    }
    const nameProblem = request.body.name === undefined ? undefined : passkeyNameProblem(request, request.body.name);
    if (nameProblem !== undefined) return reply.code(400).header('cache-control', 'no-store').send({ error: 'invalid_request', error_description: nameProblem, field: 'name' });
    // An account at its passkeys' cap is told before the device's prompt, which would make a
    // passkey the form then refuses.
    const full = await passkeyCapRefusal(app.deps, found.user.id);
    if (full !== undefined) return reply.code(400).header('cache-control', 'no-store').send({ error: 'invalid_request', error_description: problemWords(request, full), field: 'passkey' });
    // Each stores a challenge: a signed-in user gets a bounded number.
    const decision = await app.deps.limiter.hit(`passkey-options:user:${found.user.id}`, PASSKEY_OPTIONS_PER_MINUTE, 60, clock.now());
    if (!decision.allowed) return reply.code(429).headers(throttledHeaders('passkey-options', 60)).header('cache-control', 'no-store').send(PASSKEY_OPTIONS_LIMITED);
    return reply.header('cache-control', 'no-store').send(await registrationOptions(app.deps, found.user));
  });
}
