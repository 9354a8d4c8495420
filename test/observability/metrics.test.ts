/**
 * The HTTP series (src/observability/metrics.ts): counted in plain numbers at each answer and
 * read by prom-client's registry, they must read exactly as prom-client's own Counter and
 * Histogram fed the same answers would, in the text Prometheus scrapes and in the JSON the primary
 * of WORKERS=N sums.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { createMetrics } from '../../src/observability/metrics.js';

const LABEL_NAMES = ['method', 'route', 'status'] as const;

/** Answers of two routes and three statuses, on and around every bucket's bound and past the last. */
const ANSWERS: ReadonlyArray<[method: string, route: string, status: number, seconds: number]> = [
  ...[0, 0.0001, 0.0005, 0.00050001, 0.001, 0.002, 0.0025, 0.005, 0.0099, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 2.6, 30]
    .map((seconds) => ['GET', '/api/open/v1/me', 200, seconds] as [string, string, number, number]),
  ['GET', '/api/open/v1/me', 401, 0.0003],
  ['GET', '/api/open/v1/me', 401, 0.0004],
  ['POST', '/api/oauth/token', 200, 0.004],
  ['POST', '/api/oauth/token', 400, 0.7],
];

/** prom-client's own metrics, as they were declared before the series were counted apart. */
function referenceRegistry(): Registry {
  const registers = [new Registry()];
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames: LABEL_NAMES, registers });
  const duration = new Histogram({
    name: 'http_request_duration_seconds', help: 'Time to answer an HTTP request', labelNames: LABEL_NAMES, registers,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  });
  for (const [method, route, status, seconds] of ANSWERS) {
    const labels = { method, route, status: String(status) };
    requests.labels(labels).inc();
    duration.labels(labels).observe(seconds);
  }
  return registers[0]!;
}

function servicesRegistry(): Registry {
  const metrics = createMetrics();
  for (const answer of ANSWERS) metrics.observeHttp(...answer);
  return metrics.registry;
}

const httpMetric = (name: string) => name.startsWith('http_');

test('the HTTP series read in Prometheus text as prom-client\'s own counter and histogram fed the same answers', async () => {
  const ours = servicesRegistry();
  const reference = referenceRegistry();
  for (const name of ['http_requests_total', 'http_request_duration_seconds']) {
    assert.equal(await ours.getSingleMetricAsString(name), await reference.getSingleMetricAsString(name), name);
  }
});

test('a second read of the HTTP series counts nothing twice', async () => {
  const metrics = createMetrics();
  for (const answer of ANSWERS) metrics.observeHttp(...answer);
  await metrics.registry.metrics();
  metrics.observeHttp('GET', '/api/open/v1/me', 401, 0.0002);
  const text = await metrics.registry.metrics();
  assert.match(text, /^http_requests_total\{method="GET",route="\/api\/open\/v1\/me",status="401"\} 3$/m);
  assert.match(text, /^http_request_duration_seconds_count\{method="GET",route="\/api\/open\/v1\/me",status="401"\} 3$/m);
  assert.match(text, /^http_requests_total\{method="GET",route="\/api\/open\/v1\/me",status="200"\} 19$/m);
});

test('the HTTP series of several workers sum as prom-client\'s own do (WORKERS=N)', async () => {
  const json = async (registry: Registry) => (await registry.getMetricsAsJSON()).filter((metric) => httpMetric(metric.name));
  const ours = AggregatorRegistry.aggregate([await json(servicesRegistry()), await json(servicesRegistry())]);
  const reference = AggregatorRegistry.aggregate([await json(referenceRegistry()), await json(referenceRegistry())]);
  assert.equal(await ours.metrics(), await reference.metrics());
  assert.match(await ours.metrics(), /^http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/api\/open\/v1\/me",status="200"\} 38$/m);
});
