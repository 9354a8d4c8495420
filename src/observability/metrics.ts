/**
 * Prometheus metrics (prom-client). Every counter the service exposes is declared here, so an
 * operator finds the full list in one place; features increment the one they own.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Tokens issued, by kind: access, refresh, id_token, personal. */
  readonly tokensIssued: Counter<'kind'>;
  /** Revocations, by reason (see `RevocationReason`). */
  readonly tokensRevoked: Counter<'reason'>;
  readonly signInFailures: Counter<'reason'>;
  readonly rateLimitRefusals: Counter<'scope'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'route', 'status'], registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds', help: 'Time to answer an HTTP request',
      labelNames: ['method', 'route', 'status'], registers,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    }),
    tokensIssued: new Counter({ name: 'tokens_issued_total', help: 'Tokens issued', labelNames: ['kind'], registers }),
    tokensRevoked: new Counter({ name: 'tokens_revoked_total', help: 'Grants and tokens revoked', labelNames: ['reason'], registers }),
    signInFailures: new Counter({ name: 'sign_in_failures_total', help: 'Failed sign-ins', labelNames: ['reason'], registers }),
    rateLimitRefusals: new Counter({ name: 'rate_limit_refusals_total', help: 'Requests refused by a rate limit', labelNames: ['scope'], registers }),
  };
}
