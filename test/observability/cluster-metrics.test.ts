/**
 * `/metrics` under WORKERS=N as the primary serves it (src/observability/cluster-metrics.ts), over
 * real cluster workers (test/support/metrics-worker.ts) and the metrics app. A server with real
 * workers dying and stopping is tried in test/listen.test.ts.
 */
import assert from 'node:assert/strict';
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { buildMetricsApp } from '../../src/http/metrics-app.js';
import { workersMetrics } from '../../src/observability/cluster-metrics.js';

cluster.setupPrimary({ exec: fileURLToPath(new URL('../support/metrics-worker.ts', import.meta.url)) });
const forked: Worker[] = [];
after(() => { for (const worker of forked) worker.kill('SIGKILL'); });

/** The metrics app over `workersMetrics`, with a worker of each kind given, once each says it answers. */
async function withWorkers(kinds: string[]): Promise<{ scrape: () => Promise<{ status: number; text: string }>; workers: Worker[] }> {
  const source = workersMetrics();
  const app = buildMetricsApp(source);
  after(() => app.close());
  const workers = kinds.map((kind) => cluster.fork({ METRICS_WORKER: kind }));
  forked.push(...workers);
  await Promise.all(workers.map((worker) => new Promise<void>((resolve) => {
    worker.on('message', function answering(message) {
      if (message !== 'svc:metrics-answering') return;
      worker.off('message', answering);
      resolve();
    });
  })));
  const scrape = async () => {
    const response = await app.inject({ method: 'GET', url: '/metrics' });
    return { status: response.statusCode, text: response.body };
  };
  return { scrape, workers };
}

test('the workers\' counters are served added up', async () => {
  const { scrape } = await withWorkers(['counting', 'counting']);
  const { status, text } = await scrape();
  assert.equal(status, 200, text);
  assert.match(text, /^svc_questions_total 2$/m);
});

test('scrapes at the same moment share one question to each worker (attack140 F5)', async () => {
  const { scrape } = await withWorkers(['counting', 'counting']);
  const answers = await Promise.all(Array.from({ length: 10 }, scrape));
  for (const { status, text } of answers) {
    assert.equal(status, 200, text);
    assert.match(text, /^svc_questions_total 2$/m, 'each worker asked once');
  }
  assert.match((await scrape()).text, /^svc_questions_total 4$/m, 'a later scrape asks again');
});

test('no worker serving (all dead, or still starting) is a 503, not an empty 200 that reads as every series gone (attack140 F3)', async () => {
  const { scrape, workers } = await withWorkers(['counting']);
  const exited = new Promise((resolve) => workers[0]!.once('exit', resolve));
  workers[0]!.kill('SIGKILL');
  await exited;
  const { status, text } = await scrape();
  assert.equal(status, 503);
  assert.equal(text, 'metrics unavailable: no worker serves yet\n');
});

test('every worker asked dying before it answers is a 503 too, not an empty 200 (attack141 N1)', async () => {
  const { scrape, workers } = await withWorkers(['counting']);
  const [worker] = workers;
  // Stopped, it holds the question unanswered until it is killed.
  process.kill(worker!.process.pid!, 'SIGSTOP');
  const scraped = scrape();
  await new Promise((resolve) => setTimeout(resolve, 300));
  worker!.kill('SIGKILL');
  const { status, text } = await scraped;
  assert.equal(status, 503);
  assert.equal(text, 'metrics unavailable: no worker serves yet\n');
});

test('an answer that cannot be merged is a 503 naming why, and the primary goes on (attack140 F1)', async () => {
  const { scrape } = await withWorkers(['counting', 'unmergeable']);
  const { status, text } = await scrape();
  assert.equal(status, 503);
  assert.equal(text, 'metrics unavailable: the workers\' metrics could not be merged: \'no-such-aggregator\' is not a defined aggregator.\n');
});

test('a request the metrics app refuses keeps its own status: a client\'s error is no 503 (attack140 F4)', async () => {
  const app = buildMetricsApp({ contentType: 'text/plain', metrics: async () => '' });
  after(() => app.close());
  const response = await app.inject({ method: 'POST', url: '/metrics', headers: { 'content-type': 'application/json' }, payload: '{bad' });
  assert.notEqual(response.statusCode, 503);
  assert.ok(response.statusCode >= 400 && response.statusCode < 500, String(response.statusCode));
});
