/** Liveness and readiness for operators (INTERFACE section 1); metrics are served apart (`metrics-app.ts`). */
import type { FastifyInstance } from 'fastify';
import { describeUnopenable } from '../../core/oidc/key-ring.js';

export interface OperationsOptions {
  /** Whether the start still checks REDIS_URL while the server listens (Redis LOADING at start, src/server.ts). */
  startChecking?: (() => boolean) | undefined;
}

export async function operationsRoutes(app: FastifyInstance, options: OperationsOptions): Promise<void> {
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
    const keys = checks.database === 'ok' ? await app.deps.keys.unopenable() : undefined;
    checks.signingKeys = keys === undefined ? 'unknown' : keys.length === 0 ? 'ok' : keys.map(describeUnopenable).join('; ');
    // An instance that cannot open a key it signs with, or will sign with, would answer every
    // id_token and logout token with 503: not ready, so the load balancer sends that traffic to an
    // instance that can (KEYS_SECRET missing or another one; docs/operations.md, "Signing keys").
    // A damaged stored key is every instance's: unready, they would all leave the load balancer
    // over what fails only the tokens of that key's algorithm. Named, and ready.
    const signs = keys !== undefined && !keys.some((key) => key.cause === 'keys_secret');
    // Not ready while the start checks REDIS_URL: a refusal then stops the process (exit 2).
    const checking = options.startChecking?.() ?? false;
    if (checking) checks.redisSettings = 'checking: Redis answered LOADING or BUSY at start; REDIS_URL is checked once it serves, for 30 s at most';
    // REDIS_URL reaching a replica (a failover the connection has not followed yet) is told, and
    // served through as an outage is, on the fallbacks: unready, every instance would leave the
    // load balancer at each failover until REDIS_URL's name moved (docs/operations.md).
    if (app.deps.redisReachesReplica()) checks.redis = 'replica: REDIS_URL reaches a replica; rate limits count in memory and DPoP proofs go to the database until it reaches a primary';
    const ready = checks.database === 'ok' && signs && !checking;
    return reply.code(ready ? 200 : 503).header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'unavailable', checks });
  });
}
