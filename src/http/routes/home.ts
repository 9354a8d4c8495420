/** GET /: recent published posts. */
import type { FastifyInstance } from 'fastify';
import { pageContext } from '../plugins/session.js';
import { homePage } from '../views/home.js';

export async function homeRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { config: { html: true } }, async (request, reply) => {
    const posts = await app.deps.stores.posts.listRecentPublished(30);
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store')
      .send(homePage(await pageContext(request, reply), posts).value);
  });
}
