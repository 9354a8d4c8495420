/** What the bench's report says about its own runs (pure functions of bench/run.ts; no load is run). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type BenchReport, type Load, type Measurement, type RateCurvePoint, cpuUsPerRequest, measureRounds, renderTable, schedule, sendingCostAt, starvedRuns,
} from '../../bench/run.js';
import { unusedPath } from '../../bench/results-file.js';
import { median } from '../../bench/statistics.js';

function run(serverCpu: number): Measurement {
  return { cpuUsPerRequest: 100, rate: 1, requests: 1, p50Ms: 1, p99Ms: 1, unexpected: 0, socketErrors: 0, serverCpu, generatorCpu: 0.5, serverPeakRssMb: 1 };
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

test('with rounds, a scenario\'s block measures its baseline\'s load beside it, round by round, whether or not the baseline\'s own scenario is run', async () => {
  const order: string[] = [];
  const recorded = (label: string): Load => ({ label, measure: () => { order.push(label); return Promise.resolve(run(1)); } });
  const [meOurs, pageOurs, ceiling] = [recorded('a: ours'), recorded('b1: ours'), recorded('f: the ceiling')];
  const page = { id: 'b1', title: 'first page', ours: pageOurs, ceiling, baseline: 'a' };
  const baselineOf = (comparison: { baseline?: string }) => (comparison.baseline === 'a' ? meOurs : undefined);
  const blocks = schedule([page], [ceiling], 2, baselineOf);
  assert.equal(blocks.length, 1);
  const runs = await measureRounds(blocks[0]!, 2, () => {});
  assert.deepEqual(order, ['f: the ceiling', 'a: ours', 'b1: ours', 'f: the ceiling', 'a: ours', 'b1: ours']);
  assert.equal(runs.get(meOurs)?.length, 2, 'the baseline\'s runs are the block\'s');
  assert.equal(blocks[0]!.baselines?.get(page), meOurs);
  const [single] = schedule([page], [ceiling], 1, baselineOf);
  assert.deepEqual(single!.references, [ceiling], 'one round measures the baseline only as its own scenario');
});

test('CPU per request is the server\'s clock ticks over the run, in µs, divided by the requests completed', () => {
  assert.equal(cpuUsPerRequest(250, 100, 10_000), 250, '2.5 s of CPU over 10,000 requests');
  assert.equal(cpuUsPerRequest(1, 100, 3), 3333.3, 'to a tenth of a µs');
  assert.ok(Number.isNaN(cpuUsPerRequest(5, 100, 0)), 'no request completed: no figure');
});

test('the table shows CPU per request first, ours and the references\', before the rates', () => {
  const ours: Measurement = { ...run(1), cpuUsPerRequest: 80, rate: 12_000 };
  const ceiling: Measurement = { ...run(1), cpuUsPerRequest: 40, rate: 24_000 };
  const report = {
    setup: { rounds: 1 }, seeding: [], peakRssMb: {}, generatorBottleneck: false, notes: [],
    scenarios: [{ id: 'a', title: '/me', ours, ceiling, ratioCeiling: 0.5, cpuRatioCeiling: 0.5 }],
  } as unknown as BenchReport;
  const [header = '', , row = ''] = renderTable(report).split('\n');
  const columns = header.split(/\s{2,}/);
  assert.deepEqual(columns.slice(0, 4), ['scenario', 'CPU µs/req', 'ceiling µs', 'CPU ×ceiling']);
  assert.ok(columns.indexOf('ours req/s') > 3, 'the rate comes after the CPU figures');
  assert.deepEqual(row.split(/\s{2,}/).slice(0, 4), ['a /me', '80', '40', '0.50']);
});

test('what sending costs at a rate is read on straight lines between the rate curve\'s points, and held at its ends', () => {
  const point = (rate: number, sendingUs: number): RateCurvePoint => ({ busyUs: 0, busyMeasuredUs: 0, cpuUsPerRequest: sendingUs, rate, sendingUs });
  const curve = [point(45_000, 18), point(12_000, 32), point(20_000, 28)];
  assert.equal(sendingCostAt(curve, 16_000), 30, 'half way between 12,000 and 20,000 /s');
  assert.equal(sendingCostAt(curve, 20_000), 28, 'on a point');
  assert.equal(sendingCostAt(curve, 32_500), 23, 'half way between 20,000 and 45,000 /s');
  assert.equal(sendingCostAt(curve, 8_000), 32, 'slower than the slowest point: its figure');
  assert.equal(sendingCostAt(curve, 60_000), 18, 'faster than the fastest point: its figure');
});

test('a run without --out never writes over an earlier run of the day: it takes the next free -N', () => {
  const taken = new Set(['r/2026-11-25-sqlite.json', 'r/2026-11-25-sqlite-2.json']);
  const exists = (path: string) => taken.has(path);
  assert.equal(unusedPath('r/2026-11-25-postgres-redis.json', exists), 'r/2026-11-25-postgres-redis.json', 'the first run of the day keeps the plain name');
  assert.equal(unusedPath('r/2026-11-25-sqlite.json', exists), 'r/2026-11-25-sqlite-3.json');
});

test('a median is the middle measurement, or the mean of the two middle ones, whatever order they came in', () => {
  const rounds = [9, 1, 5];
  assert.equal(median(rounds), 5);
  assert.deepEqual(rounds, [9, 1, 5], 'the measurements keep their order');
  assert.equal(median([40, 10, 30, 20]), 25);
});
