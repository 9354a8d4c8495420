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

/** The upper bounds of `http_request_duration_seconds`' buckets, in seconds. */
const DURATION_BOUNDS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

const HTTP_LABEL_NAMES = ['method', 'route', 'status'] as const;

type HttpLabels = Record<(typeof HTTP_LABEL_NAMES)[number], string>;

/** One (route, method, status)'s answers: how many, their seconds, and how many in each bucket (the last past every bound). */
class HttpSeries {
  count = 0;
  seconds = 0;
  /** The count already handed to `http_requests_total` (`collect`). */
  counted = 0;
  readonly inBucket = new Float64Array(DURATION_BOUNDS.length + 1);
  constructor(readonly labels: HttpLabels) {}

  observe(seconds: number): void {
    this.count += 1;
    this.seconds += seconds;
    // A bucket counts the answers up to and including its bound (Prometheus' `le`).
    let bucket = 0;
    while (bucket < DURATION_BOUNDS.length && seconds > DURATION_BOUNDS[bucket]!) bucket += 1;
    this.inBucket[bucket]! += 1;
  }
}

/**
 * `http_request_duration_seconds` as prom-client's registry reads its own histograms: each
 * series' buckets cumulative, `+Inf`, `_sum` and `_count`, its labels shared by its lines (so
 * the registry formats them once a series) in `getForPromString()`, spread into each line in
 * `get()` (the JSON the primary sums under WORKERS=N). From the counts `HttpSeries` keeps, where
 * prom-client's own `Histogram` validates and hashes the labels at every `observe`, a bound
 * child's too: 0.8 µs a request in a loop, about 2 µs in the server's profile of a 401
 * (docs/performance.md, decision 64). It is no `Histogram`: it has no `observe`, `labels` or
 * `remove`, which nothing calls.
 */
function durationHistogram(name: string, help: string, series: () => readonly HttpSeries[], forget: () => void) {
  const line = (metricName: string, labels: { le?: number | string }, sharedLabels: HttpLabels, value: number, exemplar: null | undefined) =>
    ({ labels, sharedLabels, value, metricName, exemplar });
  const forPromString = () => {
    const values = [];
    for (const { labels, inBucket, count, seconds } of series()) {
      let cumulative = 0;
      DURATION_BOUNDS.forEach((le, bucket) => {
        cumulative += inBucket[bucket]!;
        values.push(line(`${name}_bucket`, { le }, labels, cumulative, null));
      });
      values.push(line(`${name}_bucket`, { le: '+Inf' }, labels, count, null),
        line(`${name}_sum`, {}, labels, seconds, undefined), line(`${name}_count`, {}, labels, count, undefined));
    }
    // Its keys in the order of prom-client's own, as the JSON a worker sends is theirs.
    return { name, help, type: 'histogram', values, aggregator: 'sum' };
  };
  return {
    name, help, type: 'histogram', aggregator: 'sum',
    getForPromString: async () => forPromString(),
    get: async () => {
      const read = forPromString();
      return { ...read, values: read.values.map(({ sharedLabels, labels, ...value }) => ({ ...value, labels: { ...labels, ...sharedLabels } })) };
    },
    reset: forget,
  };
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  // Series found by route, then method and status, not by a key joined per request: a route's
  // pattern is the same string each time, whose hash V8 keeps. Routes are the registered
  // patterns, so the set is bounded. `inOrder`: the same, in the order of their first answer,
  // the order prom-client reads its own in.
  const httpSeries = new Map<string, Map<string, Map<number, HttpSeries>>>();
  const inOrder: HttpSeries[] = [];
  const requests = new Counter({
    name: 'http_requests_total', help: 'HTTP requests answered', labelNames: HTTP_LABEL_NAMES, registers,
    // Counted in `HttpSeries` at each answer, handed over when the registry is read.
    collect: () => handOverRequests(),
  });
  function handOverRequests() {
    for (const series of inOrder) {
      if (series.count > series.counted) requests.inc(series.labels, series.count - series.counted);
      series.counted = series.count;
    }
  }
  // A reset forgets the counts not yet handed over too, as prom-client's counter, counting at
  // each answer, forgot them; the histogram's forgets its series, their counts handed over first.
  const resetRequests = requests.reset.bind(requests);
  requests.reset = () => {
    for (const series of inOrder) series.counted = series.count;
    resetRequests();
  };
  registry.registerMetric(durationHistogram('http_request_duration_seconds', 'Time to answer an HTTP request', () => inOrder, () => {
    handOverRequests();
    httpSeries.clear();
    inOrder.length = 0;
  }) as unknown as Histogram);
  return {
    registry,
    observeHttp(method, route, status, seconds) {
      // Refused as prom-client's own histogram refuses it, before any series is made: one NaN
      // would leave `_sum` NaN for good.
      if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
      let byMethod = httpSeries.get(route);
      if (byMethod === undefined) httpSeries.set(route, byMethod = new Map());
      let byStatus = byMethod.get(method);
      if (byStatus === undefined) byMethod.set(method, byStatus = new Map());
      let series = byStatus.get(status);
      if (series === undefined) {
        byStatus.set(status, series = new HttpSeries({ method, route, status: String(status) }));
        inOrder.push(series);
      }
      series.observe(seconds);
    },
    tokensIssued: new Counter({ name: 'tokens_issued_total', help: 'Tokens issued', labelNames: ['kind'], registers }),
    tokensRevoked: new Counter({ name: 'tokens_revoked_total', help: 'Grants and tokens revoked', labelNames: ['reason'], registers }),
    signInFailures: new Counter({ name: 'sign_in_failures_total', help: 'Failed sign-ins', labelNames: ['reason'], registers }),
    rateLimitRefusals: new Counter({ name: 'rate_limit_refusals_total', help: 'Requests refused by a rate limit', labelNames: ['scope', 'endpoint'], registers }),
    logoutDeliveries: new Counter({ name: 'logout_deliveries_total', help: 'Back-channel logout attempts', labelNames: ['outcome'], registers }),
    mailAttempts: new Counter({ name: 'mail_attempts_total', help: 'Mail attempts, by outcome and whose trouble they met', labelNames: ['outcome', 'whose'], registers }),
  };
}
