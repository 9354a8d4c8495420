/**
 * Account settings (INTERFACE sections 1 and 10): profile (bio, avatar, downloading the account's
 * data, deleting the account),
 * personal API tokens, authorized applications and the user's own developer applications. Every
 * page needs a sign-in; every change is a POST with the CSRF token.
 *
 * Destructive actions ask first (issue 18 item 7): a POST without `confirm=yes` changes nothing
 * and answers a page that says what will happen, whose form repeats the request with it. A new
 * secret is made by a POST that redirects (post/redirect/get) to the page that shows it once; it
 * travels there sealed in a one-time row opened by a short-lived cookie (`core/one-time-secrets`).
 */
import { PassThrough } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { updateProfile } from '../../core/accounts/accounts.js';
import { listAuthorizedApplications, revokeAllApplicationAccess, revokeApplicationAccess } from '../../core/oauth/applications.js';
import { AVATAR_MAX_BYTES, AVATAR_UPLOADS_PER_HOUR, checkAvatarUpload } from '../../core/community/avatars.js';
import {
  deactivateClient, deletePreviousClientSecret, findOwnedClient, livePreviousSecret, registerClient, rotateClientSecret, setRequirePushedRequests, unreviewedNameRule, updateClientDetails,
  updateLogoutUris, updateRedirectUris,
} from '../../core/oauth/clients.js';
import { AccountUnusableError, InputError, OAuthError, type Words, checkAll } from '../../core/errors.js';
import { ONE_TIME_SECRET_MS, type OneTimeTarget, stashSecret, takeSecret } from '../../core/credentials/one-time-secrets.js';
import { checkPersonalTokenRequest, createPersonalToken, personalTokenCapRefusal } from '../../core/credentials/personal-tokens.js';
import { deleteAccount } from '../../core/accounts/account-deletion.js';
import { DATA_READER_MIN_RATE, DATA_READER_PATIENCE_MS, type DataFileSink, dataFileName, downloadAccountData } from '../../core/accounts/data-export.js';
import type { OwnerProofRefusal } from '../../core/accounts/owner-proof.js';
import { requiresSecondStep, secondFactorsOf } from '../../core/accounts/two-step.js';
import type { User } from '../../core/accounts/ports.js';
import type { Stores } from '../../core/stores.js';
import type { Client, ClientType } from '../../core/oauth/ports.js';
import type { SecurityEventKind } from '../../core/accounts/security-log.js';
import type { AuditEvent } from '../../core/audit.js';
import { isRecentSignIn } from '../../core/accounts/sessions.js';
import { confirmPassword, throttled } from '../../core/accounts/sign-in.js';
import { formatUtc } from '../../core/time.js';
import { siteNamesIn } from '../../core/site-name.js';
import type { Translator } from '../../core/locales.js';
import { throttledHeaders } from '../../core/rate-limit-fields.js';
import { taken } from '../reader-pace.js';
import { UNREADABLE_STATUS, fieldValues, noticeFrom, requireSignIn, requireUser, sendPage, signInAgainPath } from '../pages.js';
import { afterCommit } from '../logging.js';
import {
  attemptOrigin, deviceCookie, endSession, eventOrigin, pageContext, setDeviceCookie, setRevealCookie, takeRevealCookie, verifyCsrf,
} from '../plugins/session.js';
import {
  type ClientForm, type Confirmation, type FormError, type FormErrors, type ProfilePageState, accountDeletedPage, applicationsPage, clientPage, confirmationPage, deactivateConfirmation, deletePreviousSecretConfirmation,
  deleteAccountConfirmation, developersPage, profileSettingsPage, revokeAllConfirmation, revokeTokenConfirmation,
  rotateSecretConfirmation, rotationWords, tokensPage,
} from '../views/settings.js';
import { clientAddress } from '../client-address.js';
import { codesUnreadable, tryAgain } from './settings-problems.js';
import { PROFILE_SETTINGS_PATH } from '../../core/urls.js';
import { TYPED_FIELD } from '../typed-field.js';

const page = { config: { html: true } };
const form = (properties: Record<string, unknown>) => ({ body: { type: 'object', properties: { _csrf: TYPED_FIELD, ...properties } } });
const clientParams = { params: { type: 'object', properties: { clientId: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['clientId'] } };
/** What `?notice=` after a change says, in the catalogs' words. */
const NOTICES: Readonly<Record<string, Words>> = {
  revoked: { key: 'tokens.noticeRevoked' },
  'access-revoked': { key: 'apps.noticeAccessRevoked' },
  'all-access-revoked': { key: 'apps.noticeAllAccessRevoked' },
  avatar: { key: 'settings.noticeAvatar' },
  profile: { key: 'settings.noticeProfile' },
  registered: { key: 'apps.noticeRegistered' },
  details: { key: 'apps.noticeDetails' },
  uris: { key: 'apps.noticeUris' },
  'logout-uris': { key: 'apps.noticeLogoutUris' },
  'previous-secret-deleted': { key: 'apps.noticePreviousDeleted' },
  'pushed-requests': { key: 'apps.noticePushedRequests' },
  deactivated: { key: 'apps.noticeDeactivated' },
};

/** What `issueSecret`'s write made, and what it tells. */
interface Issued<T> {
  made: T;
  /** The secret, for the page that shows it once; none for a public app, which has no secret. */
  carry?: { target: OneTimeTarget; value: Record<string, string> } | undefined;
  /** The owner's security-log line; none for a registration, which the log does not list. */
  event?: { kind: SecurityEventKind; detail: Record<string, string> } | undefined;
  audit: AuditEvent;
}

/** Every field an `InputError` names, for a form to show; anything else is thrown on. */
function formErrors(error: unknown): readonly FormError[] {
  if (error instanceof InputError) return error.problems;
  throw error;
}

function lines(value: string): string[] {
  return value.split(/\r?\n/);
}

/** The pages' words for each refusal `confirmOwner` words in English (deleting the account, downloading its data). */
const PROOF_REFUSED: Readonly<Record<string, Words>> = {
  'that password is not right': { key: 'settings.passwordWrong' },
  'that code is not right, or was used already': { key: 'settings.codeWrong' },
  'enter your password to delete your account': { key: 'settings.deletePasswordMissing' },
  'enter your password to download your data': { key: 'settings.dataPasswordMissing' },
};

/** Whether a destructive action's form was the confirmation's (issue 18 item 7). */
function isConfirmed(body: unknown): boolean {
  return (body as { confirm?: unknown } | undefined)?.confirm === 'yes';
}

export async function settingsRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock, audit, images } = app.deps;
  // Multipart only here, for the avatar upload; the limits stop a large file before it is read.
  await app.register(multipart, { limits: { fileSize: AVATAR_MAX_BYTES, files: 1, fields: 5, fieldSize: 1024, parts: 6 } });
  // What a rotation did to the old secret depends on PREVIOUS_CLIENT_SECRET_HOURS.
  const notices = { ...NOTICES, rotated: rotationWords('apps.noticeRotated', app.deps.settings.previousClientSecretHours) };

  /**
   * Writes an event to the user's security log (issue 18 item 5), from this request's browser,
   * with the action's own audit event (`ownAudit`, for the kinds whose audit event their action writes).
   */
  const logEvent = (request: FastifyRequest, user: User, kind: SecurityEventKind, detail: Record<string, string>, ownAudit: AuditEvent) =>
    app.deps.securityLog.record({ userId: user.id, kind, origin: eventOrigin(request), detail }, ownAudit);

  /** A signed-in page: the user, or a redirect to sign in that comes back to `back`. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply, back: string): Promise<User | undefined> {
    return requireUser(request, reply, request.method === 'GET' ? request.url : back);
  }

  app.get('/settings', page, async (_request, reply) => reply.redirect(PROFILE_SETTINGS_PATH, 303));

  /** The page asking before a destructive action, in the reader's words; nothing changed yet. */
  const askFirst = async (request: FastifyRequest, reply: FastifyReply, confirmation: Confirmation | ((t: Translator) => Confirmation), status = 200) => {
    const context = await pageContext(request, reply);
    return sendPage(reply, confirmationPage(context, typeof confirmation === 'function' ? confirmation(context.t) : confirmation), status);
  };

  /**
   * Makes a new secret (`make`, writing through the transaction it is given) and seals it for the
   * page the redirect goes to, where it is shown once, in one transaction with the owner's
   * security-log line: the secret, its sealed copy and its line land together or not at all.
   * Written one after another, a failure between them (a statement timeout, a lost connection)
   * left a secret the app now had and no one was shown: a rotation's old secret ended, the
   * developer locked out of their own app. Once committed nothing may answer in place of the
   * redirect: the audit line and the notice mail follow, and a failure of theirs is logged, never
   * shown. `undefined` when `make` wrote nothing.
   */
  async function issueSecret<T>(request: FastifyRequest, reply: FastifyReply, user: User, make: (tx: Stores) => Promise<Issued<T> | undefined>): Promise<T | undefined> {
    const done = await stores.transaction(async (tx) => {
      const issued = await make(tx);
      if (!issued) return undefined;
      const { carry, event } = issued;
      const cookie = carry && await stashSecret(tx, clock, carry.target, carry.value);
      const announce = await app.deps.securityLog.recordAll(event ? [{ ...event, userId: user.id, origin: eventOrigin(request) }] : [], tx.securityEvents);
      return { issued, cookie, announce };
    });
    if (!done) return undefined;
    if (done.cookie !== undefined) setRevealCookie(request, reply, done.cookie, ONE_TIME_SECRET_MS / 1000);
    await afterCommit(request.log, 'a new secret was made and is shown to its owner, but its audit line or notice mail could not be written', { userId: user.id }, async () => {
      audit.record(done.issued.audit, request.id);
      await done.announce();
    });
    return done.issued.made;
  }

  /** The secret a redirect carried to this page, once; `undefined` on any later load. */
  function shownSecret(request: FastifyRequest, reply: FastifyReply, target: OneTimeTarget): Promise<Record<string, string> | undefined> {
    const cookie = takeRevealCookie(request, reply);
    return cookie === undefined ? Promise.resolve(undefined) : takeSecret(stores, clock, cookie, target);
  }

  // ---- Profile: avatar ----------------------------------------------------------------------

  const { siteTimeZone } = app.deps.settings;

  /** The profile page, its data form asking for a code too when two-step verification is on. */
  const profilePage = async (request: FastifyRequest, reply: FastifyReply, user: User, state: Omit<ProfilePageState, 'siteTimeZone' | 'twoStep'>, status = 200) =>
    sendPage(reply, profileSettingsPage(await pageContext(request, reply), user, { ...state, siteTimeZone, twoStep: await requiresSecondStep(stores, user.id) }), status);

  /**
   * The form problem and status of a refused `confirmOwner` (a throttled one's `Retry-After` set
   * on `reply`): the same for deleting the account and downloading its data.
   */
  const refusedProof = (request: FastifyRequest, reply: FastifyReply, user: User, refusal: OwnerProofRefusal): { error: FormError; status: number } => {
    if (refusal.reason === 'invalid') return { error: { field: refusal.field, message: refusal.message, words: PROOF_REFUSED[refusal.message] }, status: 400 };
    if (refusal.reason === 'unreadable') return { error: codesUnreadable(request, user.id, refusal), status: UNREADABLE_STATUS };
    app.deps.metrics.rateLimitRefusals.inc({ scope: 'password_confirm' });
    reply.header('retry-after', String(refusal.retryAfterSeconds));
    return { error: tryAgain('password', 'settings.tooManyAttempts', refusal.retryAfterSeconds), status: 429 };
  };

  app.get('/settings/profile', page, async (request, reply) => {
    const user = await signedIn(request, reply, '/settings/profile');
    if (!user) return reply;
    return profilePage(request, reply, user, { notice: noticeFrom(request, notices) });
  });

  type ProfileBody = Partial<Record<'bio' | 'nickname' | 'language' | 'time_zone', string>>;

  // One form saves the nickname, bio, language and time zone together; a field the form did not
  // send stays as it is. After the redirect the page is in the language just saved.
  app.post('/settings/profile', { ...page, schema: form({ bio: TYPED_FIELD, nickname: TYPED_FIELD, language: TYPED_FIELD, time_zone: TYPED_FIELD }) },
    async (request: FastifyRequest<{ Body: ProfileBody }>, reply) => {
      verifyCsrf(request);
      const user = await signedIn(request, reply, '/settings/profile');
      if (!user) return reply;
      const b = request.body;
      try {
        await updateProfile(stores, clock, user.id, { bio: b.bio, nickname: b.nickname, language: b.language, timeZone: b.time_zone });
        return reply.redirect('/settings/profile?notice=profile', 303);
      } catch (error) {
        const sent = {
          nickname: b.nickname ?? user.nickname, bio: b.bio ?? user.bio, language: b.language ?? user.language ?? '', timeZone: b.time_zone ?? user.timeZone ?? '',
        };
        return profilePage(request, reply, user, { errors: formErrors(error), form: sent }, 400);
      }
    });

  app.post('/settings/account/delete', { ...page, schema: form({ confirm: TYPED_FIELD, password: TYPED_FIELD, code: TYPED_FIELD }) },
    async (request: FastifyRequest<{ Body: { confirm?: string; password?: string; code?: string } }>, reply) => {
      verifyCsrf(request);
      const user = await signedIn(request, reply, '/settings/profile');
      if (!user) return reply;
      const facts = async (error?: FormError) => {
        const known = {
          totp: (await secondFactorsOf(stores, user.id)).totp,
          apps: (await stores.clients.listByOwner(user.id)).filter((c) => c.status === 'active'),
          publishedPosts: (await stores.posts.listPublishedByAuthor(user.id, 0, 1)).total,
          error,
        };
        return (t: Translator) => deleteAccountConfirmation(t, user, known);
      };
      if (!isConfirmed(request.body)) return askFirst(request, reply, await facts());
      const origin = attemptOrigin(request);
      const deleted = await deleteAccount(app.deps, user, { password: request.body.password ?? '', code: request.body.code ?? '' }, origin);
      if (!deleted.ok) {
        const { error, status } = refusedProof(request, reply, user, deleted);
        return askFirst(request, reply, await facts(error), status);
      }
      await endSession(request, reply);
      return reply.redirect('/settings/account/deleted', 303);
    });

  // A copy of the account's data (GDPR Art. 15 and 20), asked with the password as deleting it is:
  // a JSON file the browser saves, never kept by a cache.
  app.post('/settings/account/data', { ...page, schema: form({ password: TYPED_FIELD, code: TYPED_FIELD }) },
    async (request: FastifyRequest<{ Body: { password?: string; code?: string } }>, reply) => {
      verifyCsrf(request);
      const signIn = await requireSignIn(request, reply, '/settings/profile');
      if (!signIn) return reply;
      const { user } = signIn;
      // The file streams as it is read: its headers go with the first piece, and a failure after
      // them breaks the reply off, so the reader is left with a failed download, never a shorter
      // file that still parses as whole. (`file` is set in a callback: typed by `as`, or control
      // flow would take it for undefined for ever.)
      let file = undefined as PassThrough | undefined;
      // What the reader's pace is judged by (`DATA_READER_MIN_RATE`): bytes written since the file began.
      let began = 0;
      let written = 0;
      const sink: DataFileSink = {
        proven: (renewed) => { if (renewed !== undefined) setDeviceCookie(request, reply, renewed); },
        begin: async (exportedAt, announce) => {
          began = clock.now();
          file = new PassThrough();
          reply.type('application/json; charset=utf-8').header('cache-control', 'no-store')
            .header('content-disposition', `attachment; filename="${dataFileName(app.deps.settings.siteNames, app.deps.settings.baseUrl, user, exportedAt)}"`)
            .send(file);
          await afterCommit(request.log, 'a member\'s data is being downloaded, but its audit line could not be written', { userId: user.id }, announce);
        },
        write: (piece) => {
          written += Buffer.byteLength(piece);
          return taken(file!, piece, DATA_READER_PATIENCE_MS, () => (clock.now() - began > DATA_READER_PATIENCE_MS + (written / DATA_READER_MIN_RATE) * 1000
            ? `slower than ${DATA_READER_MIN_RATE} bytes a second` : undefined));
        },
      };
      try {
        const downloaded = await downloadAccountData(app.deps, user, { password: request.body.password ?? '', code: request.body.code ?? '' }, attemptOrigin(request), sink, signIn.session.idHash);
        if (!downloaded.ok) {
          const { error, status } = refusedProof(request, reply, user, downloaded);
          return profilePage(request, reply, user, { errors: error }, status);
        }
        if (!file!.destroyed) file!.end();
      } catch (error) {
        if (file === undefined) throw error;
        // Fastify logs the error and destroys the response (`sendStream`).
        file.destroy(error as Error);
      }
      return reply;
    });

  app.get('/settings/account/deleted', page, async (request, reply) => {
    const context = await pageContext(request, reply);
    // Only a browser with no sign-in can have just deleted its account.
    if (context.user) return reply.redirect('/settings/profile', 303);
    return sendPage(reply, accountDeletedPage(context));
  });

  app.post('/settings/profile/avatar', page, async (request, reply) => {
    let csrf = '';
    let image: Buffer | undefined;
    let problem: FormError | undefined;
    if (!request.isMultipart()) throw new OAuthError('invalid_request', 'The avatar form must be sent as multipart/form-data.');
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (part.fieldname === '_csrf' && typeof part.value === 'string') csrf = part.value;
        } else if (part.fieldname === 'avatar' && image === undefined) {
          image = await part.toBuffer();
        } else {
          await part.toBuffer();
        }
      }
    } catch (error) {
      const { code, statusCode } = error as { code?: string; statusCode?: number };
      if (code === 'FST_REQ_FILE_TOO_LARGE') {
        problem = { field: 'avatar', message: `the image must be at most ${AVATAR_MAX_BYTES / 1024} KB`, words: { key: 'settings.avatarTooLarge', values: { kilobytes: AVATAR_MAX_BYTES / 1024 } } };
      } else if (typeof statusCode === 'number') {
        throw error;
      } else {
        // The multipart parser throws plain errors for a body it cannot read (no boundary, a part
        // cut short): the sender's fault, answered 400 like any other malformed request.
        throw new OAuthError('invalid_request', 'The upload could not be read as multipart/form-data.', { status: 400, cause: error });
      }
    }
    request.body = { _csrf: csrf };
    verifyCsrf(request);
    const user = await signedIn(request, reply, '/settings/profile');
    if (!user) return reply;
    const now = clock.now();
    const decision = await app.deps.limiter.hit(`avatar:user:${user.id}`, AVATAR_UPLOADS_PER_HOUR, 3600, now);
    if (!decision.allowed) {
      const { retryAfterSeconds } = throttled(decision, now);
      app.deps.metrics.rateLimitRefusals.inc({ scope: 'avatar' });
      reply.headers(throttledHeaders('avatar', retryAfterSeconds));
      const errors = [tryAgain('avatar', 'settings.tooManyAvatars', retryAfterSeconds)];
      return profilePage(request, reply, user, { errors }, 429);
    }
    try {
      if (problem) throw InputError.of([problem]);
      const avatar = await checkAvatarUpload(image ?? new Uint8Array(), images);
      if (!(await stores.users.setAvatar(user.id, avatar.contentType, avatar.image, clock.now()))) throw new AccountUnusableError(`account "${user.username}" is not active; only an active account can have an avatar`);
      return reply.redirect('/settings/profile?notice=avatar', 303);
    } catch (error) {
      return profilePage(request, reply, user, { errors: formErrors(error) }, 400);
    }
  });

  // ---- API tokens ---------------------------------------------------------------------------

  app.get('/settings/tokens', page, async (request, reply) => {
    const user = await signedIn(request, reply, '/settings/tokens');
    if (!user) return reply;
    // Read before the token is taken: a read failing after it would lose the one showing it gets.
    const tokens = await stores.personalTokens.listForUser(user.id);
    const shown = await shownSecret(request, reply, { userId: user.id, purpose: 'personal_token', subject: '' });
    return sendPage(reply, tokensPage(await pageContext(request, reply), {
      tokens, now: clock.now(), notice: noticeFrom(request, notices), created: shown && { token: shown.token ?? '', name: shown.name ?? '' },
    }));
  });

  app.post('/settings/tokens', {
    ...page,
    schema: form({ name: TYPED_FIELD, scopes: { type: 'array', items: TYPED_FIELD }, expires_in_days: TYPED_FIELD, password: TYPED_FIELD }),
  }, async (request: FastifyRequest<{ Body: { name?: string; scopes?: string[]; expires_in_days?: string; password?: string } }>, reply) => {
    verifyCsrf(request);
    const user = await signedIn(request, reply, '/settings/tokens');
    if (!user) return reply;
    const body = request.body;
    const tokenForm = { name: body.name ?? '', scopes: fieldValues(body.scopes), expiresInDays: body.expires_in_days ?? '' };
    const answer = async (errors: FormErrors, status: number) => {
      const tokens = await stores.personalTokens.listForUser(user.id);
      return sendPage(reply, tokensPage(await pageContext(request, reply), { tokens, now: clock.now(), errors, form: tokenForm }), status);
    };
    const password = body.password ?? '';
    const days = tokenForm.expiresInDays === 'none' ? null
      : /^\d{1,4}$/.test(tokenForm.expiresInDays) ? Number(tokenForm.expiresInDays) : Number.NaN;
    // Every field at fault is named at once (issue 18 item 10); the password is tried only on a
    // form that could make a token, so a mistyped name, or an account at its tokens' cap or their
    // day's limit, never costs a password attempt.
    const full = await personalTokenCapRefusal(stores, user.id, clock.now());
    try {
      checkAll(
        () => { if (full) throw full; },
        () => checkPersonalTokenRequest({ name: tokenForm.name, scopes: tokenForm.scopes, expiresInDays: days }),
        () => { if (password === '') throw InputError.worded('password', 'enter your password to create a token', { key: 'tokens.passwordMissing' }); },
      );
    } catch (error) {
      return answer(formErrors(error), 400);
    }
    const confirmed = await confirmPassword(app.deps, user, password, { address: clientAddress(request), deviceCookie: deviceCookie(request), requestId: request.id });
    if (!confirmed.ok) {
      if (confirmed.reason === 'wrong') return answer({ field: 'password', message: 'that password is not right', words: { key: 'settings.passwordWrong' } }, 400);
      app.deps.metrics.rateLimitRefusals.inc({ scope: 'password_confirm' });
      reply.headers(throttledHeaders('sign-in', confirmed.retryAfterSeconds));
      return answer(tryAgain('password', 'settings.tooManyPasswords', confirmed.retryAfterSeconds), 429);
    }
    setDeviceCookie(request, reply, confirmed.deviceCookie);
    try {
      // The tokens' mark is read before the transaction: on SQLite its first read would wait behind it.
      await app.deps.tokenMarks.ready();
      // Post/redirect/get: reloading the page that shows the token makes no second one.
      await issueSecret(request, reply, user, async (tx) => {
        const { token, record } = await createPersonalToken(tx, clock, app.deps.tokenMarks, { userId: user.id, name: tokenForm.name, scopes: tokenForm.scopes, expiresInDays: days });
        return {
          made: record,
          carry: { target: { userId: user.id, purpose: 'personal_token', subject: '' }, value: { token, name: record.name } },
          event: { kind: 'personal_token.created', detail: { name: record.name, scope: record.scope } },
          audit: {
            audit: 'personal_token.created', userId: user.id, tokenId: record.id, scope: record.scope,
            expiresAt: record.expiresAt === null ? null : formatUtc(record.expiresAt), via: 'site', address: clientAddress(request),
          },
        };
      });
      app.deps.metrics.tokensIssued.inc({ kind: 'personal' });
      return reply.redirect('/settings/tokens', 303);
    } catch (error) {
      return answer(formErrors(error), 400);
    }
  });

  app.post('/settings/tokens/revoke', { ...page, schema: form({ token_id: TYPED_FIELD, confirm: TYPED_FIELD }) },
    async (request: FastifyRequest<{ Body: { token_id?: string; confirm?: string } }>, reply) => {
      verifyCsrf(request);
      const user = await signedIn(request, reply, '/settings/tokens');
      if (!user) return reply;
      const id = /^\d{1,10}$/.test(request.body.token_id ?? '') ? Number(request.body.token_id) : 0;
      const gone = () => new OAuthError('not_found', 'You have no live token with that id; it may have been revoked already.', { words: { key: 'tokens.gone' } });
      if (!isConfirmed(request.body)) {
        const token = (await stores.personalTokens.listForUser(user.id)).find((t) => t.id === id && t.revokedAt === null);
        if (!token) throw gone();
        return askFirst(request, reply, (t) => revokeTokenConfirmation(t, token));
      }
      if (!(await stores.personalTokens.revoke(id, user.id, clock.now()))) throw gone();
      app.deps.metrics.tokensRevoked.inc({ reason: 'revoked_by_user' });
      const revoked = (await stores.personalTokens.listForUser(user.id)).find((t) => t.id === id);
      await logEvent(request, user, 'personal_token.revoked', { name: revoked?.name ?? '' },
        { audit: 'personal_token.revoked', userId: user.id, tokenId: id, via: 'site', address: clientAddress(request) });
      return reply.redirect('/settings/tokens?notice=revoked', 303);
    });

  // ---- Authorized applications --------------------------------------------------------------

  app.get('/settings/applications', page, async (request, reply) => {
    const user = await signedIn(request, reply, '/settings/applications');
    if (!user) return reply;
    const apps = await listAuthorizedApplications(stores, user.id);
    return sendPage(reply, applicationsPage(await pageContext(request, reply), apps, { notice: noticeFrom(request, notices) }));
  });

  app.post('/settings/applications/revoke', { ...page, schema: form({ client_id: TYPED_FIELD }) },
    async (request: FastifyRequest<{ Body: { client_id?: string } }>, reply) => {
      verifyCsrf(request);
      const user = await signedIn(request, reply, '/settings/applications');
      if (!user) return reply;
      const clientId = request.body.client_id ?? '';
      const nothing = async () => sendPage(reply, applicationsPage(await pageContext(request, reply), await listAuthorizedApplications(stores, user.id), {
        error: { key: 'apps.nothingToRevoke' },
      }), 404);
      // INTERFACE section 10 fixes this form's fields (client_id and the CSRF field) for scripts, so
      // the page asks first on itself: the button that acts sits in a disclosure that says what
      // will happen (applicationsPage).
      const { found, grantsRevoked } = await revokeApplicationAccess(stores, clock, user.id, clientId);
      if (!found) return nothing();
      if (grantsRevoked > 0) app.deps.metrics.tokensRevoked.inc({ reason: 'consent_withdrawn' }, grantsRevoked);
      const client = await stores.clients.findById(request.body.client_id ?? '');
      await logEvent(request, user, 'app.access_withdrawn', { app: client?.name ?? '', client_id: client?.clientId ?? '' },
        { audit: 'consent.withdrawn', userId: user.id, clientId, grantsRevoked, via: 'site', address: clientAddress(request) });
      return reply.redirect('/settings/applications?notice=access-revoked', 303);
    });

  app.post('/settings/applications/revoke-all', { ...page, schema: form({ confirm: TYPED_FIELD }) },
    async (request: FastifyRequest<{ Body: { confirm?: string } }>, reply) => {
      verifyCsrf(request);
      const user = await signedIn(request, reply, '/settings/applications');
      if (!user) return reply;
      const apps = await listAuthorizedApplications(stores, user.id);
      if (!isConfirmed(request.body)) {
        if (apps.length === 0) return reply.redirect('/settings/applications', 303);
        return askFirst(request, reply, (t) => revokeAllConfirmation(t, apps));
      }
      for (const { clientId, grantsRevoked } of await revokeAllApplicationAccess(stores, clock, user.id)) {
        if (grantsRevoked > 0) app.deps.metrics.tokensRevoked.inc({ reason: 'consent_withdrawn' }, grantsRevoked);
        const client = apps.find((a) => a.client.clientId === clientId)?.client ?? await stores.clients.findById(clientId);
        await logEvent(request, user, 'app.access_withdrawn', { app: client?.name ?? '', client_id: clientId },
          { audit: 'consent.withdrawn', userId: user.id, clientId, grantsRevoked, via: 'site', address: clientAddress(request) });
      }
      return reply.redirect('/settings/applications?notice=all-access-revoked', 303);
    });

  // ---- Developer applications ---------------------------------------------------------------

  app.get('/settings/developers', page, async (request, reply) => {
    const user = await signedIn(request, reply, '/settings/developers');
    if (!user) return reply;
    return sendPage(reply, developersPage(await pageContext(request, reply), await stores.clients.listByOwner(user.id), {}));
  });

  app.post('/settings/developers', {
    ...page,
    schema: form({ name: TYPED_FIELD, description: TYPED_FIELD, homepage: TYPED_FIELD, redirect_uris: TYPED_FIELD, type: TYPED_FIELD, post_logout_redirect_uris: TYPED_FIELD, backchannel_logout_uri: TYPED_FIELD }),
  }, async (request: FastifyRequest<{ Body: Partial<Record<'name' | 'description' | 'homepage' | 'redirect_uris' | 'type' | 'post_logout_redirect_uris' | 'backchannel_logout_uri', string>> }>, reply) => {
    verifyCsrf(request);
    const user = await signedIn(request, reply, '/settings/developers');
    if (!user) return reply;
    const b = request.body;
    const clientForm: ClientForm = {
      name: b.name ?? '', description: b.description ?? '', homepage: b.homepage ?? '', redirectUris: b.redirect_uris ?? '', type: b.type ?? '',
      postLogoutRedirectUris: b.post_logout_redirect_uris ?? '', backchannelLogoutUri: b.backchannel_logout_uri ?? '',
    };
    // Nobody at the site answers for a member's app: its name may not claim the site's trust.
    const nameRule = await unreviewedNameRule(siteNamesIn(app.deps.words));
    try {
      // Post/redirect/get: the app's page shows the secret once; reloading it registers nothing.
      const client = (await issueSecret(request, reply, user, async (tx) => {
        const { client, secret } = await registerClient(tx, clock, {
          name: clientForm.name, description: clientForm.description, homepageUrl: clientForm.homepage,
          redirectUris: lines(clientForm.redirectUris), type: clientForm.type as ClientType, ownerId: user.id, memberRegistered: true, nameRule,
          postLogoutRedirectUris: lines(clientForm.postLogoutRedirectUris), backchannelLogoutUri: clientForm.backchannelLogoutUri,
        });
        return {
          made: client,
          carry: secret === undefined ? undefined : { target: { userId: user.id, purpose: 'client_secret', subject: client.clientId }, value: { secret } },
          audit: { audit: 'client.registered', clientId: client.clientId, ownerId: user.id, type: client.type, via: 'site', address: clientAddress(request) },
        };
      }))!;
      return reply.redirect(`/settings/developers/${encodeURIComponent(client.clientId)}?notice=registered`, 303);
    } catch (error) {
      const errors = formErrors(error);
      return sendPage(reply, developersPage(await pageContext(request, reply), await stores.clients.listByOwner(user.id), { form: clientForm, errors }), 400);
    }
  });

  /** The user's own client, or a 404 page: another owner's app looks like no app at all. */
  async function ownClient(user: User, clientId: string) {
    const client = await findOwnedClient(stores, user.id, clientId);
    if (!client) throw new OAuthError('not_found', 'You have no application with that client ID.', { words: { key: 'apps.noSuchApp' } });
    return client;
  }

  type ClientRequest<B = unknown> = FastifyRequest<{ Params: { clientId: string }; Body: B }>;

  /**
   * What every form on an app's page does first: the CSRF check, the sign-in, and the app, which
   * must be the user's; `undefined` once answered with a redirect to sign in. `base` is the page.
   * Every change to an app needs a recent sign-in (`isRecentSignIn`, GitHub's "sudo mode"): with
   * a session stolen an hour ago, a new redirect URI or a rotated secret would let its thief take
   * the codes of everyone who signs in to the app.
   */
  async function clientForm(request: ClientRequest, reply: FastifyReply): Promise<{ user: User; client: Client; base: string } | undefined> {
    verifyCsrf(request);
    const base = `/settings/developers/${encodeURIComponent(request.params.clientId)}`;
    const signIn = await requireSignIn(request, reply, base);
    if (!signIn) return undefined;
    const { user, session } = signIn;
    const client = await ownClient(user, request.params.clientId);
    if (!isRecentSignIn(session, clock.now())) {
      await reply.redirect(signInAgainPath(base), 303);
      return undefined;
    }
    return { user, client, base };
  }

  /** The answer to a change to a deactivated app: as read, or as a write conditional on its being active found it. */
  const deactivatedApp = () => new OAuthError('invalid_request', 'A deactivated application cannot be changed.');

  /** The answer to a rotation of a public or deactivated app's secret: as read, or as the write conditional on both found it. */
  const noSecretToRotate = () => new OAuthError('invalid_request', 'Only an active confidential application has a secret to rotate.');

  function refuseUnlessActive(client: Client): void {
    if (client.status !== 'active') throw deactivatedApp();
  }

  /**
   * An owner's save on an app's page, in the security log (named `name`) and the audit log
   * (`event`), when it holds other values than `client` held when its form was read: a save of the
   * same values changes nothing, and is no event (attack92).
   */
  async function recordAppChange(request: FastifyRequest, user: User, client: Client, saved: Partial<Client>,
    event: Extract<AuditEvent, { audit: SecurityEventKind }>, name = client.name): Promise<void> {
    if (!Object.entries(saved).some(([field, value]) => JSON.stringify(value) !== JSON.stringify(client[field as keyof Client]))) return;
    await logEvent(request, user, event.audit, { app: name, client_id: client.clientId }, event);
  }

  /** What every app page shows from the settings. */
  const clientPageSettings = { issuer: app.deps.settings.baseUrl, keepPreviousSecretHours: app.deps.settings.previousClientSecretHours };

  app.get('/settings/developers/:clientId', { ...page, schema: clientParams }, async (request: ClientRequest, reply) => {
    const signIn = await requireSignIn(request, reply, '/settings/developers');
    if (!signIn) return reply;
    const { user, session } = signIn;
    const client = await ownClient(user, request.params.clientId);
    const shown = await shownSecret(request, reply, { userId: user.id, purpose: 'client_secret', subject: client.clientId });
    return sendPage(reply, clientPage(await pageContext(request, reply), client, {
      ...clientPageSettings, secret: shown?.secret,
      notice: noticeFrom(request, notices),
      signInAgain: isRecentSignIn(session, clock.now()) ? undefined : signInAgainPath(request.url),
    }));
  });

  app.post('/settings/developers/:clientId/details', { ...page, schema: { ...clientParams, ...form({ name: TYPED_FIELD, description: TYPED_FIELD, homepage: TYPED_FIELD }) } },
    async (request: ClientRequest<{ name?: string; description?: string; homepage?: string }>, reply) => {
      const form = await clientForm(request, reply);
      if (!form) return reply;
      const { user, client, base } = form;
      refuseUnlessActive(client);
      const sent = { name: request.body.name ?? '', description: request.body.description ?? '', homepage: request.body.homepage ?? '' };
      try {
        const details = await updateClientDetails(stores, clock, client, { name: sent.name, description: sent.description, homepageUrl: sent.homepage },
          await unreviewedNameRule(siteNamesIn(app.deps.words)));
        if (!details) throw deactivatedApp();
        await recordAppChange(request, user, client, details,
          { audit: 'client.details_changed', clientId: client.clientId, ownerId: user.id, via: 'site', address: clientAddress(request) }, details.name);
        return reply.redirect(`${base}?notice=details`, 303);
      } catch (error) {
        return sendPage(reply, clientPage(await pageContext(request, reply), client, { ...clientPageSettings, errors: formErrors(error), details: sent }), 400);
      }
    });

  app.post('/settings/developers/:clientId/redirect-uris', { ...page, schema: { ...clientParams, ...form({ redirect_uris: TYPED_FIELD }) } },
    async (request: ClientRequest<{ redirect_uris?: string }>, reply) => {
      const form = await clientForm(request, reply);
      if (!form) return reply;
      const { user, client, base } = form;
      refuseUnlessActive(client);
      try {
        const redirectUris = await updateRedirectUris(stores, clock, client, lines(request.body.redirect_uris ?? ''));
        if (!redirectUris) throw deactivatedApp();
        await recordAppChange(request, user, client, { redirectUris },
          { audit: 'client.redirect_uris_changed', clientId: client.clientId, ownerId: user.id, redirectUris, via: 'site', address: clientAddress(request) });
        return reply.redirect(`${base}?notice=uris`, 303);
      } catch (error) {
        return sendPage(reply, clientPage(await pageContext(request, reply), client, {
          ...clientPageSettings, errors: formErrors(error), redirectUris: request.body.redirect_uris ?? '',
        }), 400);
      }
    });

  app.post('/settings/developers/:clientId/logout-uris', {
    ...page, schema: { ...clientParams, ...form({ post_logout_redirect_uris: TYPED_FIELD, backchannel_logout_uri: TYPED_FIELD }) },
  }, async (request: ClientRequest<{ post_logout_redirect_uris?: string; backchannel_logout_uri?: string }>, reply) => {
    const form = await clientForm(request, reply);
    if (!form) return reply;
    const { user, client, base } = form;
    refuseUnlessActive(client);
    const sent = { postLogoutRedirectUris: request.body.post_logout_redirect_uris ?? '', backchannelLogoutUri: request.body.backchannel_logout_uri ?? '' };
    try {
      const saved = await updateLogoutUris(stores, clock, client, { postLogoutRedirectUris: lines(sent.postLogoutRedirectUris), backchannelLogoutUri: sent.backchannelLogoutUri });
      if (!saved) throw deactivatedApp();
      await recordAppChange(request, user, client, saved,
        { audit: 'client.logout_uris_changed', clientId: client.clientId, ownerId: user.id, ...saved, via: 'site', address: clientAddress(request) });
      return reply.redirect(`${base}?notice=logout-uris`, 303);
    } catch (error) {
      return sendPage(reply, clientPage(await pageContext(request, reply), client, { ...clientPageSettings, errors: formErrors(error), logout: sent }), 400);
    }
  });

  app.post('/settings/developers/:clientId/pushed-requests', {
    ...page, schema: { ...clientParams, ...form({ require_pushed_authorization_requests: TYPED_FIELD }) },
  }, async (request: ClientRequest<{ require_pushed_authorization_requests?: string }>, reply) => {
    const form = await clientForm(request, reply);
    if (!form) return reply;
    const { user, client, base } = form;
    refuseUnlessActive(client);
    // An unticked checkbox is not sent at all (HTML forms): absent is "not required".
    const required = request.body.require_pushed_authorization_requests === '1';
    if (!(await setRequirePushedRequests(stores, clock, client.clientId, required))) throw deactivatedApp();
    await recordAppChange(request, user, client, { requirePushedAuthorizationRequests: required },
      { audit: 'client.pushed_requests_changed', clientId: client.clientId, ownerId: user.id, required, via: 'site', address: clientAddress(request) });
    return reply.redirect(`${base}?notice=pushed-requests`, 303);
  });

  app.post('/settings/developers/:clientId/rotate-secret', { ...page, schema: { ...clientParams, ...form({ confirm: TYPED_FIELD }) } },
    async (request: ClientRequest<{ confirm?: string }>, reply) => {
      const form = await clientForm(request, reply);
      if (!form) return reply;
      const { user, client, base } = form;
      if (client.status !== 'active' || client.type !== 'confidential') throw noSecretToRotate();
      if (!isConfirmed(request.body)) return askFirst(request, reply, (t) => rotateSecretConfirmation(t, client, app.deps.settings.previousClientSecretHours));
      const rotated = await issueSecret(request, reply, user, async (tx) => {
        const secret = await rotateClientSecret(tx, clock, client.clientId, app.deps.settings.previousClientSecretHours);
        return secret === undefined ? undefined : {
          made: true,
          carry: { target: { userId: user.id, purpose: 'client_secret', subject: client.clientId }, value: { secret } },
          event: { kind: 'client_secret.rotated', detail: { app: client.name, client_id: client.clientId } },
          audit: { audit: 'client.secret_rotated', clientId: client.clientId, ownerId: user.id, via: 'site', address: clientAddress(request) },
        };
      });
      if (!rotated) throw noSecretToRotate();
      return reply.redirect(`${base}?notice=rotated`, 303);
    });

  app.post('/settings/developers/:clientId/delete-previous-secret', { ...page, schema: { ...clientParams, ...form({ confirm: TYPED_FIELD }) } },
    async (request: ClientRequest<{ confirm?: string }>, reply) => {
      const form = await clientForm(request, reply);
      if (!form) return reply;
      const { user, client, base } = form;
      refuseUnlessActive(client);
      // Already gone (deleted, or past its 7 days): nothing to ask, and the page says it is gone.
      if (livePreviousSecret(client, clock.now()) === null) return reply.redirect(`${base}?notice=previous-secret-deleted`, 303);
      if (!isConfirmed(request.body)) return askFirst(request, reply, (t) => deletePreviousSecretConfirmation(t, client));
      if (await deletePreviousClientSecret(stores, clock, client.clientId)) {
        await logEvent(request, user, 'client_secret.previous_deleted', { app: client.name, client_id: client.clientId },
          { audit: 'client.previous_secret_deleted', clientId: client.clientId, ownerId: user.id, via: 'site', address: clientAddress(request) });
      } else if ((await stores.clients.findById(client.clientId))?.status !== 'active') {
        // Nothing written, and not because the secret was gone already: staff deactivated the app meanwhile.
        throw deactivatedApp();
      }
      return reply.redirect(`${base}?notice=previous-secret-deleted`, 303);
    });

  app.post('/settings/developers/:clientId/deactivate', { ...page, schema: { ...clientParams, ...form({ confirm: TYPED_FIELD }) } },
    async (request: ClientRequest<{ confirm?: string }>, reply) => {
      const form = await clientForm(request, reply);
      if (!form) return reply;
      const { user, client, base } = form;
      if (client.status === 'active') {
        if (!isConfirmed(request.body)) return askFirst(request, reply, (t) => deactivateConfirmation(t, client));
        await deactivateClient(stores, clock, client.clientId);
        app.deps.metrics.tokensRevoked.inc({ reason: 'client_deactivated' });
        await logEvent(request, user, 'client.deactivated', { app: client.name, client_id: client.clientId },
          { audit: 'client.deactivated', clientId: client.clientId, ownerId: user.id, via: 'site', address: clientAddress(request) });
      }
      return reply.redirect(`${base}?notice=deactivated`, 303);
    });
}
