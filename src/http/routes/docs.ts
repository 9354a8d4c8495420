/** GET /docs: the developer documentation (INTERFACE section 1); GET /docs/api: the API reference. */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { pageContext } from '../plugins/session.js';
import { apiReferencePage } from '../views/api-reference.js';
import { docsPage } from '../views/docs.js';

/** The two files of the pinned swagger-ui-dist package the reference page loads; nothing else of the package is served. */
const SWAGGER_UI_FILES = new Set(['/swagger-ui-bundle.js', '/swagger-ui.css']);
const SWAGGER_UI_ROOT = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/docs', { config: { html: true } }, async (request, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store')
      .send(docsPage(await pageContext(request, reply), app.deps.settings).value));

  app.get('/docs/api', { config: { html: true } }, async (request, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store')
      .send(apiReferencePage(await pageContext(request, reply)).value));

  await app.register(fastifyStatic, {
    root: SWAGGER_UI_ROOT,
    prefix: '/static/swagger-ui/',
    decorateReply: false,
    index: false,
    allowedPath: (path) => SWAGGER_UI_FILES.has(path),
    maxAge: '1h',
  });
}
