/** Liveness and readiness for operators (INTERFACE section 1); metrics are served apart (`metrics-app.ts`). */
import type { FastifyInstance } from 'fastify';

export async function operationsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    const checks: Record<string, string> = {};
    try {
      await app.deps.database.ping();
      checks.database = 'ok';
    } catch (error) {
      request.log.warn({ err: error }, 'readiness: database unreachable');
      checks.database = 'unreachable';
    }
    // Rate-limit counters: 'redis', 'memory', or 'degraded' (Redis unreachable, memory in use).
    // Degraded still serves, so it does not make the instance unready.
    checks.rateLimiter = app.deps.limiter.state?.() ?? 'memory';
    const ready = checks.database === 'ok';
    return reply.code(ready ? 200 : 503).header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'unavailable', checks });
  });
}
