/**
 * Prometheus metrics (prom-client). Every counter the service exposes is declared here, so an
 * operator finds the full list in one place; features increment the one they own.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  readonly registry: Registry;
  /** Tokens issued, by kind: access, refresh, id_token, personal. */
  readonly tokensIssued: Counter<'kind'>;
  /** Revocations, by reason (see `RevocationReason`). */
  readonly tokensRevoked: Counter<'reason'>;
  readonly signInFailures: Counter<'reason'>;
  /**
   * Requests refused by a rate limit, by what was limited (`scope`) and, at the endpoints where a
   * client authenticates, by `endpoint` (token, par, revoke, introspect).
   */
  readonly rateLimitRefusals: Counter<'scope' | 'endpoint'>;
  /** Back-channel logout attempts, by outcome: delivered, retrying, abandoned. */
  readonly logoutDeliveries: Counter<'outcome'>;
  /**
   * Mail attempts, by outcome (sent, retrying, abandoned) and whose trouble they met (`none`, the
   * member's `address`, the `site`'s: its relay, its message), so a broken relay shows per attempt
   * here and not in the log (`RelayWatch`).
   */
  readonly mailAttempts: Counter<'outcome' | 'whose'>;
  /** Counts one answered HTTP request (`http_requests_total`) and its duration (`http_request_duration_seconds`). */
  observeHttp(method: string, route: string, status: number, seconds: number): void;
}

interface HttpSeries {
  requests: { inc(): void };
  duration: { observe(seconds: number): void };
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const httpRequests = new Counter({
    name: 'http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'route', 'status'] as const, registers,
  });
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds', help: 'Time to answer an HTTP request',
    labelNames: ['method', 'route', 'status'] as const, registers,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  });
  // Label children bound once per (route, method, status): prom-client hashes a label object on
  // every call otherwise, which showed in the profile of every request (issue 8). Routes are the
  // registered patterns, so the set is bounded. Found by route, then method and status, not by a
  // key joined per request: a route's pattern is the same string each time, whose hash V8 keeps.
  const httpSeries = new Map<string, Map<string, Map<number, HttpSeries>>>();
  return {
    registry,
    observeHttp(method, route, status, seconds) {
      let byMethod = httpSeries.get(route);
      if (byMethod === undefined) httpSeries.set(route, byMethod = new Map());
      let byStatus = byMethod.get(method);
      if (byStatus === undefined) byMethod.set(method, byStatus = new Map());
      let series = byStatus.get(status);
      if (series === undefined) {
        const labels = { method, route, status: String(status) };
        series = { requests: httpRequests.labels(labels), duration: httpDuration.labels(labels) };
        byStatus.set(status, series);
      }
      series.requests.inc();
      series.duration.observe(seconds);
    },
    tokensIssued: new Counter({ name: 'tokens_issued_total', help: 'Tokens issued', labelNames: ['kind'], registers }),
    tokensRevoked: new Counter({ name: 'tokens_revoked_total', help: 'Grants and tokens revoked', labelNames: ['reason'], registers }),
    signInFailures: new Counter({ name: 'sign_in_failures_total', help: 'Failed sign-ins', labelNames: ['reason'], registers }),
    rateLimitRefusals: new Counter({ name: 'rate_limit_refusals_total', help: 'Requests refused by a rate limit', labelNames: ['scope', 'endpoint'], registers }),
    logoutDeliveries: new Counter({ name: 'logout_deliveries_total', help: 'Back-channel logout attempts', labelNames: ['outcome'], registers }),
    mailAttempts: new Counter({ name: 'mail_attempts_total', help: 'Mail attempts, by outcome and whose trouble they met', labelNames: ['outcome', 'whose'], registers }),
  };
}
