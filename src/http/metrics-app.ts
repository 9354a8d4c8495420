/**
 * `/metrics` in Prometheus text on its own port (`METRICS_PORT`, INTERFACE section 8), never on the
 * public one: counters such as sign-in failures are for the operator, not for every visitor.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { endConnectionsOnClose } from './closing-connections.js';

export interface MetricsSource {
  contentType: string;
  /** The exposition text: this process's registry, or every worker's merged by the primary. */
  metrics(): Promise<string>;
}

export function buildMetricsApp(source: MetricsSource): FastifyInstance {
  const app = Fastify({ logger: false });
  endConnectionsOnClose(app);
  app.get('/metrics', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    let text: string;
    try {
      text = await source.metrics();
    } catch (error) {
      // Metrics that could not be read this time (a worker that did not answer): a scrape to try
      // again, which Prometheus records as the target down for that scrape, not a server fault.
      return reply.code(503).type('text/plain; charset=utf-8').header('retry-after', '1')
        .send(`metrics unavailable: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    return reply.type(source.contentType).send(text);
  });
  return app;
}
