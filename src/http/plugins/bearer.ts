/**
 * The resource API's gate, as one `onRequest` hook for the routes of one plugin: bearer
 * authentication (RFC 6750) or DPoP (RFC 9449 7), the per-token and per-address rate limits, the scope check, and the
 * headers every answer carries (`Cache-Control: no-store`, `Vary: Authorization`, `X-RateLimit-*`
 * and the IETF `RateLimit-Policy` and `RateLimit` beside them).
 * A route opts in with `config: { bearerScope }`: a scope, or `''` for any valid token.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rateLimitHeaders, rateLimited } from '../../core/api/limits.js';
import { BEARER_REFUSALS, type Bearer, type TokenElsewhere, audienceRefusal, authenticateBearer, meantForValidHolder, scopeRefusal, withResourceMetadata } from '../../core/api/bearer.js';
import { OAuthError } from '../../core/errors.js';
import type { Scope } from '../../core/oauth/scopes.js';
import type { Instant } from '../../core/time.js';
import { CORS_HEADERS } from './cors.js';
import { presentedProof } from './dpop.js';
import { sendError } from './errors.js';
import type { HeaderSet } from './security-headers.js';
import { lazyClientAddress } from '../client-address.js';
import { fieldRepeats } from '../repeated-fields.js';
import { methodsBut } from '../route-methods.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a resource API route needs; `''` for any valid token; absent for no token. */
    bearerScope?: Scope | '';
    /**
     * The `Authorization` header is optional: a request with it is checked and counted, one
     * without passes unread. `'unlessBlocked'`: refused only when its address is refused for now
     * (`GATED_NOT_FOUND`). `'public'`: a public document, served to every address, one refused for
     * its guesses too, as the RFC 9728 metadata is: without a token it guesses nothing, and a
     * public answer may be served from any cache anyway.
     */
    bearerOptional?: 'public' | 'unlessBlocked';
  }
  interface FastifyRequest {
    /** Set by the bearer gate on resource API routes. */
    bearer?: Bearer;
    /** Set by `BearerGate.refusedInAnswer`: a refusal sent with a success status, no use of the token. */
    bearerRefusedInAnswer?: true;
  }
}

/**
 * The options of a route that is no address: behind the gate, a token sent in the header is
 * checked and counted (INTERFACE section 7: every answer to a valid token carries its rate-limit
 * fields); a request without the header passes untouched, whatever its query or body holds, unless
 * its address is refused for now; then the not-found handler answers (404, or 405 with `Allow`).
 */
const GATED_NOT_FOUND = {
  config: { bearerScope: '', bearerOptional: 'unlessBlocked', notFound: true },
  handler: (_request: FastifyRequest, reply: FastifyReply) => reply.callNotFound(),
} as const;

/**
 * Registers the routes that are no address (`GATED_NOT_FOUND`) behind `app`'s gate: for each
 * `url`, every method but those `taken` by its routes (and OPTIONS, the preflight's). They live in
 * a context of their own that reads no body: a body no route wants is neither read (an anonymous
 * request that is answered 404 or 405 costs no read of up to the body limit) nor refused (no 400
 * or 415 where the answer is 404 or 405).
 */
export async function registerGatedNotFound(app: FastifyInstance, routes: ReadonlyArray<{ url: string; taken: readonly string[] }>): Promise<void> {
  await app.register(async (catchAll) => {
    catchAll.removeAllContentTypeParsers();
    catchAll.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    for (const { url, taken } of routes) catchAll.route({ method: methodsBut(catchAll, ...taken, 'OPTIONS'), url, ...GATED_NOT_FOUND });
  });
}

/** The authenticated token of a request that passed the gate. */
export function requestBearer(request: FastifyRequest): Bearer {
  if (!request.bearer) throw new Error('route has no bearerScope: the bearer gate did not run');
  return request.bearer;
}

/**
 * Where the request may carry a token the API reads none from (RFC 6750 2.2 and 2.3 are not
 * supported): `access_token` in the query string; a form body, whose only use here would be one
 * (read for it where the routes read a form, `carriesToken`, else left unread); `undefined`
 * for neither.
 */
function tokenOutsideHeader(request: FastifyRequest): 'query' | 'form' | undefined {
  // The parameter as the query is read (`queryCarriesToken`), the same test as beside the header:
  // `access%5Ftoken=` or a bare `access_token` is the parameter too, told so, never "no token".
  if (queryCarriesToken(request)) return 'query';
  return request.method === 'POST' && isForm(request) ? 'form' : undefined;
}

/**
 * Whether the request's body is a form as the form parsers read it: by Fastify's reading of its
 * Content-Type (`request.mediaType`, the one that picks the parser), so a form is never taken for
 * another type. A media type is case-insensitive (RFC 9110 8.3.1), and Fastify trims every blank
 * around it, a no-break space too: a form the parser reads is judged here, whatever surrounds it.
 */
export function isForm(request: FastifyRequest): boolean {
  return request.mediaType === 'application/x-www-form-urlencoded';
}

/**
 * Whether parsed fields (a query string, a form body as read) carry `access_token` (RFC 6750 2.2's
 * and 2.3's parameter), with a value or none, its name as decoded (`access%5Ftoken` too).
 */
function carriesToken(fields: unknown): boolean {
  return typeof fields === 'object' && fields !== null && Object.hasOwn(fields, 'access_token');
}

/** Whether the request's query string carries `access_token`; its keys are looked at only when it has one (a plain GET /me has none). */
function queryCarriesToken(request: FastifyRequest): boolean {
  return request.url.includes('?') && carriesToken(request.query);
}

/**
 * Whether the request sent credentials in the `Authorization` header. A field with no value
 * (`Authorization:`, or only blanks, which Node trims) carries none: it is answered as a request
 * without the header (`authorizationToken` takes it as none too), so it is no way past a route's
 * 404 or 405 to the gate's 401, nor a way to hide a token in the query. A second field is still
 * sent, whatever the first holds: `admit` refuses the repeat (Node keeps only the first value).
 */
function headerSent(request: FastifyRequest): boolean {
  const { authorization } = request.headers;
  return authorization !== undefined && (authorization !== '' || fieldRepeats(request, 'authorization'));
}

/** What a route behind the gate can still ask of it once the request is read. */
export interface BearerGate {
  /**
   * The 403 `insufficient_scope` answer (RFC 6750 3.1), sent with the gate's challenge, when the
   * request's token lacks `scope`; `undefined` when it holds it. For a need the body tells (an MCP
   * tool), which the gate cannot know before the body is read.
   */
  requireScope(request: FastifyRequest, reply: FastifyReply, scope: Scope): Promise<FastifyReply> | undefined;
  /**
   * The answer, sent with a success status, refuses the request (MCP's JSON-RPC errors and a
   * tool's `isError` result, answered 200 as its transport answers them): no use of the token.
   */
  refusedInAnswer(request: FastifyRequest): void;
}

/**
 * Gates every route of `app`; `securityHeaders` join the headers every answer carries. With
 * `resourceMetadata`, every challenge names that RFC 9728 metadata address (`resource_metadata`).
 * `resource`: the RFC 8707 identifier of what the routes serve (`null`: none), which a token
 * issued for a named resource must match (`audienceRefusal`). `readsForm`: where the routes'
 * context reads a form body POSTed to them. `'always'`: the routes take one (UserInfo, OpenID
 * Connect Core 5.3.1), so a form sent without the header is judged once it is read: told that a
 * token in it is not accepted when it carries `access_token`, else that the request has no token
 * (RFC 6750 3.1). `'besideHeader'`: the routes take none (MCP), and a form is read only once the
 * header's token was admitted. Either way a form read beside an admitted token is refused when it
 * carries `access_token` too (RFC 6750 2: one method a request). Absent, no form body is read.
 * Where none is read without the header, one sent so to a route that takes its method is refused
 * unread, told that no form is read here (`formUnread`), with the same challenge; one to a route
 * that is no address (`GATED_NOT_FOUND`) gets that route's 404 or 405. A GET's body is never read
 * (RFC 9110 9.3.1: it cannot alter the request's meaning; RFC 6750 2.2 excludes GET). Every gate
 * records its admitted tokens' uses (`onSend`, below).
 */
export function registerBearerGate(app: FastifyInstance, securityHeaders: HeaderSet, options: { resourceMetadata?: string; resource: string | null; readsForm?: 'always' | 'besideHeader' }): BearerGate {
  const { deps } = app;
  const extended = new WeakMap<OAuthError, OAuthError>();
  const { resourceMetadata, resource } = options;
  const refuse = (refusal: OAuthError, request: FastifyRequest, reply: FastifyReply) =>
    sendError(resourceMetadata === undefined ? refusal : withResourceMetadata(refusal, resourceMetadata, extended), request, reply);
  const limits = deps.apiLimits;
  // Built once; refusals are sent from here, not thrown through the error handler (issue 8).
  // Browser apps call the API from their own origin with the token in a header: CORS, no credentials.
  const answerHeaders = { ...securityHeaders, 'cache-control': 'no-store', vary: 'Authorization', ...CORS_HEADERS };
  const addressLimited = rateLimited('Too many unknown, expired or revoked tokens from this address; wait a minute.');
  const tokenLimited = rateLimited(`This token made more than ${deps.settings.rateLimitPerMinute} requests this minute; retry after the window resets.`);
  const recordUse = async (request: FastifyRequest, bearer: Bearer, now: Instant) => {
    try {
      await deps.tokenUses.record(deps.stores, bearer, now);
    } catch (error) {
      // "Last used" is informative; failing to write it must not fail the read.
      request.log.warn({ err: error }, 'could not record token use');
    }
  };
  const refuseLimited = (request: FastifyRequest, reply: FastifyReply, limited: { address: string } | 'token') => {
    deps.metrics.rateLimitRefusals.inc({ scope: limited === 'token' ? 'token' : 'address' });
    if (limited === 'token') return sendError(tokenLimited, request, reply);
    // A token's refusal already carries its decision's fields; an address's gets its own policy's.
    reply.headers(limits.addressHeaders(limited.address, deps.clock.now()));
    return sendError(addressLimited, request, reply);
  };

  /**
   * Authenticates the request's token and admits it (`request.bearer`) for `scope` (`''`: any),
   * or sends the refusal. `elsewhere`: what a request without the header carries where the API
   * reads no token (`TokenElsewhere`).
   */
  const admit = async (request: FastifyRequest, reply: FastifyReply, scope: Scope | '', elsewhere?: TokenElsewhere) => {
    const { authorization } = request.headers;
    const now = deps.clock.now();
    const addressOf = lazyClientAddress(request);
    // A refused address is still served the tokens that bear the service's mark (`TokenMarks`),
    // and told a valid one's nonce (RFC 9449 9: a DPoP client idle for minutes needs a new one);
    // any other request from it is refused, before any lookup, and counted no further.
    const blocked = limits.isBlocked(addressOf, now);
    const bearer = authorization !== undefined && fieldRepeats(request, 'authorization') ? BEARER_REFUSALS.repeatedHeader
      : await authenticateBearer(deps, authorization, elsewhere, () => presentedProof(request, deps.settings.baseUrl), blocked);
    if (bearer instanceof OAuthError) {
      if (blocked ? !meantForValidHolder(bearer) : !(await limits.hitFailure(addressOf, bearer, now))) return refuseLimited(request, reply, { address: addressOf() });
      return refuse(bearer, request, reply);
    }
    const decision = await limits.hitToken(bearer, now);
    reply.headers(rateLimitHeaders(decision, now));
    if (!decision.allowed) return refuseLimited(request, reply, 'token');
    // RFC 9449 9: a newer nonce for the client's next proof.
    if (bearer.dpopNonce !== undefined) reply.header('dpop-nonce', bearer.dpopNonce);
    // RFC 6750 2 and 3.1: one method a request, so a token in the header beside `access_token` in
    // the query string is 400 `invalid_request`. Judged here, once the header's token is accepted:
    // a refused one was told why first (and counted against its address as any failure); this
    // refusal is a valid holder's malformed request, counted against its token (the answer carries
    // its rate-limit fields, INTERFACE section 7) and never against the address, like a missing
    // scope: it guesses nothing, so it is no `hitFailure`, and it needs no `meantForValidHolder`
    // (an address refused for now got here only with a token bearing the service's mark).
    if (queryCarriesToken(request)) {
      return refuse(bearer.scheme === 'DPoP' ? BEARER_REFUSALS.alsoInQueryDpop : BEARER_REFUSALS.alsoInQuery, request, reply);
    }
    const refusal = audienceRefusal(bearer, resource) ?? scopeRefusal(bearer, scope === '' ? undefined : scope);
    if (refusal) return refuse(refusal, request, reply);
    request.bearer = bearer;
    return undefined;
  };

  /**
   * A request without the header that the gate lets through unread: refused (429) only when its
   * address is refused for now, which needs no lookup and no body (INTERFACE section 7's
   * per-address limit holds for every request behind the gate).
   */
  const passUnlessBlocked = (request: FastifyRequest, reply: FastifyReply) => {
    const addressOf = lazyClientAddress(request);
    return limits.isBlocked(addressOf, deps.clock.now()) ? refuseLimited(request, reply, { address: addressOf() }) : undefined;
  };

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.headers(answerHeaders);
    const { bearerScope: scope, bearerOptional } = request.routeOptions.config;
    if (scope === undefined) return undefined;
    // The header is checked first wherever the gate runs, an address that does not exist
    // included: a valid token's answer is counted and carries its limit's fields (INTERFACE
    // section 7), a refused one counts against its address, so no lookup is ever free.
    if (headerSent(request)) return admit(request, reply, scope);
    // A route the header is optional at, asked without it: a route that is no address
    // (`GATED_NOT_FOUND`) answers its 404 or 405 (RFC 9110 15.5.5, 15.5.6) whatever the query or
    // the body holds, as for any request there without a token, and a public one (the OpenAPI
    // document) its answer; no token is read from either, so none is looked up, and the gate's 401
    // is for the addresses that need one. An address refused for now is still refused there but
    // at a public document, which the site's API reference page reads (`bearerOptional`).
    if (bearerOptional) return bearerOptional === 'public' ? undefined : passUnlessBlocked(request, reply);
    const elsewhere = tokenOutsideHeader(request);
    // Judged once read (`readsForm`), below; but an address refused for now is refused before
    // its body (up to BODY_LIMIT_BYTES) is read: whatever the form holds, no token in it is
    // read, and a request without the header from there is refused all the same (`admit`).
    if (elsewhere === 'form' && options.readsForm === 'always') return passUnlessBlocked(request, reply);
    // A form not read may hold a token or not: it is told what is true, that no form is read here.
    return admit(request, reply, scope, elsewhere === 'query' ? 'token' : elsewhere === 'form' ? 'unreadForm' : undefined);
  });
  // A form sent without the header, read (`'always'`): one that carries `access_token` is told a
  // token there is not accepted; one without, that the request has no token (RFC 6750 3.1). A form
  // sent with the header, read once its token was accepted: `access_token` in it too is 400
  // `invalid_request` (RFC 6750 2 and 3.1), counted as the query's is in `admit`, for the same
  // reasons. Only a form is judged so (MCP's JSON message is read as a string, by its route).
  if (options.readsForm !== undefined) {
    app.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
      const { bearerScope: scope, bearerOptional } = request.routeOptions.config;
      if (scope === undefined || bearerOptional) return undefined;
      const { bearer } = request;
      if (bearer === undefined) return admit(request, reply, scope, carriesToken(request.body) ? 'token' : undefined);
      if (request.method !== 'POST' || !isForm(request) || !carriesToken(request.body)) return undefined;
      return refuse(bearer.scheme === 'DPoP' ? BEARER_REFUSALS.alsoInFormDpop : BEARER_REFUSALS.alsoInForm, request, reply);
    });
  }
  // A token's "last used" is one rule wherever the gate runs (docs/api.md, "Last use"): a use is
  // an admitted request answered with success (2xx), which every answer that reads the member's
  // data is. A refusal or failure once admitted, the gate's or the route's (a scope, a token sent
  // two ways, a body refused or too large, a malformed message, 404, 405, 500, or one a route
  // answers 2xx, `refusedInAnswer`), is none. Recorded
  // as the answer goes, once its status is known (a token recorded within the minute is not:
  // `UsageRecorder.due`). An async hook, whose promise Fastify settles: a callback called from the
  // promise's `then` turned anything thrown on the way out into an unhandled rejection.
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply) => {
    const { bearer } = request;
    if (bearer === undefined || reply.statusCode >= 300 || request.bearerRefusedInAnswer) return;
    const now = deps.clock.now();
    if (deps.tokenUses.due(bearer, now)) await recordUse(request, bearer, now);
  });

  return {
    requireScope(request, reply, scope) {
      const refusal = scopeRefusal(requestBearer(request), scope);
      return refusal === undefined ? undefined : refuse(refusal, request, reply);
    },
    refusedInAnswer(request) {
      request.bearerRefusedInAnswer = true;
    },
  };
}
