/**
 * buildApp(deps): the Fastify application with every plugin and route. It never listens;
 * `main.ts` does, and tests call `inject()` or listen on a free port.
 */
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyInstance } from 'fastify';
import { type DemoAppOptions, demoApp } from './demo-app/plugin.js';
import type { Deps } from './deps.js';
import { loggerOptions } from './http/logging.js';
import { registerErrorHandling } from './http/plugins/errors.js';
import { apiV1Routes } from './http/routes/api-v1/index.js';
import { communityRoutes } from './http/routes/community.js';
import { docsRoutes } from './http/routes/docs.js';
import { homeRoutes } from './http/routes/home.js';
import { oidcRoutes } from './http/routes/oidc.js';
import { oauthAuthorizeRoutes } from './http/routes/oauth-authorize.js';
import { oauthEndpointRoutes } from './http/routes/oauth-endpoints.js';
import { operationsRoutes } from './http/routes/operations.js';
import { settingsRoutes } from './http/routes/settings.js';
import { signInRoutes } from './http/routes/sign-in.js';
import { signUpRoutes } from './http/routes/sign-up.js';
import { userInfoRoutes } from './http/routes/userinfo.js';

/** Form and JSON bodies larger than this are refused with 413: nothing we accept is bigger. */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface AppOptions {
  /** Pino level; tests pass 'silent'. Defaults to the LOG_LEVEL setting. */
  logLevel?: string;
  /** The demo app's client credentials; without them /demo-app says it is not configured. */
  demoApp?: DemoAppOptions | undefined;
  /** Where log lines go (standard output by default); tests read them. */
  logStream?: { write(line: string): void };
}

export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(options.logLevel ?? deps.settings.logLevel, options.logStream),
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: deps.settings.trustProxy,
  });
  app.decorate('deps', deps);

  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
        // No form-action: the consent form's answer is a redirect to the client's own site.
      },
    },
    // Only https deployments may pin https; on http://localhost it would break the demo.
    strictTransportSecurity: deps.settings.baseUrl.startsWith('https:'),
    // same-origin, not no-referrer: under no-referrer browsers send `Origin: null` on form posts,
    // which the CSRF origin check refuses; cross-site navigations still carry no Referer.
    referrerPolicy: { policy: 'same-origin' },
    frameguard: { action: 'deny' },
    crossOriginEmbedderPolicy: false,
  });
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: BODY_LIMIT_BYTES });
  await app.register(fastifyStatic, {
    root: fileURLToPath(new URL('../public', import.meta.url)),
    prefix: '/static/',
    maxAge: '1h',
  });

  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    deps.metrics.httpRequests.inc(labels);
    deps.metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
  });

  registerErrorHandling(app);
  await app.register(operationsRoutes);
  await app.register(signInRoutes);
  await app.register(homeRoutes);
  await app.register(signUpRoutes);
  await app.register(communityRoutes);
  await app.register(settingsRoutes);
  await app.register(demoApp, { demo: options.demoApp });
  await app.register(oidcRoutes);
  await app.register(userInfoRoutes);
  await app.register(oauthAuthorizeRoutes);
  await app.register(oauthEndpointRoutes);
  await app.register(apiV1Routes);
  await app.register(docsRoutes);
  return app;
}
