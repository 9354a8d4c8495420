/**
 * `/metrics` under WORKERS=N: the primary asks each worker for its registry and serves them merged
 * (prom-client's `AggregatorRegistry.aggregate`). Its own asking, not prom-client's `clusterMetrics`,
 * which asks every connected worker and waits 5 s for each before failing the whole scrape: a
 * worker still loading the service (a replacement, held on the database before it listens) or one
 * that died with the question in its pipe made every scrape of that moment a 500 after 5 s
 * (attack138 F3, attack139 #3). Here a worker is asked only once it said it answers (`answerPrimary`,
 * when `serve` has its registry), and a question to a worker that exits, or that the pipe refuses,
 * is settled without it: its series are gone with it, as a restarted process's would be.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const ANSWERING = 'svc:metrics-answering';
const ASKED = 'svc:metrics-asked';
const ANSWER = 'svc:metrics-answer';
/** How long the primary waits for a worker that is alive but silent (stopped, or in a busy loop). */
const ANSWER_WAIT_MS = 5_000;

type Question = { type: typeof ASKED; id: number };
/** One worker's registry as `getMetricsAsJSON` reads it, what `AggregatorRegistry.aggregate` merges. */
type WorkerMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;
type Answer = { type: typeof ANSWER; id: number; metrics: WorkerMetrics } | { type: typeof ANSWER; id: number; error: string };

/** A worker's metrics could not be read, or a worker did not answer in time: the scrape is to be tried again (503). */
export class MetricsUnavailable extends Error {}

/** In a worker: answers the primary's questions from `registry` from now on, and says so. */
export function answerPrimary(registry: Registry): void {
  process.on('message', (message: Partial<Question>) => {
    if (message?.type !== ASKED || typeof message.id !== 'number') return;
    const { id } = message;
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: ANSWER, id, metrics } satisfies Answer),
      (error: unknown) => process.send?.({ type: ANSWER, id, error: error instanceof Error ? error.message : String(error) } satisfies Answer),
    );
  });
  process.send?.(ANSWERING);
}

interface Scrape {
  id: number;
  waiting: Set<Worker>;
  answers: WorkerMetrics[];
  settle(error?: MetricsUnavailable): void;
}

/**
 * In the primary, before the first worker is forked (its word that it answers must not be
 * missed): the workers' metrics, merged, as `/metrics` serves them (src/http/metrics-app.ts).
 */
export function workersMetrics(): { contentType: string; metrics(): Promise<string> } {
  const answering = new Set<Worker>();
  // One question at a time (scrapes at the same moment share it, below); its id keeps a late
  // answer to a question that timed out from counting for the next.
  let current: Scrape | undefined;
  let lastId = 0;
  const without = (worker: Worker) => {
    answering.delete(worker);
    if (current?.waiting.delete(worker) && current.waiting.size === 0) current.settle();
  };
  cluster.on('message', (worker, message: Answer | string) => {
    if (message === ANSWERING) {
      answering.add(worker);
      return;
    }
    if (typeof message !== 'object' || message?.type !== ANSWER) return;
    const scrape = current;
    if (scrape?.id !== message.id || !scrape.waiting.delete(worker)) return;
    if ('error' in message) {
      scrape.settle(new MetricsUnavailable(`worker ${worker.process.pid} could not read its metrics: ${message.error}`));
      return;
    }
    scrape.answers.push(message.metrics);
    if (scrape.waiting.size === 0) scrape.settle();
  });
  cluster.on('exit', without);
  const noWorker = () => new MetricsUnavailable('no worker serves yet');
  const ask = () => new Promise<string>((resolve, reject) => {
    const asked = [...answering].filter((worker) => worker.isConnected());
    // Every worker dead or still starting: an empty 200 would read as every series gone (attack140 F3).
    if (asked.length === 0) {
      reject(noWorker());
      return;
    }
    const scrape: Scrape = {
      id: ++lastId,
      waiting: new Set(asked),
      answers: [],
      settle: (error) => {
        if (current !== scrape) return;
        current = undefined;
        clearTimeout(timeout);
        // Each worker asked died before it answered: as if none served (attack141 N1).
        if (error !== undefined || scrape.answers.length === 0) {
          reject(error ?? noWorker());
          return;
        }
        // Settled from a worker's message or exit, or a timer: a throw here would end the primary.
        try {
          AggregatorRegistry.aggregate(scrape.answers).metrics().then(resolve, reject);
        } catch (cause) {
          reject(new MetricsUnavailable(`the workers' metrics could not be merged: ${cause instanceof Error ? cause.message : String(cause)}`));
        }
      },
    };
    const timeout = setTimeout(() => {
      const silent = [...scrape.waiting].map((worker) => worker.process.pid).join(', ');
      scrape.settle(new MetricsUnavailable(`no answer within ${ANSWER_WAIT_MS / 1000} s from worker ${silent}`));
    }, ANSWER_WAIT_MS);
    current = scrape;
    // A worker that died a moment ago, its exit not yet seen: the pipe refuses the question.
    for (const worker of asked) worker.send({ type: ASKED, id: scrape.id } satisfies Question, (error) => { if (error) without(worker); });
  });
  // Scrapes at the same moment share one question to each worker: a thousand at once would
  // otherwise each ask, keep the workers from their requests, and time out (attack140 F5).
  let asking: Promise<string> | undefined;
  return {
    contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE,
    metrics: () => asking ??= ask().finally(() => { asking = undefined; }),
  };
}
