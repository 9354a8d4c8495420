/** GET /: recent published posts. */
import type { FastifyInstance } from 'fastify';
import { sendPage } from '../pages.js';
import { pageContext } from '../plugins/session.js';
import { homePage } from '../views/community.js';

export async function homeRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { config: { html: true } }, async (request, reply) => {
    const posts = await app.deps.stores.posts.listRecentPublished(30);
    return sendPage(reply, homePage(await pageContext(request, reply), posts));
  });
}
