/**
 * The resource API v1 (seed section 4.4): GET /api/open/v1/, /me and /me/posts behind the bearer
 * gate, and the public OpenAPI document. Answers are serialized from the response schemas.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { API_BASE_PATH, parsePaging, profileOf, readPosts, serviceInfo } from '../../../core/api/views.js';
import { siteUrls } from '../../../core/urls.js';
import { apiResource, resourceMetadataUrl } from '../../../core/api/resource.js';
import { registerBearerGate, registerGatedNotFound, requestBearer } from '../../plugins/bearer.js';
import { preflight } from '../../plugins/cors.js';
import type { HeaderSet } from '../../plugins/security-headers.js';
import { openApiDocument } from './openapi.js';
import { ErrorSchema, PostPageSchema, ProfileSchema, ServiceInfoSchema } from './schemas.js';

/** The answers each route can give besides 200, by status (INTERFACE section 6). */
const errors = { 401: ErrorSchema, 403: ErrorSchema, 429: ErrorSchema } as const;

export async function apiV1Routes(parent: FastifyInstance, options: { securityHeaders: HeaderSet }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  // RFC 9728 5.1: every challenge of the API says where its metadata is.
  registerBearerGate(app, options.securityHeaders, { resourceMetadata: resourceMetadataUrl(app.deps.settings.baseUrl), resource: apiResource(app.deps.settings.baseUrl) });
  const urls = siteUrls(app.deps.settings.baseUrl);

  for (const path of [`${API_BASE_PATH}/`, API_BASE_PATH]) {
    app.get(path, {
      config: { bearerScope: '' },
      schema: { response: { 200: ServiceInfoSchema, ...errors } },
    }, async (request) => serviceInfo(requestBearer(request).scopes, urls));
  }

  app.get(`${API_BASE_PATH}/me`, {
    config: { bearerScope: 'profile:read' },
    schema: { response: { 200: ProfileSchema, ...errors } },
  }, async (request) => profileOf(requestBearer(request).user, urls));

  app.get(`${API_BASE_PATH}/me/posts`, {
    config: { bearerScope: 'posts:read' },
    // `page` and `size` are read by `parsePaging`, whose refusals name the parameter and what it takes.
    schema: { response: { 200: PostPageSchema, 400: ErrorSchema, ...errors } },
  }, async (request) => readPosts(app.deps.stores, requestBearer(request).user.id, parsePaging(request.query as Record<string, unknown>), urls));

  // A single-page app calls /me from its own origin with its bearer token (issue 17.1); the gate
  // puts the CORS headers on every answer.
  preflight(app, [`${API_BASE_PATH}/*`, API_BASE_PATH], ['GET', 'HEAD']);

  // INTERFACE section 7: every answer to a valid token carries its rate-limit fields, so an address
  // the API does not have, or a method an address does not take, is answered through the gate too:
  // a token sent is checked and counted, then the not-found answer (404, or 405 for an address that
  // takes other methods) is the same one a request without a token gets, as GitHub's API does.
  // Its own context reads no body: a body no route wants is neither parsed nor refused (no 400 or
  // 415 where the answer is 404 or 405). OPTIONS stays the preflight's.
  await registerGatedNotFound(app, [
    { url: `${API_BASE_PATH}/*`, taken: [] },
    ...[`${API_BASE_PATH}/`, API_BASE_PATH].map((url) => ({ url, taken: ['GET', 'HEAD'] })),
  ]);

  // Public: no token needed, and a request without the header passes the gate unread and
  // uncounted, from any address (the site's API reference page reads it). One that sends a token
  // in the header is an authenticated request like any other here (INTERFACE section 7, as GitHub
  // counts one to its meta endpoints): checked, counted, its rate-limit fields on the answer,
  // which is then no one else's to cache.
  const document = JSON.stringify(openApiDocument(app.deps.settings.baseUrl));
  app.get(`${API_BASE_PATH}/openapi.json`, { config: { bearerScope: '', bearerOptional: 'public' } }, async (request, reply) => {
    if (request.bearer === undefined) reply.header('cache-control', 'public, max-age=300');
    return reply.type('application/json; charset=utf-8').send(document);
  });
}
