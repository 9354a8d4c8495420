/**
 * `/metrics` in Prometheus text on its own port (`METRICS_PORT`, INTERFACE section 8), never on the
 * public one: counters such as sign-in failures are for the operator, not for every visitor.
 */
import Fastify, { type FastifyInstance } from 'fastify';

export interface MetricsSource {
  contentType: string;
  /** The exposition text: this process's registry, or every worker's merged by the primary. */
  metrics(): Promise<string>;
}

export function buildMetricsApp(source: MetricsSource): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get('/metrics', async (_request, reply) =>
    reply.type(source.contentType).header('cache-control', 'no-store').send(await source.metrics()));
  return app;
}
