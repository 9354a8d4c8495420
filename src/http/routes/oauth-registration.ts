/**
 * POST /api/oauth/register: RFC 7591 dynamic client registration (INTERFACE section 13), when
 * DYNAMIC_REGISTRATION is on; off, no route is made and the address answers 404. JSON bodies only.
 * Every refusal of the request itself (another content type, a body that is not JSON or too
 * large) is `invalid_client_metadata` in RFC 7591 3.2.2's shape, never `invalid_request`.
 * It answers CORS: an agent running in a browser (the MCP Inspector, for one) registers from
 * its own origin, and nothing here reads a cookie.
 */
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../../core/errors.js';
import { registerSelf } from '../../core/oauth/dynamic-registration.js';
import { requester } from '../client-address.js';
import { answerCors, preflight } from '../plugins/cors.js';
import { sendError, toClientError } from '../plugins/errors.js';
import { type HeaderSet, registerSecurityHeaders } from '../plugins/security-headers.js';

export const REGISTRATION_PATH = '/api/oauth/register';

/** What the body was when it was no JSON value at all. */
const NOT_JSON = Symbol('not JSON');

export async function oauthRegistrationRoutes(app: FastifyInstance, options: { securityHeaders: HeaderSet }): Promise<void> {
  if (!app.deps.settings.dynamicRegistration) return;
  registerSecurityHeaders(app, options.securityHeaders);
  answerCors(app);
  preflight(app, [REGISTRATION_PATH], ['POST']);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(null, NOT_JSON);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, NOT_JSON));
  // RFC 7591 3.2.2: a body the server cannot take (too large, say) is bad client metadata too,
  // with its own status; a rate limit or an unavailable database keep theirs.
  app.setErrorHandler(async (error, request, reply) => {
    const answer = toClientError(error, request);
    return sendError(answer.code === 'invalid_request' ? new OAuthError('invalid_client_metadata', answer.description, { status: answer.status }) : answer, request, reply);
  });

  app.post(REGISTRATION_PATH, async (request, reply) => {
    const registered = await registerSelf(app.deps, request.body === NOT_JSON ? undefined : request.body, requester(request));
    // RFC 7591 3.2.1: 201; the answer holds the client secret, so no cache keeps it (RFC 6749 5.1).
    return reply.code(201).header('cache-control', 'no-store').header('pragma', 'no-cache').send(registered);
  });
}
