/**
 * The authorization endpoint's decisions (RFC 6749 4.1, OpenID Connect Core 3.1.2): validate the
 * request, then sign-in, then consent (remembered or asked), then a code or an error, answered on
 * the verified redirect URI with `state` and `iss` (RFC 9207), but for the errors of an app nobody
 * answers for (`mayRedirectErrors`).
 */
import { isNativeAppRedirect } from '../clients.js';
import { type ClientSources, hasCurrentRow, isUnreviewedApp, storeDocumentClient } from '../client-metadata.js';
import { generateAuthorizationCode, hashSecret } from '../../credentials/formats.js';
import { ACCOUNT_NOT_ACTIVE, OAuthError } from '../../errors.js';
import { type Params, paramsFromEntries } from '../params.js';
import type { Session, User } from '../../accounts/ports.js';
import { canBeUsername, readTypedUsername } from '../../accounts/accounts.js';
import type { Stores } from '../../stores.js';
import type { Requester } from '../../addresses.js';
import type { Locale } from '../../locales.js';
import type { Client, NewCodeUnderGrant } from '../ports.js';
import { type Scope, formatScope, holdsEveryScope, scopeList } from '../scopes.js';
import { sessionSid } from '../../accounts/sessions.js';
import { idTokenAuthTime } from '../../oidc/id-token.js';
import type { OAuthDeps } from '../tokens/context.js';
import { type CheckContext, PAGE_CHECKS, REDIRECT_CHECKS, requestedClient } from './checks.js';
import { type PushedFlow, completePushedRequest, openPushedRequest, pushedMarker, pushedReturnFields } from './pushed.js';
import { type AuthorizationRequest, type AuthorizationResponse, PUSHED_MARKER, fieldsAfterSignIn, requestFields } from './request.js';

export const AUTHORIZE_PATH = '/oauth/authorize';

/**
 * The longest `return_to`: the `/login` address that carries it, encoded once more, must fit
 * Node's 16 kB of request line and headers. An authorization request longer than that is not
 * sent to sign in with it: the page says so instead (`too_long`, attack114), or, when starting it
 * again after that sign-in would meet the same page, the app is answered (`unservedByNotice`).
 * A pushed request never is: sign-in returns to it by reference (`pushedReturnFields`).
 */
export const MAX_RETURN_TO_LENGTH = 8000;

/**
 * How long the too-long notice's round trip may take: the member signs in, goes back to the app
 * and starts again. Minutes: a password typed, a second factor found, the app found again. A
 * max_age shorter than this has run out by that start (OpenID Connect Core 3.1.2.1), and a sign-in
 * younger than this may be the one the notice asked for (`unservedByNotice`).
 */
export const NOTICE_ROUND_TRIP_SECONDS = 600;

export interface SignedIn {
  user: User;
  session: Session;
}

export type AuthorizeStep =
  /** Back to the client: a code or an error. */
  | { kind: 'respond'; response: AuthorizationResponse }
  /** Sign in first (again, when `reauthenticate`), then come back to `returnTo`. */
  | { kind: 'sign_in'; returnTo: string; loginHint: string | null; reauthenticate: boolean }
  /**
   * Ask the user. `fields` are the hidden fields that carry the request through the form;
   * `granted`, the scopes the user already granted this app, so the page can mark the new ones.
   */
  | { kind: 'consent'; request: AuthorizationRequest; user: User; owner: User | null; fields: Array<[string, string]>; granted: Scope[] };

/**
 * An error for the app: where it goes, with which state, and, when its marker was checked before
 * the failing check, which pushed request it answers.
 */
interface Refusal {
  error: OAuthError;
  to: Destination;
  state: string | null | undefined;
  client: Client;
  pushed: PushedFlow | null;
}

type Validation = { ok: true; request: AuthorizationRequest } | ({ ok: false } & Refusal);

/** Where an answer goes: the verified redirect URI, in the response mode asked for. */
type Destination = Pick<AuthorizationResponse, 'redirectUri' | 'mode' | 'clientName'>;

function destinationOf(request: AuthorizationRequest): Destination {
  return { redirectUri: request.redirectUri, mode: request.responseMode, clientName: request.client.name };
}

/** RFC 6749 4.1.2.1 with RFC 9207: the error goes back to the client with state and iss. */
function errorResponse(deps: OAuthDeps, to: Destination, error: OAuthError, state: string | null | undefined): AuthorizationResponse {
  return { ...to, parameters: { error: error.code, error_description: error.description, state: state ?? null, iss: deps.settings.baseUrl } };
}

/**
 * RFC 9700 4.11.2: an error goes back to the redirect URI by itself only where someone answers for
 * that URI. An app that registered itself, is named by its own document or was registered by a
 * member (`isUnreviewedApp`) chose its redirect URIs alone, so anyone could make this site send
 * people there; its errors are shown on this site's error page instead, unless the signed-in
 * member owns it or has already authorized it (INTERFACE section 13).
 */
async function mayRedirectErrors(deps: OAuthDeps, client: Client, signedIn: SignedIn | undefined): Promise<boolean> {
  if (!isUnreviewedApp(client)) return true;
  if (signedIn === undefined) return false;
  if (client.ownerId === signedIn.user.id) return true;
  return (await deps.stores.consents.find(signedIn.user.id, client.clientId)) !== undefined;
}

/** The answer to a refused request: the error sent back to the app, or the error page (`mayRedirectErrors`). */
async function refuse(deps: OAuthDeps, refusal: Refusal, signedIn: SignedIn | undefined): Promise<AuthorizeStep> {
  if (await mayRedirectErrors(deps, refusal.client, signedIn)) {
    return respond(deps, refusal.pushed, () => errorResponse(deps, refusal.to, refusal.error, refusal.state));
  }
  if (refusal.pushed !== null) await completePushedRequest(deps.stores, refusal.pushed, deps.clock.now());
  throw new OAuthError(refusal.error.code, refusal.error.description, { status: 400 });
}

/**
 * The request's one answer, a code or an error, for the client. A pushed request is completed
 * first (`completePushedRequest`: one conditional write), so a marker yields one answer, and no
 * code is made for another.
 */
async function respond(deps: OAuthDeps, pushed: PushedFlow | null, answer: () => AuthorizationResponse | Promise<AuthorizationResponse>): Promise<AuthorizeStep> {
  if (pushed !== null) await completePushedRequest(deps.stores, pushed, deps.clock.now());
  return { kind: 'respond', response: await answer() };
}

type Checked = { ok: true; request: AuthorizationRequest } | { ok: false; error: OAuthError; ctx: CheckContext };

/** Runs every check in order. Page errors (client, redirect URI) are thrown; later ones come back. */
async function runChecks(deps: OAuthDeps, params: Params, via: CheckContext['via'], askedBy: Requester): Promise<Checked> {
  const ctx: CheckContext = { params, stores: deps.stores, sharedKeys: deps.sharedKeys, clientDocuments: deps.clientDocuments, keys: () => deps.keys.keySet(), issuer: deps.settings.baseUrl, now: deps.clock.now(), via, askedBy, request: {} };
  for (const check of PAGE_CHECKS) await check(ctx);
  try {
    for (const check of REDIRECT_CHECKS) await check(ctx);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return { ok: false, error, ctx };
  }
  return { ok: true, request: ctx.request as AuthorizationRequest };
}

/**
 * Runs every check in order. Page errors (client, redirect URI) are thrown as `OAuthError`;
 * later ones come back as the error redirect. `askedBy` is the browser that sent it.
 */
export async function validateAuthorizationRequest(deps: OAuthDeps, params: Params, askedBy: Requester): Promise<Validation> {
  const checked = await runChecks(deps, params, 'browser', askedBy);
  if (checked.ok) return checked;
  const { ctx } = checked;
  const to: Destination = { redirectUri: ctx.redirectUri!, mode: ctx.request.responseMode ?? 'query', clientName: ctx.client!.name };
  return { ok: false, error: checked.error, to, state: ctx.state, client: ctx.client!, pushed: ctx.request.pushed ?? null };
}

/**
 * RFC 9126 2.1: a pushed request passes the same checks as one at the authorization endpoint;
 * any failure is thrown, to be answered as JSON (RFC 9126 2.3).
 */
export async function checkPushedRequest(deps: OAuthDeps, params: Params, askedBy: Requester): Promise<AuthorizationRequest> {
  const checked = await runChecks(deps, params, 'push', askedBy);
  if (!checked.ok) throw checked.error;
  return checked.request;
}

/**
 * The fields that carry the request through the consent form (`fields`, the request's own), with a
 * fresh marker when its parameters were pushed (RFC 9126), so a client that requires pushed
 * requests accepts them. A form's POST has room for any length; sign-in returns by `returnTo`.
 */
async function carried(deps: OAuthDeps, request: AuthorizationRequest, fields: Array<[string, string]>): Promise<Array<[string, string]>> {
  if (request.pushed === null) return fields;
  return [...fields, [PUSHED_MARKER, await pushedMarker(deps.sharedKeys, fields, request.pushed)]];
}

/**
 * Where sign-in returns to. A request that forced sign-in (prompt=login, an expired max_age, a
 * `login_hint` naming another account) comes back without that demand (`fieldsAfterSignIn`:
 * attack114, a member without the hinted account's password was sent back to sign in after every
 * sign-in). A pushed request comes back by reference, its parameters left in storage
 * (`pushedReturnFields`, RFC 9126 1), so its length never matters, and with a marker naming when
 * the sign-in was asked, which the address then requires (`signedInSince`).
 *
 * A request that was not pushed gets no such marker, on purpose: whoever holds the browser can
 * open this address without signing in, but could as well have deleted prompt=login or max_age
 * from the app's own address before it reached us, and that request, served as sent, would need
 * no marker. What holds is the id_token's `auth_time`, in every id_token and always the sign-in
 * of the session the code is made under (`newCode`), which the app checks (OpenID Connect Core 2
 * and 3.1.2.1; docs/oauth.md, "What prompt=login and max_age guarantee").
 */
async function returnTo(deps: OAuthDeps, request: AuthorizationRequest, params: Params): Promise<string> {
  const fields = fieldsAfterSignIn(params);
  const back = request.pushed === null ? fields : await pushedReturnFields(deps.sharedKeys, fields, request.pushed, deps.clock.now());
  return `${AUTHORIZE_PATH}?${new URLSearchParams(back).toString()}`;
}

/**
 * The app whose authorization request `returnTo` (a path on this site, as sign-in and sign-up
 * carry it) leads back to, so those pages can name it (INTERFACE section 11). Only its
 * `client_id` is read, by the authorization endpoint's own check: an active client's registered
 * name is all a page shows, never other text from the address. A document not kept on this
 * instance is fetched, counted against the visitor's share (`askedBy`), so the page names the
 * app whichever instance serves it. Another path, or an unknown, repeated or deactivated client,
 * or a document that cannot be fetched now, names no app.
 */
export async function applicationReturnedTo(sources: ClientSources, returnTo: string, askedBy: Requester): Promise<Client | undefined> {
  let url: URL;
  try {
    url = new URL(returnTo, 'http://site.invalid');
  } catch {
    return undefined;
  }
  if (url.origin !== 'http://site.invalid' || url.pathname !== AUTHORIZE_PATH) return undefined;
  try {
    return await requestedClient(sources, paramsFromEntries(url.searchParams), askedBy);
  } catch (error) {
    if (error instanceof OAuthError) return undefined;
    throw error;
  }
}

/**
 * OpenID Connect Core 3.1.2.1: the session is too old for max_age, its age counted from the
 * `auth_time` the id_token will carry (OpenID Connect Core 2: whole seconds, `idTokenAuthTime`)
 * to now, to the millisecond. An app checks `auth_time + max_age` against its clock: judged from
 * the exact sign-in instant, a member who signed in at 12:00:00.900 passed max_age=10 at
 * 12:00:10.500, and the app, reading auth_time 12:00:00, found the sign-in 10.5 s old and refused
 * it. Whole seconds on both sides would let a session 1.9 s old pass max_age=1 (attack112); the
 * floored sign-in time only ever makes a session older, never younger. "max_age=0 is equivalent
 * to prompt=login", however young the session.
 */
function tooOld(request: AuthorizationRequest, session: Session, now: number): boolean {
  return request.maxAge !== null && (request.maxAge === 0 || now - idTokenAuthTime(session.authTime) * 1000 > request.maxAge * 1000);
}

/**
 * OpenID Connect Core 3.1.2.1: the request's `id_token_hint` names someone else than the person
 * signed in (or signed in by the request), so no code is issued for the wrong account. With nobody
 * signed in, only a hint that matches nobody (its key is gone) is refused: no sign-in can help.
 */
function hintedOther(request: AuthorizationRequest, signedIn: SignedIn | undefined): Refusal | undefined {
  const hinted = request.hintedSubject;
  if (hinted === null || (typeof hinted === 'string' && (signedIn === undefined || hinted === String(signedIn.user.id)))) return undefined;
  const error = typeof hinted === 'string'
    ? new OAuthError('login_required', 'The id_token_hint names another account than the one signed in: send the request again without id_token_hint to let this person sign in.')
    : new OAuthError('login_required', 'The id_token_hint is signed by a key this service no longer publishes, so whom it names cannot be told: send the request again with a newer id_token, or without id_token_hint.');
  return { error, to: destinationOf(request), state: request.state, client: request.client, pushed: request.pushed };
}

/**
 * The `login_hint` the flow goes by (OpenID Connect Core 3.1.2.1): the request's, unless its
 * `id_token_hint` names another account. Both are hints, but only the id_token_hint decides
 * whether a code is issued (`hintedOther`): a sign-in as the account login_hint named would only
 * be refused after it, the browser's session switched to that account for nothing. So a
 * conflicting login_hint, the app's mistake, is set aside: it neither sends a member signed in
 * as the id_token's account to sign in again nor fills in the sign-in page.
 *
 * An e-mail address (3.1.2.1's own example of a hint) is set aside too, as is a phone number or
 * any hint no username reads as (`hintedUsername`): the username is the sign-in handle here
 * (INTERFACE section 12), so it names no account, and read as one it named "another account" than
 * every member's, which sent each signed-in member to sign in again and answered every
 * `prompt=none` with interaction_required. It is not matched against the member's address either:
 * that is private, and the answer to a silent request would tell the app whether an address it
 * guessed is the member's. A hint that is a username is read as sign-in reads it (full-width
 * letters, spaces around it), so it names the account the sign-in page it fills in would.
 */
async function agreedLoginHint(deps: OAuthDeps, request: AuthorizationRequest): Promise<string | null> {
  if (request.loginHint === null || hintedUsername(request.loginHint) === undefined) return null;
  const hinted = request.hintedSubject;
  if (typeof hinted !== 'string') return request.loginHint;
  const named = /^[1-9][0-9]{0,15}$/.test(hinted) ? await deps.stores.users.findById(Number(hinted)) : undefined;
  return named !== undefined && namesAccount(request.loginHint, named) ? request.loginHint : null;
}

/**
 * The username a login_hint names, read as the sign-in page reads what it fills in
 * (`readTypedUsername`: trimmed, full-width letters as the ASCII they read as), lower-cased; or
 * `undefined` when it can name no account: an e-mail address (no username holds "@"), a phone
 * number (3.1.2.1's other example), any hint of another shape than a username's. Compared as
 * sent, "ｍｅｍｂｅｒ" or " member" named "another account" than member's own, which sent member to
 * sign in again as themselves and answered their `prompt=none` with interaction_required.
 */
function hintedUsername(hint: string): string | undefined {
  const read = readTypedUsername(hint);
  return read !== undefined && canBeUsername(read) ? read.toLowerCase() : undefined;
}

/** Whether the (agreed) login_hint names `user`'s account, as sign-in would read it. */
function namesAccount(hint: string, user: User): boolean {
  return hintedUsername(hint) === user.username.toLowerCase();
}

/**
 * Why a request too long to come back to after sign-in (`MAX_RETURN_TO_LENGTH`) would meet the
 * notice (sign in, then start again from the app) at every start, forever, so the app is answered
 * instead; `undefined` when the start after that sign-in can pass:
 * - prompt=login, or max_age=0, its equal (OpenID Connect Core 3.1.2.1), asks at every start;
 * - a max_age shorter than `NOTICE_ROUND_TRIP_SECONDS` has run out by the next start;
 * - a login_hint naming another account than the one signed in (`hintMismatch`) within the
 *   notice's round trip: the member may just have signed in at the notice, as the account they
 *   chose, and the next start would name the other one again (a carried request drops it). An
 *   older sign-in gets the notice: the member may sign in as the hinted account there.
 */
function unservedByNotice(request: AuthorizationRequest, signedIn: SignedIn | undefined, hintMismatch: boolean, now: number): string | undefined {
  if (request.prompt.has('login') || request.maxAge === 0) return 'asks for a new sign-in each time it is sent (prompt=login or max_age=0)';
  if (request.maxAge !== null && request.maxAge < NOTICE_ROUND_TRIP_SECONDS) {
    return `its max_age of ${request.maxAge} seconds runs out before the user, signed in, can start it again from the application (the sign-in page cannot bring them back to it; at least ${NOTICE_ROUND_TRIP_SECONDS} seconds)`;
  }
  if (hintMismatch && signedIn !== undefined && now - signedIn.session.authTime < NOTICE_ROUND_TRIP_SECONDS * 1000) {
    return 'its login_hint names another account than the one the user has just signed in as, so it would ask for a sign-in again whoever the user signs in as';
  }
  return undefined;
}

/** OpenID Connect Core 3.1.2.6: the request cannot be served as sent (`unservedByNotice` says why), and the app can push or shorten it. */
function tooLongRefusal(request: AuthorizationRequest, unserved: string): Refusal {
  const error = new OAuthError('invalid_request', `The authorization request is too long to carry through sign-in (over ${MAX_RETURN_TO_LENGTH} characters once encoded) and ${unserved}: push it (POST /api/oauth/par) and send its request_uri, which sign-in returns to whatever its length, or send a shorter one (a shorter state, no id_token_hint).`);
  return { error, to: destinationOf(request), state: request.state, client: request.client, pushed: request.pushed };
}

/** GET /oauth/authorize: what to do with this request for this browser (`askedBy`). */
export async function startAuthorization(deps: OAuthDeps, sent: Params, signedIn: SignedIn | undefined, askedBy: Requester): Promise<AuthorizeStep> {
  // RFC 9126 4: a request_uri is exchanged for the pushed parameters, once; the flow goes on with them.
  const opened = await openPushedRequest(deps.stores, deps.sharedKeys, sent, deps.clock.now());
  const params = opened?.params ?? sent;
  const validation = await validateAuthorizationRequest(deps, params, askedBy);
  if (!validation.ok) return refuse(deps, validation, signedIn);
  const { request } = validation;
  // Before any sign-in, which a hint that matches nobody would only waste.
  const unmatched = hintedOther(request, undefined);
  if (unmatched) return refuse(deps, unmatched, signedIn);
  const fail = (code: 'login_required' | 'consent_required' | 'interaction_required' | 'invalid_request', description: string): Promise<AuthorizeStep> =>
    refuse(deps, { error: new OAuthError(code, description), to: destinationOf(request), state: request.state, client: request.client, pushed: request.pushed }, signedIn);
  const now = deps.clock.now();
  const silent = request.prompt.has('none');

  const loginHint = await agreedLoginHint(deps, request);
  const hintMismatch = signedIn !== undefined && loginHint !== null && !namesAccount(loginHint, signedIn.user);
  // A pushed request returned to by reference asked for a sign-in: one since it was asked (`signedInSince`).
  const mustSignIn = !signedIn || request.prompt.has('login') || tooOld(request, signedIn.session, now)
    || (opened?.signedInSince !== undefined && signedIn.session.authTime < opened.signedInSince);
  if (silent && mustSignIn) return fail('login_required', 'The user must sign in: send the request again without prompt=none.');
  if (silent && hintMismatch) return fail('interaction_required', 'Another account than login_hint names is signed in: send the request again without prompt=none.');
  if (mustSignIn || hintMismatch) {
    const back = await returnTo(deps, request, params);
    // OpenID Connect Core 3.1.2.6: the request cannot be served as sent, and the app can push or shorten it.
    const unserved = back.length > MAX_RETURN_TO_LENGTH ? unservedByNotice(request, signedIn, hintMismatch, now) : undefined;
    if (unserved !== undefined) return refuse(deps, tooLongRefusal(request, unserved), signedIn);
    return { kind: 'sign_in', returnTo: back, loginHint, reauthenticate: signedIn !== undefined };
  }
  const otherAccount = hintedOther(request, signedIn!);
  if (otherAccount) return refuse(deps, otherAccount, signedIn);

  // Remembered consent skips the page for scopes already granted (INTERFACE section 10), but
  // never for a native app, whose redirect any app on the device could claim (RFC 8252 8.6). The
  // consent is read for every app all the same: the page marks the scopes it did not grant before.
  const mayRemember = !request.prompt.has('consent') && !isNativeAppRedirect(request.client, request.redirectUri);
  // Without a pushed request to complete first, and no app row to write first, the code is
  // stored only if the remembered consent covers the request, decided by the write itself: the
  // consent is read only when it does not (`approveIfRemembered`).
  if (mayRemember && request.pushed === null && hasCurrentRow(request.client)) {
    const response = await approveIfRemembered(deps, request, signedIn!);
    if (response !== undefined) return { kind: 'respond', response };
  }
  const consent = await deps.stores.consents.find(signedIn!.user.id, request.client.clientId);
  if (mayRemember && holdsEveryScope(consent?.scope, request.scopes)) {
    return respond(deps, request.pushed, () => approve(deps, request, signedIn!, { remembered: true }));
  }
  if (silent) return fail('consent_required', 'The user has not approved this application (or it is a native app, which is asked every time): send the request again without prompt=none.');
  const owner = request.client.ownerId === null ? undefined : await deps.stores.users.findById(request.client.ownerId);
  return { kind: 'consent', request, user: signedIn!.user, owner: owner ?? null, fields: await carried(deps, request, requestFields(params)),
    granted: scopeList(consent?.scope ?? '') };
}

/**
 * POST /oauth/authorize: the consent form's answer. The hidden fields are re-validated from
 * scratch; nothing in them is trusted. `pageLocale` is the language the page was read in: the
 * first authorization's notice mail is in it when the member saved no language (attack86).
 */
export async function decideAuthorization(
  deps: OAuthDeps, params: Params, signedIn: SignedIn | undefined, askedBy: Requester, decision: string | undefined, pageLocale?: Locale,
): Promise<AuthorizeStep> {
  const validation = await validateAuthorizationRequest(deps, params, askedBy);
  if (!validation.ok) return refuse(deps, validation, signedIn);
  const { request } = validation;
  if (!signedIn) return { kind: 'sign_in', returnTo: await returnTo(deps, request, params), loginHint: await agreedLoginHint(deps, request), reauthenticate: false };
  // OpenID Connect Core 3.1.2.1: the code carries the session's auth_time, and the consent page
  // may have stayed open past max_age; the app, checking auth_time + max_age, would refuse the
  // id_token. So the session is judged again when the code is made, and sent to sign in again
  // when too old (a pushed request's fields cannot lose their max_age on the way: its marker).
  // A denial makes no code and carries no auth_time: it is answered without that sign-in.
  const now = deps.clock.now();
  if (decision === 'approve' && (request.prompt.has('login') || tooOld(request, signedIn.session, now))) {
    const back = await returnTo(deps, request, params);
    // As at the GET: a request too long to come back to, which would meet the notice again at its next start, is answered.
    const unserved = back.length > MAX_RETURN_TO_LENGTH ? unservedByNotice(request, signedIn, false, now) : undefined;
    if (unserved !== undefined) return refuse(deps, tooLongRefusal(request, unserved), signedIn);
    return { kind: 'sign_in', returnTo: back, loginHint: await agreedLoginHint(deps, request), reauthenticate: true };
  }
  const otherAccount = hintedOther(request, signedIn);
  if (otherAccount) return refuse(deps, otherAccount, signedIn);
  if (decision === 'approve') return respond(deps, request.pushed, () => approve(deps, request, signedIn, { remembered: false, pageLocale, requestId: askedBy.requestId }));
  if (decision === 'deny') {
    return respond(deps, request.pushed, () => errorResponse(deps, destinationOf(request), new OAuthError('access_denied', 'The user denied the request.'), request.state));
  }
  throw new OAuthError('invalid_request', 'Choose to allow or deny the request.', { status: 400 });
}

/** A new single-use code, and its row, bound to everything the token request must repeat (RFC 6749 4.1.2, RFC 7636 4.4). */
function newCode(deps: OAuthDeps, request: AuthorizationRequest, signedIn: SignedIn): { code: string; stored: NewCodeUnderGrant } {
  const code = generateAuthorizationCode();
  const now = deps.clock.now();
  const stored: NewCodeUnderGrant = {
    codeHash: hashSecret(code),
    clientId: request.client.clientId,
    userId: signedIn.user.id,
    redirectUri: request.redirectUri,
    scope: formatScope(request.scopes),
    codeChallenge: request.codeChallenge,
    nonce: request.nonce,
    authTime: signedIn.session.authTime,
    // How the session signed in (RFC 8176), kept on the grant for every id_token of it.
    amr: signedIn.session.amr,
    // RFC 8707: the resource asked for, kept on the grant.
    resource: request.resource,
    createdAt: now,
    expiresAt: now + deps.settings.codeTtlSeconds * 1000,
    dpopJkt: request.dpopJkt,
  };
  return { code, stored };
}

/** RFC 6749 4.1.2 and RFC 9207 2: code, the original state (none when none was sent), and the issuer. */
function codeResponse(deps: OAuthDeps, request: AuthorizationRequest, code: string): AuthorizationResponse {
  return { ...destinationOf(request), parameters: { code, state: request.state, iss: deps.settings.baseUrl } };
}

/**
 * Approval by the remembered consent, in one conditional write: a new grant and its code, stored
 * only while the user's consent holds every scope asked for (INTERFACE section 10); `undefined`
 * when it does not, and nothing is stored. The consent stays as it is. For an app whose row needs
 * no write first (`hasCurrentRow`).
 */
async function approveIfRemembered(deps: OAuthDeps, request: AuthorizationRequest, signedIn: SignedIn): Promise<AuthorizationResponse | undefined> {
  const { code, stored } = newCode(deps, request, signedIn);
  // The grant remembers the sign-in session, for the id_token's `sid` and the logout that ends it.
  const approved = await deps.stores.codes.insertUnderRememberedConsent(stored, sessionSid(signedIn.session));
  return approved ? codeResponse(deps, request, code) : undefined;
}

/**
 * Approval: a new grant with a single-use code (`newCode`), and the remembered consent, all or
 * nothing. A request the remembered consent already `covers` leaves the consent as it is.
 */
async function approve(deps: OAuthDeps, request: AuthorizationRequest, signedIn: SignedIn, consent: { remembered: boolean; pageLocale?: Locale | undefined; requestId?: string | undefined }): Promise<AuthorizationResponse> {
  const { code, stored } = newCode(deps, request, signedIn);
  const { userId, clientId, scope, createdAt: now } = stored;
  // The grant remembers the sign-in session, for the id_token's `sid` and the logout that ends it.
  const sid = sessionSid(signedIn.session);
  // A document's app gets its row now, the first time a grant refers to it (client-metadata.ts).
  await storeDocumentClient(deps.stores, deps.clock, request.client);
  if (consent.remembered) {
    // Written only while the consent still covers it, as `approveIfRemembered` writes: the consent
    // was read before (a pushed request completed meanwhile), and a withdrawal may have committed
    // since, or be under way (attack78).
    if (!(await deps.stores.codes.insertUnderRememberedConsent(stored, sid))) {
      return errorResponse(deps, destinationOf(request), new OAuthError('access_denied', 'The user withdrew the consent to this application, or the account was closed, meanwhile: start the authorization again.'), request.state);
    }
  } else {
    const told = await deps.stores.transaction(async (tx) => {
      // The account is held active while its grant, code, consent and log line are written, as a
      // sign-in holds it for its session: the member's own deletion committed after the consent
      // page read the account active erased every grant and consent but these, left unusable and
      // never deleted. The deletion waits for the hold and erases them, or the hold sees it.
      if (!(await tx.users.holdActive(userId))) return undefined;
      await tx.codes.insertUnderNewGrant(stored, sid);
      const previous = await tx.consents.find(userId, clientId);
      const union = formatScope([...scopeList(previous?.scope ?? ''), ...request.scopes]);
      await tx.consents.save(userId, clientId, union, now);
      // The user approved on the consent page: the account's security log says so (issue 18 item
      // 5), in the same transaction, held as the grant is.
      return deps.securityLog.recordWithin(tx.securityEvents, {
        userId, kind: 'app.authorized', origin: { address: signedIn.session.address, userAgent: signedIn.session.userAgent, locale: consent.pageLocale, requestId: consent.requestId },
        detail: { app: request.client.name, client_id: clientId, scope, ...(previous === undefined ? { first_time: 'yes' } : {}) },
      }, { audit: 'consent.granted', userId, clientId, scope: union });
    });
    if (!told) return errorResponse(deps, destinationOf(request), new OAuthError('access_denied', ACCOUNT_NOT_ACTIVE), request.state);
    await told();
  }
  return codeResponse(deps, request, code);
}
