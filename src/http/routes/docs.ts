/** GET /docs: the developer documentation (INTERFACE section 1). */
import type { FastifyInstance } from 'fastify';
import { pageContext } from '../plugins/session.js';
import { docsPage } from '../views/docs.js';

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/docs', { config: { html: true } }, async (request, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store')
      .send(docsPage(await pageContext(request, reply), app.deps.settings).value));
}
