/**
 * The staff console (INTERFACE section 14), under /admin, in a scope of its own whose first hook
 * is the gate: anyone who is not staff (signed out included) gets the site's not-found answer,
 * the same as for an address that does not exist; staff without two-step verification get the one
 * page asking them to turn it on. Every answer here is `no-store` and `noindex`.
 *
 * Every change is a POST with the CSRF field and a reason; it needs a sign-in within the last 15
 * minutes (else the sign-in page, which comes back to the page the form was on); a first POST
 * answers the page that says what will happen, and only its form (`confirm=yes`) changes
 * anything, through the core, which writes the staff log in the same transaction.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUserStatus } from '../../core/accounts/accounts.js';
import type { UserStatus } from '../../core/accounts/ports.js';
import { isRecentSignIn } from '../../core/accounts/sessions.js';
import { secondFactorsOf } from '../../core/accounts/two-step.js';
import { InputError, OAuthError } from '../../core/errors.js';
import { LOCALES, type Translator } from '../../core/locales.js';
import { listAuthorizedApplications } from '../../core/oauth/applications.js';
import { MAX_APPS_PER_OWNER, findClient, reactivationOverCap } from '../../core/oauth/clients.js';
import type { Client, VerifiedMark } from '../../core/oauth/ports.js';
import {
  changeAppStatus, changeMemberRole, changeMemberStatus, consoleAccess, endMemberSessions, resetMemberTwoStep, reviewedFrom, rotateKeysAsStaff,
  setAppVerified,
} from '../../core/staff/console.js';
import { overview } from '../../core/staff/figures.js';
import type { Role } from '../../core/staff/ports.js';
import { type Refusal, type StaffActor, type StaffMember, checkReason, isRole, refusalOnKeys, refusalOnMember, refusalOnRole } from '../../core/staff/staff.js';
import { lookAlikeCheck } from '../../core/text.js';
import { clientAddress } from '../client-address.js';
import { CONSOLE_HEADERS, formPageOf } from '../console-paths.js';
import { noticeFrom, sendPage, signInAgainPath } from '../pages.js';
import { afterCommit } from '../logging.js';
import { noSuchPage } from '../plugins/errors.js';
import { methodsBut } from '../route-methods.js';
import { idParams } from '../row-id.js';
import { currentSignIn, pageContext, verifyCsrf } from '../plugins/session.js';
import {
  type ConsoleSection, type StaffConfirmation, appPage, appsPage, keysPage, memberPage, membersPage, overviewPage, rotateKeysPage, refusedPage, roleWord, staffConfirmationPage, staffLogPage, statusWord,
  twoStepNeededPage, vouchedFor,
} from '../views/admin.js';
import { isolated } from '../views/words.js';
import type { Html } from '../views/html.js';
import { TYPED_FIELD } from '../typed-field.js';

const page = { config: { html: true } };
/** A form's route: its error page leads back to `formPage`, the page the form is on. */
const formOn = (formPage: `/admin/${string}`) => ({ config: { html: true, formPage } });
const MEMBER_PAGE = '/admin/members/:id';
const APP_PAGE = '/admin/apps/:clientId';
const form = (properties: Record<string, unknown>) => ({ body: { type: 'object', properties: { _csrf: TYPED_FIELD, reason: TYPED_FIELD, confirm: TYPED_FIELD, ...properties } } });
/**
 * A row id as both databases hold it (a 32-bit integer): a larger one is a bad request, never a
 * query PostgreSQL refuses. Its digits are checked before ajv coerces them, as `ROW_ID` does:
 * coerced, `1e309` and `Infinity` became Infinity, which Fastify's ajv let through `integer`,
 * `minimum` and `maximum` alike, and PostgreSQL refused ('invalid input syntax for type
 * integer'): a 500 for a bad address.
 */
const BEFORE_ID = { allOf: [{ type: 'string', pattern: '^[1-9][0-9]{0,9}$' }, { type: 'integer', minimum: 1, maximum: 2_147_483_647 }] } as const;
const memberParams = { params: idParams };
const SEARCH_LIMIT = 50;
const LOG_PAGE = 50;
const DAY_MS = 86_400_000;

type ChangeBody = { reason?: string; confirm?: string };
type MemberRequest<B = ChangeBody> = FastifyRequest<{ Params: { id: number }; Body: B }>;

function refusalWords(t: Translator, refusal: Refusal): string {
  return t.text('admin.refused', { refusal });
}

export async function adminRoutes(app: FastifyInstance): Promise<void> {
  const deps = app.deps;
  const { stores, clock } = deps;

  // The gate, before anything else of the request is read (its body included).
  app.addHook('onRequest', async (request, reply) => {
    reply.headers(CONSOLE_HEADERS);
    const access = await consoleAccess(stores, (await currentSignIn(request))?.user);
    if (access.kind === 'none') return reply.callNotFound();
    if (access.kind === 'needs_two_step') return sendPage(reply, twoStepNeededPage(await pageContext(request, reply)), 403);
    request.staff = access.staff;
    return undefined;
  });

  const staffOf = (request: FastifyRequest): StaffMember => {
    if (!request.staff) throw new Error('a console route ran without the gate');
    return request.staff;
  };

  /**
   * What every change does first: the CSRF check, then a sign-in within the last 15 minutes (else
   * to the sign-in page, which comes back to `back`, the page the form was on). `undefined` once
   * answered.
   */
  async function changer(request: FastifyRequest, reply: FastifyReply, back: string): Promise<(StaffActor & { via: 'site' }) | undefined> {
    verifyCsrf(request);
    const signIn = await currentSignIn(request);
    if (!signIn || !isRecentSignIn(signIn.session, clock.now())) {
      await reply.redirect(signInAgainPath(back), 303);
      return undefined;
    }
    return { ...staffOf(request), via: 'site', address: clientAddress(request), requestId: request.id };
  }

  /**
   * The confirmation page, unless this is its form and the reason is good: then the checked
   * reason. A reason out of bounds shows the confirmation again with the problem (400).
   */
  async function confirmedReason(request: FastifyRequest<{ Body: ChangeBody }>, reply: FastifyReply, section: ConsoleSection, confirmation: (t: Translator) => Omit<StaffConfirmation, 'reason' | 'errors'>): Promise<string | undefined> {
    const given = request.body?.reason ?? '';
    let problem: InputError | undefined;
    let reason = '';
    try {
      reason = checkReason(given);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      problem = error;
    }
    if (problem === undefined && request.body?.confirm === 'yes') return reason;
    const context = await pageContext(request, reply);
    sendPage(reply, staffConfirmationPage(context, staffOf(request), section, {
      ...confirmation(context.t), reason: given, ...(problem ? { errors: problem.problems } : {}),
    }), problem ? 400 : 200);
    return undefined;
  }

  async function refused(request: FastifyRequest, reply: FastifyReply, section: ConsoleSection, refusal: Refusal, back: string) {
    const context = await pageContext(request, reply);
    return sendPage(reply, refusedPage(context, staffOf(request), section, refusalWords(context.t, refusal), back), 403);
  }

  // ---- The overview ----------------------------------------------------------------------------

  app.get('/admin', page, async (request, reply) => {
    const { siteTimeZone } = deps.settings;
    const figures = await overview(stores, clock.now(), siteTimeZone);
    return sendPage(reply, overviewPage(await pageContext(request, reply), staffOf(request), figures, siteTimeZone));
  });

  // ---- Members -------------------------------------------------------------------------------

  app.get('/admin/members', { ...page, schema: { querystring: { type: 'object', properties: { q: { type: 'string', maxLength: 200 } } } } },
    async (request: FastifyRequest<{ Querystring: { q?: string } }>, reply) => {
      const query = request.query.q ?? '';
      const found = query.trim() === '' ? undefined : await stores.memberDirectory.search(query, SEARCH_LIMIT);
      return sendPage(reply, membersPage(await pageContext(request, reply), staffOf(request), query, found, SEARCH_LIMIT));
    });

  const NOTICES: Record<string, string> = {
    status: 'admin.noticeStatus', sessions: 'admin.noticeSessions', 'two-step': 'admin.noticeTwoStep', role: 'admin.noticeRole',
  };

  app.get('/admin/members/:id', { ...page, schema: memberParams }, async (request: MemberRequest, reply) => {
    const staff = staffOf(request);
    const id = Number(request.params.id);
    const [user, role] = await Promise.all([stores.users.findById(id), stores.roles.roleOf(id)]);
    if (!user || role === undefined) throw noSuchPage();
    const now = clock.now();
    const [email, secondFactors, sessions, apps, tokens, securityLog, staffLog] = await Promise.all([
      stores.memberEmails.find(id), secondFactorsOf(stores, id), stores.sessions.listForUser(id, now), listAuthorizedApplications(stores, id),
      stores.personalTokens.listForUser(id), stores.securityEvents.listForUser(id, 0, 20),
      stores.staffLog.list({ limit: 20, target: { kind: 'member', id: String(id) } }),
    ]);
    const context = await pageContext(request, reply);
    const noticeKey = noticeFrom(request, NOTICES);
    return sendPage(reply, memberPage(context, staff, {
      user, role, email: email?.address, pendingEmail: email?.pending ?? null, secondFactors, sessions, apps, tokens, securityLog: securityLog.items, staffLog,
      mayChange: refusalOnMember(staff, { id, role }) === undefined,
      mayChangeRole: refusalOnRole(staff, { id }) === undefined,
      notice: noticeKey === undefined ? undefined : context.t.text(noticeKey),
    }));
  });

  /**
   * One change on a member: the gate of changes, the member, the rule (checked again by the core
   * inside its transaction), the confirmation, then the change; back to the member's page.
   */
  async function memberChange<B extends ChangeBody>(
    request: MemberRequest<B>, reply: FastifyReply, options: {
      rule: (staff: StaffMember, target: { id: number; role: Role }) => Refusal | undefined;
      fields: Record<string, string>;
      confirmation: (t: Translator, name: string) => { title: string; consequences: string; button: string };
      act: (actor: StaffActor & { via: 'site' }, id: number, reason: string) => Promise<{ ok: true; announce: () => Promise<void> } | { ok: false; refusal: Refusal | 'not_found' }>;
      notice: string;
    },
  ) {
    const id = Number(request.params.id);
    // The member's page (`formOn(MEMBER_PAGE)`), as the error page's way back names it.
    const back = formPageOf(request) ?? '/admin';
    const actor = await changer(request, reply, back);
    if (!actor) return reply;
    const [user, role] = await Promise.all([stores.users.findById(id), stores.roles.roleOf(id)]);
    if (!user || role === undefined) throw noSuchPage();
    const refusal = options.rule(actor, { id, role });
    if (refusal) return refused(request, reply, 'members', refusal, back);
    const reason = await confirmedReason(request, reply, 'members', (t) => ({
      ...options.confirmation(t, user.username), action: request.url, fields: options.fields, cancel: back,
    }));
    if (reason === undefined) return reply;
    const outcome = await options.act(actor, id, reason);
    if (!outcome.ok) {
      if (outcome.refusal === 'not_found') throw noSuchPage();
      return refused(request, reply, 'members', outcome.refusal, back);
    }
    await afterCommit(request.log, 'a staff change was made, but the member\'s notice mail could not be queued', { userId: id }, outcome.announce);
    return reply.redirect(`${back}?notice=${options.notice}`, 303);
  }

  app.post('/admin/members/:id/status', { ...formOn(MEMBER_PAGE), schema: { ...memberParams, ...form({ status: TYPED_FIELD }) } },
    async (request: MemberRequest<ChangeBody & { status?: string }>, reply) => {
      const status = request.body?.status ?? '';
      if (!isUserStatus(status)) throw new OAuthError('invalid_request', 'status must be active, suspended, banned or deleted.');
      return memberChange(request, reply, {
        rule: refusalOnMember, fields: { status }, notice: 'status',
        confirmation: (t, name) => ({
          title: t.text('admin.confirmStatusTitle', { username: name, status: statusWord(t, status as UserStatus) }),
          consequences: t.text('admin.confirmStatus', { username: name, status }),
          button: t.text('admin.confirmStatusButton', { status: statusWord(t, status as UserStatus) }),
        }),
        act: async (actor, id, reason) => changeMemberStatus(deps, actor, id, status, reason),
      });
    });

  app.post('/admin/members/:id/sessions/revoke', { ...formOn(MEMBER_PAGE), schema: { ...memberParams, ...form({}) } }, async (request: MemberRequest, reply) =>
    memberChange(request, reply, {
      rule: refusalOnMember, fields: {}, notice: 'sessions',
      confirmation: (t, name) => ({
        title: t.text('admin.confirmSessionsTitle', { username: name }), consequences: t.text('admin.confirmSessions', { username: name }),
        button: t.text('admin.signOutEverywhereButton'),
      }),
      act: async (actor, id, reason) => endMemberSessions(deps, actor, id, reason),
    }));

  app.post('/admin/members/:id/two-step/reset', { ...formOn(MEMBER_PAGE), schema: { ...memberParams, ...form({}) } }, async (request: MemberRequest, reply) =>
    memberChange(request, reply, {
      rule: refusalOnMember, fields: {}, notice: 'two-step',
      confirmation: (t, name) => ({
        title: t.text('admin.confirmTwoStepTitle', { username: name }), consequences: t.text('admin.confirmTwoStep', { username: name }),
        button: t.text('admin.resetTwoStepButton'),
      }),
      act: async (actor, id, reason) => resetMemberTwoStep(deps, actor, id, reason),
    }));

  app.post('/admin/members/:id/role', { ...formOn(MEMBER_PAGE), schema: { ...memberParams, ...form({ role: TYPED_FIELD }) } },
    async (request: MemberRequest<ChangeBody & { role?: string }>, reply) => {
      const role = request.body?.role ?? '';
      if (!isRole(role)) throw new OAuthError('invalid_request', 'role must be member, moderator or admin.');
      return memberChange(request, reply, {
        rule: (staff, target) => refusalOnRole(staff, target), fields: { role }, notice: 'role',
        confirmation: (t, name) => ({
          title: t.text('admin.confirmRoleTitle', { username: name, role: roleWord(t, role) }),
          consequences: t.text('admin.confirmRole', { username: name, role }),
          button: t.text('admin.changeRoleButton'),
        }),
        act: async (actor, id, reason) => changeMemberRole(deps, actor, id, role, reason),
      });
    });

  // ---- Apps ----------------------------------------------------------------------------------

  type AppRequest<B = ChangeBody> = FastifyRequest<{ Params: { clientId: string }; Body: B }>;
  const appParams = { params: { type: 'object', properties: { clientId: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['clientId'] } };
  const ownerOf = async (client: Client) => (client.ownerId === null ? null : (await stores.users.findById(client.ownerId)) ?? null);

  app.get('/admin/apps', { ...page, schema: { querystring: { type: 'object', properties: { q: { type: 'string', maxLength: 200 } } } } },
    async (request: FastifyRequest<{ Querystring: { q?: string } }>, reply) => {
      const query = request.query.q ?? '';
      const clients = await stores.appDirectory.search(query, SEARCH_LIMIT);
      const apps = await Promise.all(clients.map(async (client) => ({ client, owner: await ownerOf(client) })));
      return sendPage(reply, appsPage(await pageContext(request, reply), staffOf(request), query, apps, SEARCH_LIMIT));
    });

  const APP_NOTICES: Record<string, string> = { status: 'admin.noticeAppStatus', verified: 'admin.noticeVerified', 'app-changed': 'admin.noticeAppChanged' };

  app.get('/admin/apps/:clientId', { ...page, schema: appParams }, async (request: AppRequest, reply) => {
    const { clientId } = request.params;
    const client = await findClient(stores, clientId);
    if (!client) throw noSuchPage();
    const [owner, usage, staffLog] = await Promise.all([
      ownerOf(client), stores.appDirectory.usage(clientId, clock.now() - DAY_MS), stores.staffLog.list({ limit: 20, target: { kind: 'app', id: clientId } }),
    ]);
    const context = await pageContext(request, reply);
    const noticeKey = noticeFrom(request, APP_NOTICES);
    return sendPage(reply, appPage(context, staffOf(request), {
      client, owner, users: usage.users, tokensLastDay: usage.tokensSince, staffLog,
      notice: noticeKey === undefined ? undefined : context.t.text(noticeKey),
      nameSigns: (await lookAlikeCheck())(client.name, siteNames()),
    }));
  });

  /** The site's name in every language, which an app's name should not pass for. */
  const siteNames = () => LOCALES.map((locale) => app.deps.words(locale).text('common.siteName'));

  /** One change on an app: moderators and admins alike (INTERFACE section 14). */
  async function appChange<B extends ChangeBody>(
    request: AppRequest<B>, reply: FastifyReply, options: {
      fields: Record<string, string>;
      confirmation: (t: Translator, name: string) => { title: string; consequences: string; details?: Html; button: string };
      act: (actor: StaffActor & { via: 'site' }, reason: string) => Promise<{ ok: true } | { ok: false; refusal: string }>;
      notice: string;
      /** What is wrong with the form itself: refused once its sender is known to be staff, before any confirmation is asked for. */
      problem?: OAuthError | undefined;
      /** Whether the change would take the app's owner past their apps' cap, read before the confirmation asks for a reason (the core decides). */
      overCap?: (client: Client) => Promise<boolean>;
    },
  ) {
    const { clientId } = request.params;
    // The app's page (`formOn(APP_PAGE)`), as the error page's way back names it.
    const back = formPageOf(request) ?? '/admin';
    const actor = await changer(request, reply, back);
    if (!actor) return reply;
    const client = await findClient(stores, clientId);
    if (!client) throw noSuchPage();
    if (options.problem) throw options.problem;
    if (await options.overCap?.(client)) return ownerFull(request, reply, client, back);
    const reason = await confirmedReason(request, reply, 'apps', (t) => ({ ...options.confirmation(t, isolated(client.name)), action: request.url, fields: options.fields, cancel: back }));
    if (reason === undefined) return reply;
    const outcome = await options.act(actor, reason);
    if (!outcome.ok && outcome.refusal === 'changed') return reply.redirect(`${back}?notice=app-changed`, 303);
    if (!outcome.ok && outcome.refusal === 'owner_full') return ownerFull(request, reply, client, back);
    if (!outcome.ok) throw noSuchPage();
    return reply.redirect(`${back}?notice=${options.notice}`, 303);
  }

  /**
   * A reactivation refused because the app's owner has `MAX_APPS_PER_OWNER` active apps: 409, the
   * app's state and not staff's role is in the way, with what would make room.
   */
  async function ownerFull(request: FastifyRequest, reply: FastifyReply, client: Client, back: string) {
    const context = await pageContext(request, reply);
    const owner = await ownerOf(client);
    const message = context.t.text('admin.ownerAppsFull', { owner: owner?.username ?? '', max: MAX_APPS_PER_OWNER, app: isolated(client.name) });
    return sendPage(reply, refusedPage(context, staffOf(request), 'apps', message, back), 409);
  }

  app.post('/admin/apps/:clientId/status', { ...formOn(APP_PAGE), schema: { ...appParams, ...form({ status: TYPED_FIELD }) } },
    async (request: AppRequest<ChangeBody & { status?: string }>, reply) => {
      const status = request.body?.status;
      if (status !== 'active' && status !== 'deactivated') throw new OAuthError('invalid_request', 'status must be active or deactivated.');
      return appChange(request, reply, {
        fields: { status }, notice: 'status',
        confirmation: (t, name) => ({
          title: t.text('admin.confirmAppStatusTitle', { app: name, status }), consequences: t.text('admin.confirmAppStatus', { app: name, status }),
          button: t.text('admin.appStatusButton', { status }),
        }),
        act: (actor, reason) => changeAppStatus(deps, actor, request.params.clientId, status, reason),
        ...(status === 'active' ? { overCap: (client: Client) => reactivationOverCap(stores, client) } : {}),
      });
    });

  app.post('/admin/apps/:clientId/verified', { ...formOn(APP_PAGE), schema: { ...appParams, ...form({ verified: TYPED_FIELD, reviewed: TYPED_FIELD }) } },
    async (request: AppRequest<ChangeBody & { verified?: string; reviewed?: string }>, reply) => {
      const verified = request.body?.verified;
      if (verified !== 'yes' && verified !== 'no') throw new OAuthError('invalid_request', 'verified must be yes or no.');
      // The name, description, homepage and addresses the app's page showed staff, carried through the
      // confirmation, which lists them: vouched for only while the app still has them. A form
      // without them is refused once its sender is known to be staff (attack87: it was told the
      // app had changed).
      const reviewed = verified === 'yes' ? reviewedFrom(request.body?.reviewed) : undefined;
      const mark: VerifiedMark | undefined = verified === 'no' ? { verified: false } : reviewed && { verified: true, reviewed };
      const lookAlikeSigns = await lookAlikeCheck();
      return appChange(request, reply, {
        // Refused before the confirmation, which would ask for a reason only to refuse it (attack88).
        problem: mark === undefined
          ? new OAuthError('invalid_request', 'The form did not carry the name, description, homepage and addresses the app\'s page showed: load the page again and verify from there.', {
            words: { key: 'admin.verifyFormIncomplete' },
          })
          : undefined,
        fields: { verified, ...(reviewed ? { reviewed: request.body!.reviewed! } : {}) }, notice: 'verified',
        confirmation: (t, name) => ({
          title: t.text('admin.confirmVerifiedTitle', { app: reviewed ? isolated(reviewed.name) : name, verified }),
          consequences: t.text('admin.confirmVerified', { app: reviewed ? isolated(reviewed.name) : name, verified }),
          ...(reviewed ? { details: vouchedFor(t, reviewed, lookAlikeSigns(reviewed.name, siteNames())) } : {}),
          button: t.text('admin.verifiedButton', { verified }),
        }),
        act: (actor, reason) => setAppVerified(deps, actor, request.params.clientId, mark!, reason),
      });
    });

  // ---- Signing keys (admins) -----------------------------------------------------------------

  /** The keys' pages are the admins'; a moderator is told so. */
  async function adminOnly(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const refusal = refusalOnKeys(staffOf(request));
    if (refusal) await refused(request, reply, 'keys', refusal, '/admin');
    return refusal === undefined;
  }

  app.get('/admin/keys', page, async (request: FastifyRequest<{ Querystring: { notice?: string } }>, reply) => {
    if (!(await adminOnly(request, reply))) return reply;
    const keys = await stores.keys.listPublished(clock.now());
    const context = await pageContext(request, reply);
    return sendPage(reply, keysPage(context, staffOf(request), keys, request.query.notice === 'rotated' ? context.t.text('admin.noticeRotated') : undefined));
  });

  app.get('/admin/keys/rotate', page, async (request, reply) => {
    if (!(await adminOnly(request, reply))) return reply;
    return sendPage(reply, rotateKeysPage(await pageContext(request, reply), staffOf(request), deps.settings.signingKeyActivationSeconds));
  });

  app.post('/admin/keys/rotate', { ...formOn('/admin/keys/rotate'), schema: form({ now: TYPED_FIELD }) }, async (request: FastifyRequest<{ Body: ChangeBody & { now?: string } }>, reply) => {
    const actor = await changer(request, reply, '/admin/keys/rotate');
    if (!actor) return reply;
    if (!(await adminOnly(request, reply))) return reply;
    const immediate = request.body?.now === 'yes';
    const seconds = deps.settings.signingKeyActivationSeconds;
    const reason = await confirmedReason(request, reply, 'keys', (t) => ({
      title: t.text('admin.rotateKeys'), consequences: t.text('admin.confirmRotate', { now: immediate ? 'yes' : 'no', seconds }),
      button: t.text('admin.rotateKeysButton'), action: '/admin/keys/rotate', fields: immediate ? { now: 'yes' } : ({} as Record<string, string>), cancel: '/admin/keys',
    }));
    if (reason === undefined) return reply;
    await rotateKeysAsStaff(deps, actor, { now: immediate }, reason);
    return reply.redirect('/admin/keys?notice=rotated', 303);
  });

  // ---- The staff log ---------------------------------------------------------------------------

  app.get('/admin/staff-log', { ...page, schema: { querystring: { type: 'object', properties: { before: BEFORE_ID } } } },
    async (request: FastifyRequest<{ Querystring: { before?: number } }>, reply) => {
      const { before } = request.query;
      const entries = await stores.staffLog.list({ limit: LOG_PAGE, ...(before === undefined ? {} : { beforeId: before }) });
      const older = entries.length === LOG_PAGE ? `/admin/staff-log?before=${entries[entries.length - 1]!.id}` : undefined;
      return sendPage(reply, staffLogPage(await pageContext(request, reply), staffOf(request), entries, older));
    });

  // ---- Any other address under /admin --------------------------------------------------------

  // Behind the gate, so that staff read the console's not-found page, which leads back to the
  // console, and staff without two-step the page asking for it; anyone else gets the site's own,
  // as for any address that does not exist. By every method the router takes, and at /admin
  // itself by every one the overview does not (a PUT there was the site's page, to staff too).
  const catchAll = { config: { html: true, notFound: true } as const, handler: async () => { throw noSuchPage(); } };
  app.route({ method: methodsBut(app), url: '/admin/*', ...catchAll });
  app.route({ method: methodsBut(app, 'GET', 'HEAD'), url: '/admin', ...catchAll });
}
