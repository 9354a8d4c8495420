/**
 * The authorization request's checks, each enforcing one rule, run in order. The first two
 * decide whether we may redirect at all: their errors become an HTML page (seed 4.1 rule 1);
 * every later error is sent back to the verified redirect URI (RFC 6749 4.1.2.1), unless the app is
 * one nobody answers for (`mayRedirectErrors` in flow.ts, RFC 9700 4.11.2).
 */
import { isRegisteredRedirectUri, isWebUrl } from '../clients.js';
import { ClientDocumentError, type ClientMetadataDocuments, type ClientSources, resolveClient } from '../client-metadata.js';
import { OAuthError } from '../../errors.js';
import { type Params, repeatedNames, repeatedParameter, single } from '../params.js';
import { isValidCodeChallenge } from '../pkce.js';
import type { Stores } from '../../stores.js';
import type { Requester } from '../../addresses.js';
import type { SharedKeys } from '../../credentials/shared-keys.js';
import type { Client } from '../ports.js';
import { requestedResource } from '../../api/resource.js';
import { ALL_SCOPES, parseScope, permittedScopes } from '../scopes.js';
import type { Instant } from '../../time.js';
import { type PublishedKeys, verifyIdTokenHint } from '../../oidc/id-token-hint.js';
import { verifyPushedMarker } from './pushed.js';
import {
  type AuthorizationRequest, MAX_STATE_LENGTH, type Prompt, PUSHED_MARKER, REQUEST_PARAMETERS, RESPONSE_MODES, type ResponseMode, holdsLineBreak, requestFields,
} from './request.js';

/** What the checks build up as they pass. */
export interface CheckContext {
  readonly params: Params;
  readonly stores: Stores;
  /** Checks a pushed request's marker (`pushed.ts`). */
  readonly sharedKeys: SharedKeys;
  readonly clientDocuments: ClientMetadataDocuments;
  /** Our published keys, read only for a request that carries an `id_token_hint`. */
  readonly keys: () => Promise<PublishedKeys>;
  readonly issuer: string;
  readonly now: Instant;
  /** `push`: the PAR endpoint checks a request being pushed (RFC 9126 2.1); `browser`: /oauth/authorize. */
  readonly via: 'browser' | 'push';
  /** Who sent the request: a document fetch `checkClient` starts counts against its share. */
  readonly askedBy: Requester;
  client?: Client;
  redirectUri?: string;
  /** The state to echo on an error redirect, once it is known to be sent exactly once. */
  state?: string;
  request: Partial<AuthorizationRequest>;
}

export type Check = (ctx: CheckContext) => void | Promise<void>;

const MAX_NONCE_LENGTH = 1024;
const MAX_LOGIN_HINT_LENGTH = 256;

/** An error shown as a page, never redirected (the client or its redirect URI is not trusted). */
function pageError(description: string): OAuthError {
  return new OAuthError('invalid_request', description, { status: 400 });
}

/** Reads a parameter; a repeated one is an error (RFC 6749 3.1). */
function param(ctx: CheckContext, name: string): string | undefined {
  return single(ctx.params, name);
}

/**
 * RFC 6749 4.1.2.1: an unknown, missing or deactivated client gets no redirect; nor does an app
 * whose client ID metadata document is bad or unreachable (INTERFACE section 13). The app that
 * the authorization request `params` names, or the page error saying why there is none; a
 * document fetch counts against the share of `askedBy`, who sent the request.
 */
export async function requestedClient(sources: ClientSources, params: Params, askedBy: Requester): Promise<Client> {
  let clientId: string | undefined;
  try {
    clientId = single(params, 'client_id');
  } catch {
    throw pageError('The client_id parameter is repeated or malformed.');
  }
  if (clientId === undefined) throw pageError('The request names no application (client_id is missing).');
  let client: Client | undefined;
  try {
    client = await resolveClient(sources, clientId, askedBy);
  } catch (error) {
    if (error instanceof ClientDocumentError) throw pageError(error.message);
    throw error;
  }
  // A deactivated client is treated as unknown (INTERFACE section 2).
  if (!client || client.status !== 'active') throw pageError('The application that sent you here is unknown or no longer active.');
  return client;
}

export const checkClient: Check = async (ctx) => {
  const client = await requestedClient(ctx, ctx.params, ctx.askedBy);
  ctx.client = client;
  ctx.request.client = client;
};

/** Seed 4.1 rule 1, RFC 9700 2.1: exact match against a registered redirect URI, or no redirect. */
export const checkRedirectUri: Check = (ctx) => {
  let uri: string | undefined;
  try {
    uri = param(ctx, 'redirect_uri');
  } catch {
    throw pageError('The redirect_uri parameter is repeated or malformed.');
  }
  if (uri === undefined) throw pageError('The request has no redirect_uri.');
  if (!isRegisteredRedirectUri(ctx.client!, uri)) {
    throw pageError('The redirect_uri is not registered for this application, so you were not sent back to it. If you develop this application: register this exact redirect URI (scheme, host, port, path and query) under Settings > Developer applications.');
  }
  ctx.redirectUri = uri;
  ctx.request.redirectUri = uri;
};

/**
 * RFC 6749 4.1.2.1: the state every error goes back with, when it was sent once and fits. Fails
 * never, so it runs first and even a refused `response_mode` is answered with it. One with a line
 * break goes back too, unchanged in the query (seed 4.1: "returned unchanged"), though it is refused.
 */
export const echoState: Check = (ctx) => {
  const sent = (ctx.params.get('state') ?? []).filter((v) => v !== '');
  if (sent.length === 1 && sent[0]!.length <= MAX_STATE_LENGTH) ctx.state = sent[0];
};

/** RFC 6749 3.1: request parameters must not be repeated. */
export const checkNoRepeats: Check = (ctx) => {
  // RFC 8707 2: `resource` may be sent more than once; `checkResource` reads every value.
  const repeated = repeatedNames(ctx.params, REQUEST_PARAMETERS.filter((name) => name !== 'resource'));
  if (repeated.length > 0) throw repeatedParameter(repeated[0]!);
};

/** RFC 6749 4.1.1 and 4.1.2.1: only `code`. */
export const checkResponseType: Check = (ctx) => {
  const responseType = param(ctx, 'response_type');
  if (responseType === undefined) throw new OAuthError('invalid_request', 'The response_type parameter is required: send response_type=code.');
  if (responseType !== 'code') {
    throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported: the authorization code flow with PKCE (no implicit or hybrid flow).');
  }
};

/**
 * OAuth 2.0 Multiple Response Type Encoding Practices 2.1 and Form Post Response Mode 2: `query`
 * (the code flow's default) or `form_post`. Checked before anything else that could fail (a
 * repeated parameter included), so every later error goes back in the mode asked for; a refused
 * or repeated `response_mode` names no mode, and goes back in the query. A browser cannot post a
 * form to an app's own scheme (RFC 8252 7.1), so `form_post` needs an http or https redirect URI.
 */
export const checkResponseMode: Check = (ctx) => {
  const sent = param(ctx, 'response_mode');
  const mode = sent ?? 'query';
  if (!(RESPONSE_MODES as readonly string[]).includes(mode)) {
    throw new OAuthError('invalid_request', 'The response_mode must be query or form_post: leave it out for query.');
  }
  if (mode === 'form_post' && !isWebUrl(new URL(ctx.redirectUri!))) {
    throw new OAuthError('invalid_request', 'The response_mode form_post needs an https or http redirect URI: a browser cannot post a form to an app\'s own scheme. Leave response_mode out.');
  }
  ctx.request.responseMode = mode as ResponseMode;
};

/** Up to three values, each cut short, for an error description (RFC 6749 5.2 charset: scope tokens fit it). */
function listed(values: readonly string[]): string {
  const shown = values.slice(0, 3).map((v) => (v.length > 40 ? `${v.slice(0, 40)}...` : v));
  return shown.join(', ') + (values.length > 3 ? ` and ${values.length - 3} more` : '');
}

/**
 * RFC 6749 3.3 and INTERFACE section 3: known scopes the client may ask for; OpenID's `email`,
 * `address` and `phone` are dropped from the grant; anything else, or nothing left, is
 * invalid_scope. A missing scope fails as invalid_scope too.
 */
export const checkScope: Check = (ctx) => {
  const permitted = permittedScopes(ctx.client!.allowedScopes);
  const askFor = `ask for one or more of ${ALL_SCOPES.filter((s) => permitted.has(s)).join(', ')}, separated by spaces`;
  const value = param(ctx, 'scope');
  if (value === undefined) throw new OAuthError('invalid_scope', `The scope parameter is required: ${askFor}.`);
  const parsed = parseScope(value);
  if (!parsed) throw new OAuthError('invalid_scope', `The scope parameter is malformed: ${askFor} (one space each, URL-encoded as %20 or +).`);
  if ('unknown' in parsed) throw new OAuthError('invalid_scope', `Unknown scope ${listed(parsed.unknown)}: ${askFor}.`);
  const refused = parsed.scopes.filter((s) => !permitted.has(s));
  if (refused.length > 0) throw new OAuthError('invalid_scope', `This application is not registered for ${listed(refused)}: ${askFor}.`);
  if (parsed.scopes.length === 0) {
    throw new OAuthError('invalid_scope', `This service never grants ${listed(parsed.dropped)}, and nothing else was asked for: ${askFor}.`);
  }
  ctx.request.scopes = parsed.scopes;
  ctx.request.droppedScopes = parsed.dropped;
};

/** RFC 7636 4.3 and 4.4.1, RFC 9700 2.1.1: S256 only; required for public clients. */
export const checkPkce: Check = (ctx) => {
  const challenge = param(ctx, 'code_challenge');
  const method = param(ctx, 'code_challenge_method');
  if (challenge === undefined) {
    if (method !== undefined) throw new OAuthError('invalid_request', 'code_challenge_method was sent without code_challenge: send both, or neither.');
    if (ctx.client!.type === 'public') {
      throw new OAuthError('invalid_request', 'Public clients must use PKCE: send code_challenge (the base64url SHA-256 of a random code_verifier) and code_challenge_method=S256.');
    }
    ctx.request.codeChallenge = null;
    return;
  }
  if (method !== 'S256') {
    throw new OAuthError('invalid_request', 'code_challenge_method must be S256 (plain is not accepted, and there is no default): send code_challenge_method=S256.');
  }
  if (!isValidCodeChallenge(challenge)) {
    throw new OAuthError('invalid_request', 'The code_challenge is malformed: send the base64url SHA-256 of the code_verifier, 43 characters, without padding.');
  }
  ctx.request.codeChallenge = challenge;
};

/** Whether the request carries a PKCE challenge. `checkPkce` decides it, so it must run first. */
function carriesPkce(ctx: CheckContext): boolean {
  if (ctx.request.codeChallenge === undefined) throw new Error('checkPkce must run before this check');
  return ctx.request.codeChallenge !== null;
}

/** A `state` or `nonce` with a line break, refused (`holdsLineBreak`: `a\rb` reached the app as `a\r\nb`). */
function refuseLineBreaks(name: 'state' | 'nonce', value: string): void {
  if (holdsLineBreak(value)) {
    throw new OAuthError('invalid_request', `The ${name} parameter holds a line break, which a browser's form would change on its way back: send printable characters (RFC 6749 A.5).`);
  }
}

/**
 * Seed 4.1: `state` protects the client against CSRF, so it is required, unless the request
 * carries a PKCE challenge, which does that job (RFC 9700 2.1.1). Runs after `checkPkce`.
 */
export const checkState: Check = (ctx) => {
  const state = param(ctx, 'state');
  if (state !== undefined && state.length > MAX_STATE_LENGTH) {
    throw new OAuthError('invalid_request', `The state parameter is too long: at most ${MAX_STATE_LENGTH} characters.`);
  }
  if (state !== undefined) refuseLineBreaks('state', state);
  if (state === undefined && !carriesPkce(ctx)) {
    throw new OAuthError('invalid_request', 'The state parameter is required without PKCE: send a random state, or a code_challenge with code_challenge_method=S256.');
  }
  ctx.request.state = state ?? null;
};

/**
 * INTERFACE section 5: `openid` requires a nonce, unless the request carries a PKCE challenge
 * (OpenID Connect Core 3.1.2.1: nonce is optional in the code flow). Runs after `checkPkce`.
 */
export const checkNonce: Check = (ctx) => {
  const nonce = param(ctx, 'nonce');
  if (nonce !== undefined && nonce.length > MAX_NONCE_LENGTH) {
    throw new OAuthError('invalid_request', `The nonce parameter is too long: at most ${MAX_NONCE_LENGTH} characters.`);
  }
  if (nonce !== undefined) refuseLineBreaks('nonce', nonce);
  if (ctx.request.scopes!.includes('openid') && nonce === undefined && !carriesPkce(ctx)) {
    throw new OAuthError('invalid_request', 'The nonce parameter is required with the openid scope without PKCE: send a random nonce, or a code_challenge with code_challenge_method=S256.');
  }
  ctx.request.nonce = nonce ?? null;
};

/** OpenID Connect Core 3.1.2.1: prompt is a set of none, login, consent; none stands alone. */
export const checkPrompt: Check = (ctx) => {
  const value = param(ctx, 'prompt');
  const prompt = new Set<Prompt>();
  for (const item of value === undefined ? [] : value.split(' ')) {
    if (item !== 'none' && item !== 'login' && item !== 'consent') {
      throw new OAuthError('invalid_request', 'The prompt parameter has an unsupported value: use none, login or consent, separated by spaces.');
    }
    prompt.add(item);
  }
  if (prompt.has('none') && prompt.size > 1) throw new OAuthError('invalid_request', 'prompt=none cannot be combined with other values: send it alone.');
  ctx.request.prompt = prompt;
};

/** OpenID Connect Core 3.1.2.1: max_age is a number of seconds. */
export const checkMaxAge: Check = (ctx) => {
  const value = param(ctx, 'max_age');
  if (value !== undefined && !/^\d{1,9}$/.test(value)) throw new OAuthError('invalid_request', 'max_age must be a whole number of seconds.');
  ctx.request.maxAge = value === undefined ? null : Number(value);
};

export const checkLoginHint: Check = (ctx) => {
  const value = param(ctx, 'login_hint');
  if (value !== undefined && value.length > MAX_LOGIN_HINT_LENGTH) {
    throw new OAuthError('invalid_request', `The login_hint parameter is too long: at most ${MAX_LOGIN_HINT_LENGTH} characters.`);
  }
  ctx.request.loginHint = value ?? null;
};

/**
 * OpenID Connect Core 3.1.2.1: `ui_locales` is read by the pages, not here, but is held to the
 * limits of every parameter, since sign-in, the consent form and a pushed request carry it.
 */
export const checkUiLocales: Check = (ctx) => {
  param(ctx, 'ui_locales');
};

/**
 * OpenID Connect Core 3.1.2.1: an `id_token_hint` names who the app expects to be signed in; the
 * flow answers login_required for anyone else. It must be an id_token we issued to this app
 * (expired ones too: it names a past sign-in). One signed by a key we no longer publish cannot be
 * told from a forgery, so whom it names is unknown and nobody signed in matches it (attack114):
 * counted as no hint, an app's id_token from before a rotation got a code for whoever had signed
 * in since; read for its unverified `sub`, a forgery would tell an app whether any member it
 * names is the one signed in on the browser.
 */
export const checkIdTokenHint: Check = async (ctx) => {
  const value = param(ctx, 'id_token_hint');
  ctx.request.hintedSubject = null;
  if (value === undefined) return;
  const checked = await verifyIdTokenHint(await ctx.keys(), ctx.issuer, value, ctx.now);
  if (checked.kind !== 'verified') {
    ctx.request.hintedSubject = { unknown: true };
    return;
  }
  if (!checked.hint.audience.includes(ctx.client!.clientId)) {
    throw new OAuthError('invalid_request', 'The id_token_hint was issued to another application: send an id_token this application received.');
  }
  ctx.request.hintedSubject = checked.hint.sub;
};

/** An RFC 7638 SHA-256 thumbprint: 32 bytes, base64url without padding. */
const JKT_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** RFC 9449 10: `dpop_jkt` binds the code to a DPoP key; the token request must prove it. */
export const checkDpopJkt: Check = (ctx) => {
  const value = param(ctx, 'dpop_jkt');
  if (value !== undefined && !JKT_SHAPE.test(value)) {
    throw new OAuthError('invalid_request', 'The dpop_jkt parameter must be the base64url SHA-256 JWK thumbprint (RFC 7638) of the DPoP key: 43 characters.');
  }
  ctx.request.dpopJkt = value ?? null;
};

/** OpenID Connect Core 6 and 3.1.2.6: request objects are not supported (`request_parameter_supported: false`). */
export const checkRequestObject: Check = (ctx) => {
  if (ctx.params.has('request') && (ctx.params.get('request') ?? []).some((v) => v !== '')) {
    throw new OAuthError('request_not_supported', 'Request objects (the request parameter) are not supported: send the parameters themselves, or push them to the PAR endpoint (RFC 9126).');
  }
};

/**
 * RFC 9126 5: a client that requires pushed authorization requests gets none that were not
 * pushed. A request opened from its `request_uri`, or carried on with a valid marker, was.
 */
export const checkPushed: Check = async (ctx) => {
  ctx.request.pushed = null;
  if (ctx.via === 'push') return;
  const marker = param(ctx, PUSHED_MARKER);
  if (marker !== undefined) {
    ctx.request.pushed = await verifyPushedMarker(ctx.sharedKeys, requestFields(ctx.params), marker, ctx.now) ?? null;
  }
  if (ctx.request.pushed === null && ctx.client!.requirePushedAuthorizationRequests) {
    throw new OAuthError('invalid_request', marker === undefined
      ? 'This application requires pushed authorization requests (RFC 9126 5): push the parameters to the PAR endpoint (POST /api/oauth/par) and send only client_id and the request_uri it answers with.'
      : 'This authorization request took too long to complete (or was changed on the way): start again from the application.');
  }
};

/** RFC 8707 2: the only resource is the resource API; anything else is invalid_target. */
export const checkResource: Check = (ctx) => {
  ctx.request.resource = requestedResource(ctx.params, ctx.issuer);
};

/** Checks whose failure is shown as a page. */
export const PAGE_CHECKS: readonly Check[] = [checkClient, checkRedirectUri];

/** Checks whose failure is redirected back with `error`, `state` and `iss`. */
export const REDIRECT_CHECKS: readonly Check[] = [
  echoState, checkResponseMode, checkNoRepeats, checkPushed, checkRequestObject, checkResponseType, checkScope, checkResource, checkPkce, checkState, checkNonce,
  checkPrompt, checkMaxAge, checkLoginHint, checkIdTokenHint, checkUiLocales, checkDpopJkt,
];
