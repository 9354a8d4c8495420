/**
 * POST /api/oauth/token, /api/oauth/revoke, /api/oauth/introspect and /api/oauth/par (seed 4.2
 * and 4.3, RFC 7009, RFC 7662, RFC 9126). Form bodies only: this plugin replaces every body parser with one that keeps each
 * repeated parameter, so the core can refuse it (RFC 6749 3.2). Every answer allows any origin
 * (INTERFACE section 3) and carries the JSON APIs' security headers.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { pushAuthorizationRequest } from '../../core/oauth/authorize/push.js';
import { type ClientCredentials, authenticateClient } from '../../core/oauth/client-auth.js';
import { OAuthError } from '../../core/errors.js';
import { type ClientEndpoint, OAuthEndpointLimits } from '../../core/oauth/endpoint-limits.js';
import { exchangeGrant } from '../../core/oauth/grants/index.js';
import { type Params, paramsFromEntries, refuseParametersInUri, repeatedNames, repeatedParameter, required } from '../../core/oauth/params.js';
import type { IssuedTokens } from '../../core/oauth/tokens/issue.js';
import { introspectToken } from '../../core/oauth/tokens/introspection.js';
import { revokeToken } from '../../core/oauth/tokens/revocation.js';
import { clientCredentials } from '../plugins/client-auth.js';
import { presentedProof } from '../plugins/dpop.js';
import { answerCors, preflight } from '../plugins/cors.js';
import { type HeaderSet, registerSecurityHeaders } from '../plugins/security-headers.js';

const NOT_A_FORM = Symbol('not a form');

/** RFC 6749 3.2: the endpoints take a form; the refusal says what came instead. */
function notAForm(contentType: string | undefined): OAuthError {
  const type = contentType?.split(';')[0]!.trim().toLowerCase() ?? '';
  const sent = type === '' ? 'no form body' : type === 'application/json' ? 'JSON' : type === 'multipart/form-data' ? 'multipart/form-data' : 'another type';
  return new OAuthError('invalid_request', `The body must be application/x-www-form-urlencoded (this request sent ${sent}): send the parameters as a form with that Content-Type.`);
}

/**
 * The form's parameters; anything but application/x-www-form-urlencoded is `invalid_request`,
 * and so are the endpoints' parameters in the query string (RFC 6749 3.2).
 */
function formParams(request: FastifyRequest): Params {
  const query = request.url.indexOf('?');
  if (query >= 0) refuseParametersInUri(paramsFromEntries(new URLSearchParams(request.url.slice(query + 1))));
  const body = request.body;
  if (!(body instanceof URLSearchParams)) throw notAForm(request.headers['content-type']);
  return paramsFromEntries(body);
}

const ENDPOINT_PARAMETERS = ['token', 'token_type_hint', 'client_id', 'client_secret'];

/** Seed table 2.1; `id_token` only when `openid` was granted; `DPoP` for tokens bound to a key (RFC 9449 5). */
export function tokenResponse(issued: IssuedTokens): Record<string, string | number> {
  return {
    access_token: issued.accessToken,
    token_type: issued.dpopJkt === null ? 'Bearer' : 'DPoP',
    expires_in: issued.expiresIn,
    refresh_token: issued.refreshToken,
    scope: issued.scope,
    ...(issued.idToken === undefined ? {} : { id_token: issued.idToken }),
  };
}

export async function oauthEndpointRoutes(app: FastifyInstance, options: { securityHeaders: HeaderSet }): Promise<void> {
  registerSecurityHeaders(app, options.securityHeaders);
  // Browser apps (public clients) redeem codes, refresh and revoke from their own origin; without
  // CORS the request still runs but the page cannot read the answer (issue 17.1).
  answerCors(app);
  preflight(app, ['/api/oauth/token', '/api/oauth/revoke', '/api/oauth/introspect', '/api/oauth/par'], ['POST']);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' },
    (_request, body, done) => done(null, new URLSearchParams(body as string)));
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, NOT_A_FORM));

  const { deps } = app;
  const limits = new OAuthEndpointLimits(deps.limiter, deps.settings, deps.metrics.rateLimitRefusals);
  /** Runs `work` for the client of `credentials` under the limits of failed client authentications, counted at its request's address. */
  const authenticating = <T>(endpoint: ClientEndpoint, credentials: ClientCredentials, work: () => Promise<T>) =>
    limits.authenticating(endpoint, credentials, deps.clock.now(), work);

  app.post('/api/oauth/token', async (request, reply) => {
    const params = formParams(request);
    const credentials = clientCredentials(request, params);
    const issued = await authenticating('token', credentials,
      () => exchangeGrant(deps, params, credentials, request.log, presentedProof(request, deps.settings.baseUrl)));
    // RFC 9449 8.2: a newer nonce for the client's next proof, when its proof's is about to expire.
    if (issued.dpopNonce !== undefined) reply.header('dpop-nonce', issued.dpopNonce);
    // RFC 6749 5.1: token responses are never cached.
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokenResponse(issued));
  });

  // RFC 9126 2: pushed authorization requests; 201 with the request_uri (2.2), errors as JSON (2.3).
  app.post('/api/oauth/par', async (request, reply) => {
    const params = formParams(request);
    const credentials = clientCredentials(request, params);
    const pushed = await authenticating('par', credentials, () => pushAuthorizationRequest(
      deps, params, credentials, presentedProof(request, deps.settings.baseUrl),
      (client) => limits.admitPush(client, credentials, deps.clock.now())));
    // RFC 9449 8.2: a newer nonce for the client's next proof.
    if (pushed.dpopNonce !== undefined) reply.header('dpop-nonce', pushed.dpopNonce);
    return reply.code(201).header('cache-control', 'no-store').header('pragma', 'no-cache').send(pushed.answer);
  });

  /** Revocation's and introspection's request: an authenticated client and the token it names. */
  const tokenRequest = async (endpoint: ClientEndpoint, request: FastifyRequest) => {
    const params = formParams(request);
    const repeated = repeatedNames(params, ENDPOINT_PARAMETERS);
    if (repeated.length > 0) throw repeatedParameter(repeated[0]!);
    const credentials = clientCredentials(request, params);
    const client = await authenticating(endpoint, credentials, () => authenticateClient(deps, credentials, deps.clock.now()));
    return { client, token: required(params, 'token', 'the access token or refresh token') };
  };

  app.post('/api/oauth/revoke', async (request, reply) => {
    const { client, token } = await tokenRequest('revoke', request);
    await revokeToken(deps, client, token, request.id);
    // RFC 7009 2.2: 200, also for a token that is unknown or not the client's. The body is `{}` as
    // JSON (INTERFACE section 6): some libraries (simple-oauth2) throw on a 200 without a JSON type.
    return reply.code(200).header('cache-control', 'no-store').type('application/json; charset=utf-8').send('{}');
  });

  app.post('/api/oauth/introspect', async (request, reply) => {
    const { client, token } = await tokenRequest('introspect', request);
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(await introspectToken(deps, client, token));
  });
}
