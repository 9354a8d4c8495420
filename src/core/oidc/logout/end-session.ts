/**
 * OpenID Connect RP-Initiated Logout 1.0 at `/oauth/logout` (the `end_session_endpoint`;
 * INTERFACE section 5): an app sends the browser here to sign the person out of the site too,
 * and names where to come back to. The request is checked in steps, each one rule; the outcome
 * is one of three: end the session now, ask the person first, or there is nothing to end.
 *
 * Decisions (docs/oidc.md, "Logout"):
 * - The session ends without a question only when the `id_token_hint` verifies and names the
 *   signed-in user and, when it carries one, this very session (`sid`): RP-Initiated Logout 1.0
 *   section 2 requires the question otherwise. Anything else gets a confirmation page whose form
 *   carries the CSRF token; a GET never ends a session on its own.
 * - The browser is sent to `post_logout_redirect_uri` only when it is registered for the app,
 *   matched exactly, an `id_token_hint` that verifies was issued to that same app (section 3:
 *   without the hint the OP must not redirect), and the hint names the person signed in here, whose
 *   session the request ends or keeps. Anyone can register an app with any address and hold hints
 *   of their own; without the last rule they could bounce every visitor through our origin to it
 *   (an open redirect). A refused redirect still signs the person out, on our own page, which says why.
 * - An `id_token_hint` that does not verify (altered, unsigned, another issuer, a `client_id`
 *   that is not its audience) is refused with an error page, and nothing ends. One signed by a
 *   key no longer published counts as absent: the person is asked.
 */
import { findClient, isRegisteredPostLogoutRedirectUri } from '../../oauth/clients.js';
import { isUnreviewedApp } from '../../oauth/client-metadata.js';
import { OAuthError } from '../../errors.js';
import { MAX_STATE_LENGTH, appendQuery, holdsLineBreak } from '../../oauth/authorize/request.js';
import { type IdTokenHint, type PublishedKeys, verifyIdTokenHint } from '../id-token-hint.js';
import { type Params, repeatedNames, single } from '../../oauth/params.js';
import type { Session, User } from '../../accounts/ports.js';
import type { Client } from '../../oauth/ports.js';
import type { Stores } from '../../stores.js';
import { sessionSid } from '../../accounts/sessions.js';
import type { Instant } from '../../time.js';

export const END_SESSION_PATH = '/oauth/logout';

/** Section 2's parameters; `ui_locales` and `logout_hint` are read and ignored. */
export const END_SESSION_PARAMETERS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales', 'logout_hint'] as const;

/** A request that passed every check. */
export interface EndSessionRequest {
  /** The app that sent the person, when the hint or `client_id` names an active one. */
  client: Client | undefined;
  /** The verified hint, if one was sent and could be verified. */
  hint: IdTokenHint | undefined;
  /** The verified hint as sent, for the confirmation form to carry. */
  hintToken: string | undefined;
  /** Registered for `client`, exactly: where to send the browser afterwards. */
  postLogoutRedirectUri: string | undefined;
  /**
   * Why a `post_logout_redirect_uri` that was sent is not returned to: not registered for the app
   * (or no app was named), or registered but no verified `id_token_hint` of that app came with it.
   */
  refusedRedirect: RefusedRedirect | undefined;
  state: string | undefined;
}

/**
 * Why the browser is not sent back: the URI is not registered for the app (or no app was named);
 * no verified hint of that app came with it; or the hint names someone other than the person
 * signed in here (or nobody is).
 */
export type RefusedRedirect = 'unregistered' | 'no_hint' | 'not_the_person';

export interface EndSessionContext {
  readonly params: Params;
  readonly stores: Stores;
  readonly issuer: string;
  readonly keys: PublishedKeys;
  readonly now: Instant;
  request: Partial<EndSessionRequest>;
  /** `client_id` as sent. */
  clientId?: string;
}

export type EndSessionCheck = (ctx: EndSessionContext) => void | Promise<void>;

function pageError(description: string): OAuthError {
  return new OAuthError('invalid_request', description, { status: 400 });
}

function param(ctx: EndSessionContext, name: (typeof END_SESSION_PARAMETERS)[number]): string | undefined {
  try {
    return single(ctx.params, name);
  } catch {
    throw pageError(`The ${name} parameter is too long or malformed.`);
  }
}

/** RFC 6749 3.1 as the authorization endpoint has it: no parameter of the request twice. */
export const checkNoRepeats: EndSessionCheck = (ctx) => {
  const repeated = repeatedNames(ctx.params, END_SESSION_PARAMETERS);
  if (repeated.length > 0) throw pageError(`The ${repeated[0]} parameter is repeated.`);
};

/** Section 2, `id_token_hint`: one of ours, signature and issuer checked, expiry not. */
export const checkIdTokenHint: EndSessionCheck = async (ctx) => {
  const token = param(ctx, 'id_token_hint');
  if (token === undefined) return;
  const checked = await verifyIdTokenHint(ctx.keys, ctx.issuer, token, ctx.now);
  if (checked.kind === 'verified') {
    ctx.request.hint = checked.hint;
    ctx.request.hintToken = token;
  }
};

/**
 * Section 2, `client_id`: it must be the hint's audience when both are sent. The app is the one
 * they name, if it is active; an unknown or deactivated one is no app (nothing to return to).
 */
export const checkClient: EndSessionCheck = async (ctx) => {
  const clientId = param(ctx, 'client_id');
  const hint = ctx.request.hint;
  if (clientId !== undefined && hint !== undefined && !hint.audience.includes(clientId)) {
    throw pageError('The client_id is not the application the id_token_hint was issued to.');
  }
  const named = clientId ?? hint?.audience[0];
  const client = named === undefined ? undefined : await findClient(ctx.stores, named);
  ctx.request.client = client && client.status === 'active' ? client : undefined;
};

/**
 * Section 3: a post-logout redirect URI is used only when it is registered for the app, matched
 * exactly, and a verified `id_token_hint` was issued to that app (`checkClient` made the app the
 * hint's audience when both are named).
 */
export const checkPostLogoutRedirectUri: EndSessionCheck = (ctx) => {
  const uri = param(ctx, 'post_logout_redirect_uri');
  if (uri === undefined) return;
  const { client, hint } = ctx.request;
  if (client === undefined || !isRegisteredPostLogoutRedirectUri(client, uri)) {
    ctx.request.refusedRedirect = 'unregistered';
  } else if (hint === undefined || !hint.audience.includes(client.clientId)) {
    ctx.request.refusedRedirect = 'no_hint';
  } else {
    ctx.request.postLogoutRedirectUri = uri;
  }
};

/** Section 2, `state`: passed back on the redirect as sent. */
export const checkState: EndSessionCheck = (ctx) => {
  const state = param(ctx, 'state');
  if (state !== undefined && state.length > MAX_STATE_LENGTH) throw pageError('The state parameter is too long.');
  // The confirmation form carries it in a hidden field: it would come back changed.
  if (state !== undefined && holdsLineBreak(state)) throw pageError('The state parameter holds a line break, which the confirmation form would change on its way back.');
  ctx.request.state = state;
};

export const END_SESSION_CHECKS: readonly EndSessionCheck[] = [checkNoRepeats, checkIdTokenHint, checkClient, checkPostLogoutRedirectUri, checkState];

/** Runs every check in order; an error is an `OAuthError` to show as a page, never a redirect. */
export async function validateEndSession(ctx: Omit<EndSessionContext, 'request'>): Promise<EndSessionRequest> {
  const context: EndSessionContext = { ...ctx, request: {} };
  for (const check of END_SESSION_CHECKS) await check(context);
  const { client, hint, hintToken, postLogoutRedirectUri, refusedRedirect, state } = context.request;
  return { client, hint, hintToken, postLogoutRedirectUri, refusedRedirect, state };
}

export interface SignedIn {
  user: User;
  session: Session;
}

export type EndSessionDecision =
  /** The hint names this person and session: end it now (section 2 allows it without asking). */
  | 'end'
  /** Ask first (section 2: MUST, without a hint that matches the current session and person). */
  | 'confirm'
  /** Nobody is signed in here: nothing to end. */
  | 'nothing';

/** Whether the verified hint names the person signed in here. */
function hintNames(hint: IdTokenHint | undefined, signedIn: SignedIn | undefined): boolean {
  return hint !== undefined && signedIn !== undefined && hint.sub === String(signedIn.user.id);
}

export function decideEndSession(request: EndSessionRequest, signedIn: SignedIn | undefined): EndSessionDecision {
  if (!signedIn) return 'nothing';
  const { hint } = request;
  const sameUser = hintNames(hint, signedIn);
  // The hint must name this very session: one without a `sid` (from a grant older than `sid`)
  // could come from any earlier sign-in, so the person is asked.
  const sameSession = hint?.sid !== undefined && hint.sid === sessionSid(signedIn.session);
  return sameUser && sameSession ? 'end' : 'confirm';
}

/**
 * Where the browser goes afterwards: the registered URI with `state` (section 3), when the app's
 * hint names `signedIn`, the person signed in before this request; or nowhere.
 */
export function postLogoutLocation(request: EndSessionRequest, signedIn: SignedIn | undefined): string | undefined {
  if (request.postLogoutRedirectUri === undefined || !hintNames(request.hint, signedIn)) return undefined;
  return appendQuery(request.postLogoutRedirectUri, { state: request.state });
}

/** Why a `post_logout_redirect_uri` that was sent is not returned to, for the page to say; `undefined` when it is. */
export function redirectRefusal(request: EndSessionRequest, signedIn: SignedIn | undefined): RefusedRedirect | undefined {
  if (request.refusedRedirect !== undefined) return request.refusedRedirect;
  return request.postLogoutRedirectUri !== undefined && !hintNames(request.hint, signedIn) ? 'not_the_person' : undefined;
}

/**
 * The app the pages of signing out may name and link (its name, its homepage): one someone answers
 * for (`isUnreviewedApp`), or one whose verified hint names the person signed in here, who used it.
 * Any other app is named by whoever wrote the link, `client_id` alone: anyone can register one,
 * call it after the site, and have this site's own page send people to its homepage (attack122).
 */
export function appToName(request: EndSessionRequest, signedIn: SignedIn | undefined): Client | undefined {
  const { client, hint } = request;
  if (client === undefined || !isUnreviewedApp(client)) return client;
  return hintNames(hint, signedIn) && hint!.audience.includes(client.clientId) ? client : undefined;
}

/**
 * The confirmation form's hidden fields: the request, re-validated from scratch when it comes
 * back, so the verified hint comes along (without it the answer could not redirect).
 */
export function confirmationFields(request: EndSessionRequest): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  if (request.hintToken !== undefined) fields.push(['id_token_hint', request.hintToken]);
  if (request.client) fields.push(['client_id', request.client.clientId]);
  if (request.postLogoutRedirectUri !== undefined) fields.push(['post_logout_redirect_uri', request.postLogoutRedirectUri]);
  if (request.state !== undefined) fields.push(['state', request.state]);
  return fields;
}
