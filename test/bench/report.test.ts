/** What the bench's report says about its own runs (pure functions of bench/run.ts; no load is run). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Load, type Measurement, starvedRuns } from '../../bench/run.js';

function run(serverCpu: number): Measurement {
  return { rate: 1, requests: 1, p50Ms: 1, p99Ms: 1, unexpected: 0, socketErrors: 0, serverCpu, generatorCpu: 0.5, serverPeakRssMb: 1 };
}

function load(label: string): Load {
  return { label, measure: () => Promise.resolve(run(1)) };
}

test('the report names every run whose server used less than 0.8 of its core, with its round', () => {
  const runs = new Map([[load('a: ours'), [run(0.95), run(0.13)]], [load('f: the ceiling, /me'), [run(0.79), run(0.8)]]]);
  assert.deepEqual(starvedRuns(runs, 2), ['a: ours, round 2: 0.13 of its core', 'f: the ceiling, /me, round 1: 0.79 of its core']);
  assert.deepEqual(starvedRuns(new Map([[load('d: ours'), [run(0.5)]]]), 1), ['d: ours: 0.50 of its core'], 'one round names no round');
  assert.deepEqual(starvedRuns(new Map([[load('d: ours'), [run(0.8), run(1)]]]), 2), []);
});
