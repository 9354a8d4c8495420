/** Discovery and JWKS (OpenID Connect Discovery 1.0, RFC 8414, RFC 7517), and the metadata of the resource API and its MCP server (RFC 9728). */
import type { FastifyInstance } from 'fastify';
import { providerMetadata } from '../../core/oidc/discovery.js';
import { jwksMaxAgeSeconds } from '../../core/oidc/key-ring.js';
import { protectedResourcesMetadata } from '../../core/api/resource.js';
import { answerCors, preflight } from '../plugins/cors.js';

/** Metadata changes only with a deployment. */
const METADATA_CACHE = 'public, max-age=3600';

const METADATA_PATHS = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'];
const JWKS_PATH = '/.well-known/jwks.json';

export async function oidcRoutes(app: FastifyInstance): Promise<void> {
  // Browser apps (oidc-client-ts, oauth4webapi) read both from their own origin (issue 17.1).
  answerCors(app);
  const resources = protectedResourcesMetadata(app.deps.settings.baseUrl);
  preflight(app, [...METADATA_PATHS, JWKS_PATH, ...resources.map(({ path }) => path)], ['GET', 'HEAD']);
  const metadata = JSON.stringify(providerMetadata(app.deps.settings.baseUrl, { dynamicRegistration: app.deps.settings.dynamicRegistration, clientIdMetadataDocuments: app.deps.settings.clientMetadata.enabled }));
  // A client may keep the JWKS this long: less than a new key is published before it signs.
  const jwksCache = `public, max-age=${jwksMaxAgeSeconds(app.deps.settings.signingKeyActivationSeconds)}`;
  for (const path of METADATA_PATHS) {
    app.get(path, async (_request, reply) =>
      reply.type('application/json; charset=utf-8').header('cache-control', METADATA_CACHE).send(metadata));
  }
  // RFC 9728 3: what a client that met a resource's 401 (`resource_metadata`) reads next.
  for (const { path, metadata } of resources) {
    const document = JSON.stringify(metadata);
    app.get(path, async (_request, reply) =>
      reply.type('application/json; charset=utf-8').header('cache-control', METADATA_CACHE).send(document));
  }
  app.get(JWKS_PATH, async (_request, reply) =>
    reply.type('application/jwk-set+json; charset=utf-8').header('cache-control', jwksCache)
      .send(JSON.stringify(await app.deps.keys.jwks())));
}
