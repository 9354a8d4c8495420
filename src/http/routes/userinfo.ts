/**
 * GET and POST /api/oauth/userinfo (OpenID Connect Core 5.3): behind the same bearer gate as the
 * resource API, needing scope `openid`; `sub` always, the profile claims with `profile:read` or `profile`.
 * Errors are RFC 6750's, with `WWW-Authenticate` (OIDC Core 5.3.3).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BEARER_REFUSALS } from '../../core/api/bearer.js';
import { userInfoClaims } from '../../core/oidc/claims.js';
import { siteUrls } from '../../core/urls.js';
import { isForm, registerBearerGate, registerGatedNotFound, requestBearer } from '../plugins/bearer.js';
import { preflight } from '../plugins/cors.js';
import { fieldRepeats } from '../repeated-fields.js';
import type { HeaderSet } from '../plugins/security-headers.js';

const PATH = '/api/oauth/userinfo';

const claimsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sub'],
  properties: {
    sub: { type: 'string' },
    preferred_username: { type: 'string' },
    name: { type: 'string' },
    picture: { type: 'string' },
    profile: { type: 'string' },
    locale: { type: 'string' },
    zoneinfo: { type: 'string' },
  },
} as const;

export async function userInfoRoutes(app: FastifyInstance, options: { securityHeaders: HeaderSet }): Promise<void> {
  // UserInfo is no RFC 8707 resource: a token issued for the resource API alone is refused here.
  // Its form body is read (app.ts), so a form without a token is told it has none.
  registerBearerGate(app, options.securityHeaders, { resource: null, readsForm: 'always' });
  // OIDC Core 5.3.1 and RFC 6750 2.2: a POST's body is a form, or none (no Content-Type, or an
  // empty one sent alone); any other type, or a Content-Type that names none otherwise (no
  // type/subtype; Fastify's 415 otherwise), is 400 `invalid_request`
  // before the body is read (`bodyNotForm`), as node-oidc-provider answers. Only an admitted
  // token's POST gets here (the gate refused any other with its 401 first); a preflight's body is
  // no POST's. The body left unread, the connection ends with the answer, as Fastify ends it after
  // a body its parser refused.
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (request.method !== 'POST') return done(null, payload);
    const type = request.headers['content-type'];
    // An empty field (or only blanks, which Node trims) is read as none, as node-oidc-provider
    // reads it: it names no type, so a bodiless POST that sends it is served (RFC 6750 2.2's form
    // is for a token sent in the body; RFC 9110 8.3: the field describes content). Removed before
    // Fastify reads the field, which it would refuse 415 as a malformed media type. Only when it is
    // the one sent: Node keeps the first of two and drops the rest, so an empty one before a
    // second (JSON, or a form carrying access_token beside the header) is refused as another type
    // (RFC 9110 5.3: Content-Type takes one value), as a repeated Authorization is.
    const emptyAlone = type === '' && !fieldRepeats(request, 'content-type');
    if (emptyAlone) delete request.raw.headers['content-type'];
    if (type === undefined || emptyAlone || isForm(request)) return done(null, payload);
    reply.header('connection', 'close');
    done(request.bearer?.scheme === 'DPoP' ? BEARER_REFUSALS.bodyNotFormDpop : BEARER_REFUSALS.bodyNotForm);
  });
  // Left unread past it: a POST's body sent without Content-Type, a preflight's of any type but a form.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  const site = { urls: siteUrls(app.deps.settings.baseUrl), timeZone: app.deps.settings.siteTimeZone };
  const handler = async (request: FastifyRequest) => {
    const bearer = requestBearer(request);
    return userInfoClaims(bearer.user, bearer.scopes, site);
  };
  const route = { config: { bearerScope: 'openid' as const }, schema: { response: { 200: claimsSchema } } };
  app.get(PATH, route, handler);
  app.post(PATH, route, handler);
  preflight(app, [PATH], ['GET', 'POST']);
  // The methods it does not take are 405 with `Allow` (RFC 9110 15.5.6) behind the same gate as
  // the API's (`GATED_NOT_FOUND`): a token in the header is checked and counted, an address refused
  // for now is refused, and none is 405 whatever it sends; in a context that reads no body.
  await registerGatedNotFound(app, [{ url: PATH, taken: ['GET', 'HEAD', 'POST'] }]);
}
