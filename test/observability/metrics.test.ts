/**
 * The HTTP series (src/observability/metrics.ts): counted in plain numbers at each answer and
 * read by prom-client's registry, they must read exactly as prom-client's own Counter and
 * Histogram fed the same answers would, in the text Prometheus scrapes and in the JSON the primary
 * of WORKERS=N sums.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { type Metrics, createMetrics } from '../../src/observability/metrics.js';

const LABEL_NAMES = ['method', 'route', 'status'] as const;

/**
 * Answers of two routes and three statuses, on and around every bucket's bound and past the last;
 * a series of another route comes between two of one route, so the order series are read in is
 * the order of their first answer, not one grouped by route.
 */
const ANSWERS: ReadonlyArray<[method: string, route: string, status: number, seconds: number]> = [
  ...[0, 0.0001, 0.0005, 0.00050001, 0.001, 0.002, 0.0025, 0.005, 0.0099, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 2.6, 30]
    .map((seconds) => ['GET', '/api/open/v1/me', 200, seconds] as [string, string, number, number]),
  ['POST', '/api/oauth/token', 200, 0.004],
  ['GET', '/api/open/v1/me', 401, 0.0003],
  ['GET', '/api/open/v1/me', 401, 0.0004],
  ['POST', '/api/oauth/token', 400, 0.7],
];

type HttpMetrics = Pick<Metrics, 'registry' | 'observeHttp'>;

/** prom-client's own metrics, as they were declared before the series were counted apart. */
function referenceMetrics(): HttpMetrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames: LABEL_NAMES, registers });
  const duration = new Histogram({
    name: 'http_request_duration_seconds', help: 'Time to answer an HTTP request', labelNames: LABEL_NAMES, registers,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  });
  return {
    registry,
    observeHttp(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.labels(labels).inc();
      duration.labels(labels).observe(seconds);
    },
  };
}

/** Both, each fed `ANSWERS`. */
function bothAnswered(): [ours: HttpMetrics, reference: HttpMetrics] {
  const both: [HttpMetrics, HttpMetrics] = [createMetrics(), referenceMetrics()];
  for (const metrics of both) for (const answer of ANSWERS) metrics.observeHttp(...answer);
  return both;
}

const HTTP_METRICS = ['http_requests_total', 'http_request_duration_seconds'];

/** The HTTP metrics as the registry reads them for the primary of WORKERS=N. */
const httpJson = async (registry: Registry) => (await registry.getMetricsAsJSON()).filter((metric) => HTTP_METRICS.includes(metric.name));

/** Both registries read the same: the text of each metric, and the JSON the primary sums. */
async function assertReadAlike(ours: Registry, reference: Registry) {
  for (const name of HTTP_METRICS) assert.equal(await ours.getSingleMetricAsString(name), await reference.getSingleMetricAsString(name), name);
  assert.equal(JSON.stringify(await httpJson(ours)), JSON.stringify(await httpJson(reference)));
}

test('the HTTP series read in Prometheus text as prom-client\'s own counter and histogram fed the same answers', async () => {
  const [ours, reference] = bothAnswered();
  await assertReadAlike(ours.registry, reference.registry);
});

test('a second read of the HTTP series counts nothing twice', async () => {
  const [ours, reference] = bothAnswered();
  await ours.registry.metrics();
  for (const metrics of [ours, reference]) metrics.observeHttp('GET', '/api/open/v1/me', 401, 0.0002);
  await assertReadAlike(ours.registry, reference.registry);
  assert.match(await ours.registry.metrics(), /^http_requests_total\{method="GET",route="\/api\/open\/v1\/me",status="401"\} 3$/m);
});

test('a reset of the registry forgets the HTTP series as it forgets prom-client\'s own', async () => {
  const [ours, reference] = bothAnswered();
  await ours.registry.metrics();
  for (const metrics of [ours, reference]) {
    metrics.registry.resetMetrics();
    metrics.observeHttp('GET', '/api/open/v1/me', 401, 0.0002);
  }
  await assertReadAlike(ours.registry, reference.registry);
  assert.doesNotMatch(await ours.registry.metrics(), /status="200"/);
});

test('the HTTP series read alike with the registry\'s default labels', async () => {
  const [ours, reference] = bothAnswered();
  for (const metrics of [ours, reference]) metrics.registry.setDefaultLabels({ instance: 'a"\\b' });
  await assertReadAlike(ours.registry, reference.registry);
});

test('a reset of either HTTP metric alone loses none of the other\'s counts, read or not', async () => {
  for (const name of HTTP_METRICS) {
    const [ours, reference] = bothAnswered();
    for (const metrics of [ours, reference]) {
      metrics.registry.getSingleMetric(name)!.reset();
      metrics.observeHttp('GET', '/api/open/v1/me', 401, 0.0002);
    }
    await assertReadAlike(ours.registry, reference.registry);
  }
});

test('a duration that is no number is refused as prom-client refuses it, and counts nothing', async () => {
  const [ours, reference] = bothAnswered();
  for (const seconds of [Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => referenceMetrics().observeHttp('GET', '/healthz', 200, seconds), TypeError);
    assert.throws(() => ours.observeHttp('GET', '/healthz', 200, seconds), TypeError);
  }
  // prom-client counted the request before its histogram refused the duration; nothing is counted now.
  await assertReadAlike(ours.registry, reference.registry);
});

test('the HTTP series of several workers sum as prom-client\'s own do (WORKERS=N)', async () => {
  const sum = async (workers: HttpMetrics[]) => AggregatorRegistry.aggregate(await Promise.all(workers.map((worker) => httpJson(worker.registry)))).metrics();
  const [ours1, reference1] = bothAnswered();
  const [ours2, reference2] = bothAnswered();
  const ours = await sum([ours1, ours2]);
  assert.equal(ours, await sum([reference1, reference2]));
  assert.match(ours, /^http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/api\/open\/v1\/me",status="200"\} 38$/m);
});
