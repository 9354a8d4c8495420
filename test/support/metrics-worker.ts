/**
 * A cluster worker for test/observability/cluster-metrics.test.ts: answers the primary's questions
 * (`answerPrimary`) from a registry whose one counter counts the questions it was asked; with
 * METRICS_WORKER=unmergeable, in a form the primary cannot merge (an aggregator prom-client lacks).
 */
import { type Registry } from 'prom-client';
import { answerPrimary } from '../../src/observability/cluster-metrics.js';

let questions = 0;
const registry = {
  getMetricsAsJSON: async () => {
    questions++;
    const counter = { help: 'Questions asked', type: 'counter', values: [{ value: questions, labels: {} }] };
    // A name of its own, so that its aggregator, not another worker's, is the one the merge reads.
    if (process.env.METRICS_WORKER === 'unmergeable') return [{ ...counter, name: 'svc_unmergeable_total', aggregator: 'no-such-aggregator' }];
    return [{ ...counter, name: 'svc_questions_total', aggregator: 'sum' }];
  },
} as unknown as Registry;

answerPrimary(registry);
