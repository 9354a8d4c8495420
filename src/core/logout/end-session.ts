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
 * - `post_logout_redirect_uri` must be registered for the app named by the hint or `client_id`,
 *   matched exactly (section 3). One that is not is never redirected to; the person is still
 *   signed out, and told the app could not be returned to.
 * - An `id_token_hint` that does not verify (altered, unsigned, another issuer, a `client_id`
 *   that is not its audience) is refused with an error page, and nothing ends. One signed by a
 *   key no longer published counts as absent: the person is asked.
 */
import { findClient, isRegisteredPostLogoutRedirectUri } from '../clients.js';
import { OAuthError } from '../errors.js';
import { appendQuery } from '../authorize/request.js';
import { type IdTokenHint, type PublishedKeys, verifyIdTokenHint } from '../oidc/id-token-hint.js';
import { type Params, repeatedNames, single } from '../params.js';
import type { Client, Session, Stores, User } from '../ports.js';
import { sessionSid } from '../sessions.js';
import type { Instant } from '../time.js';

export const END_SESSION_PATH = '/oauth/logout';

/** Section 2's parameters; `ui_locales` and `logout_hint` are read and ignored. */
export const END_SESSION_PARAMETERS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales', 'logout_hint'] as const;

const MAX_STATE_LENGTH = 1024;

/** A request that passed every check. */
export interface EndSessionRequest {
  /** The app that sent the person, when the hint or `client_id` names an active one. */
  client: Client | undefined;
  /** The verified hint, if one was sent and could be verified. */
  hint: IdTokenHint | undefined;
  /** Registered for `client`, exactly: where to send the browser afterwards. */
  postLogoutRedirectUri: string | undefined;
  /** A `post_logout_redirect_uri` was sent that is not registered (or no app was named): no redirect. */
  refusedRedirect: boolean;
  state: string | undefined;
}

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
  if (checked.kind === 'verified') ctx.request.hint = checked.hint;
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

/** Section 3: only a post-logout redirect URI registered for the app, matched exactly, is used. */
export const checkPostLogoutRedirectUri: EndSessionCheck = (ctx) => {
  const uri = param(ctx, 'post_logout_redirect_uri');
  const client = ctx.request.client;
  if (uri !== undefined && client !== undefined && isRegisteredPostLogoutRedirectUri(client, uri)) {
    ctx.request.postLogoutRedirectUri = uri;
    ctx.request.refusedRedirect = false;
  } else {
    ctx.request.refusedRedirect = uri !== undefined;
  }
};

/** Section 2, `state`: passed back on the redirect as sent. */
export const checkState: EndSessionCheck = (ctx) => {
  const state = param(ctx, 'state');
  if (state !== undefined && state.length > MAX_STATE_LENGTH) throw pageError('The state parameter is too long.');
  ctx.request.state = state;
};

export const END_SESSION_CHECKS: readonly EndSessionCheck[] = [checkNoRepeats, checkIdTokenHint, checkClient, checkPostLogoutRedirectUri, checkState];

/** Runs every check in order; an error is an `OAuthError` to show as a page, never a redirect. */
export async function validateEndSession(ctx: Omit<EndSessionContext, 'request'>): Promise<EndSessionRequest> {
  const context: EndSessionContext = { ...ctx, request: {} };
  for (const check of END_SESSION_CHECKS) await check(context);
  const { client, hint, postLogoutRedirectUri, refusedRedirect, state } = context.request;
  return { client, hint, postLogoutRedirectUri, refusedRedirect: refusedRedirect ?? false, state };
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

export function decideEndSession(request: EndSessionRequest, signedIn: SignedIn | undefined): EndSessionDecision {
  if (!signedIn) return 'nothing';
  const { hint } = request;
  const sameUser = hint !== undefined && hint.sub === String(signedIn.user.id);
  // The hint must name this very session: one without a `sid` (from a grant older than `sid`)
  // could come from any earlier sign-in, so the person is asked.
  const sameSession = hint?.sid !== undefined && hint.sid === sessionSid(signedIn.session);
  return sameUser && sameSession ? 'end' : 'confirm';
}

/** Where the browser goes afterwards: the registered URI with `state` (section 3), or nowhere. */
export function postLogoutLocation(request: Pick<EndSessionRequest, 'postLogoutRedirectUri' | 'state'>): string | undefined {
  if (request.postLogoutRedirectUri === undefined) return undefined;
  return appendQuery(request.postLogoutRedirectUri, { state: request.state });
}

/** The confirmation form's hidden fields: the request, re-validated from scratch when it comes back. */
export function confirmationFields(request: EndSessionRequest): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  if (request.client) fields.push(['client_id', request.client.clientId]);
  if (request.postLogoutRedirectUri !== undefined) fields.push(['post_logout_redirect_uri', request.postLogoutRedirectUri]);
  if (request.state !== undefined) fields.push(['state', request.state]);
  return fields;
}
