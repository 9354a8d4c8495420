/** Discovery and JWKS (OpenID Connect Discovery 1.0, RFC 8414, RFC 7517). */
import type { FastifyInstance } from 'fastify';
import { providerMetadata } from '../../core/oidc/discovery.js';
import { jwksMaxAgeSeconds } from '../../core/oidc/key-ring.js';

/** Metadata changes only with a deployment. */
const METADATA_CACHE = 'public, max-age=3600';

export async function oidcRoutes(app: FastifyInstance): Promise<void> {
  const metadata = JSON.stringify(providerMetadata(app.deps.settings.baseUrl));
  // A client may keep the JWKS this long: less than a new key is published before it signs.
  const jwksCache = `public, max-age=${jwksMaxAgeSeconds(app.deps.settings.signingKeyActivationSeconds)}`;
  for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    app.get(path, async (_request, reply) =>
      reply.type('application/json; charset=utf-8').header('cache-control', METADATA_CACHE)
        .header('access-control-allow-origin', '*').send(metadata));
  }
  app.get('/.well-known/jwks.json', async (_request, reply) =>
    reply.type('application/jwk-set+json; charset=utf-8').header('cache-control', jwksCache)
      .header('access-control-allow-origin', '*').send(JSON.stringify(await app.deps.keys.jwks())));
}
