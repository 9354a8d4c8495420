/**
 * CORS (Fetch standard, "CORS protocol") for the endpoints a browser app calls from its own
 * origin (INTERFACE section 3, issue 17.1): the token, revocation, introspection and PAR
 * endpoints, discovery (the resource API's RFC 9728 metadata too), the JWKS, UserInfo and the resource API. Any origin may read their answers, errors
 * included, and none may send credentials: they take a client's or a user's credentials from a
 * header or the form, never from a cookie, so a page on another site gains nothing it could not
 * get by calling them from its own server. An endpoint that reads the session cookie (pages,
 * /oauth/authorize, /login, settings) must never answer CORS: it lives in no scope that calls
 * `answerCors` and has no `preflight` route.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Answer headers a script on another origin may read besides the CORS-safelisted ones: the
 * challenges (RFC 6750 3, RFC 9449 8), the methods a 405 names (`Allow`, RFC 9110 15.5.6: a form
 * POST to the API or a GET of the MCP endpoint meets one without a preflight), and the rate-limit
 * headers of the API (INTERFACE sections 7 and 11).
 */
const EXPOSED_HEADERS = [
  'WWW-Authenticate', 'DPoP-Nonce', 'Retry-After', 'Allow',
  'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy',
];

/** Request headers a script may send: the form's type, client or bearer credentials, a DPoP proof (RFC 9449). */
const ALLOWED_HEADERS = 'Content-Type, Authorization, DPoP';

/**
 * How long a browser may keep a preflight's answer, in seconds. Nothing in it changes between
 * deployments, so the longest any browser honours (Chromium's cap, two hours) saves a round trip.
 */
export const CORS_MAX_AGE_SECONDS = 7200;

/** The headers of every answer, success or error, of an endpoint that answers CORS. No credentials, ever. */
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
});

export type CorsMethod = 'GET' | 'HEAD' | 'POST';

/**
 * The answer headers of a preflight (an OPTIONS request) for an endpoint that takes `methods`,
 * and the request headers of its own protocol besides the usual ones (`extraHeaders`).
 */
export function preflightHeaders(methods: readonly CorsMethod[], extraHeaders: readonly string[] = []): Readonly<Record<string, string>> {
  return Object.freeze({
    ...CORS_HEADERS,
    'access-control-allow-methods': methods.join(', '),
    'access-control-allow-headers': [ALLOWED_HEADERS, ...extraHeaders].join(', '),
    'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
  });
}

/**
 * Every answer of `app`'s routes carries `CORS_HEADERS`, set before anything else runs, so the
 * error handler's answers (400, 401 `invalid_client`, 413, 503) carry them too. `app` must be an
 * encapsulated plugin holding only endpoints that answer CORS.
 */
export function answerCors(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(CORS_HEADERS);
    done();
  });
}

/**
 * `OPTIONS` on each of `paths`: the preflight of a cross-origin request, 204 with
 * `preflightHeaders(methods, extraHeaders)`. A preflight has no body (Fetch standard, "CORS-preflight
 * request"), so it is answered at `onRequest`, before Fastify reads a body: past that point a
 * malformed `Content-Type` is 415, and a body its parser refuses is 400 or 413, none of which a
 * browser's preflight may get.
 */
export function preflight(app: FastifyInstance, paths: readonly string[], methods: readonly CorsMethod[], extraHeaders: readonly string[] = []): void {
  const headers = preflightHeaders(methods, extraHeaders);
  const answer = async (_request: FastifyRequest, reply: FastifyReply) => reply.code(204).headers(headers).send();
  // Fastify requires a handler; the `onRequest` answer means it is never reached.
  for (const path of paths) app.route({ method: 'OPTIONS', url: path, onRequest: answer, handler: answer });
}
