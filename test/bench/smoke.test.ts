/**
 * A smoke run of `npm run bench` (issue 8): a small data set and a second per scenario, checking
 * only that every scenario runs against every server and that every figure is reported. No timing
 * assertions. Skipped only when wrk or taskset is genuinely absent (.ci/run installs wrk).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { renderTable, runBench, wrkAvailable } from '../../bench/run.js';
import { SMOKE_SEED } from '../../bench/seed.js';

test('the bench runs every scenario and reports every figure', { skip: wrkAvailable() ? false : 'wrk is not installed', timeout: 240_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-smoke-'));
  try {
    const out = join(dir, 'result.json');
    const report = await runBench({
      seconds: 1, warmup: 1, connections: 4, seed: SMOKE_SEED, build: true, out,
      env: { DATABASE_URL: '', REDIS_URL: '' }, log: () => {},
    });
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), JSON.parse(JSON.stringify(report)));
    assert.deepEqual(report.scenarios.map((s) => s.id), ['a', 'b1', 'b2', 'c1', 'c2', 'd', 'e1', 'e2', 'rss']);
    for (const scenario of report.scenarios.filter((s) => s.id !== 'rss')) {
      for (const m of [scenario.ours, scenario.ceiling, scenario.peer]) {
        if (m === undefined) continue;
        assert.ok(m.requests > 0, `${scenario.id}: no requests`);
        assert.ok(m.rate > 0, `${scenario.id}: no completed request or flow`);
        assert.equal(m.unexpected, 0, `${scenario.id}: unexpected answers`);
        for (const key of ['p50Ms', 'p99Ms', 'serverCpu', 'generatorCpu', 'serverPeakRssMb'] as const) {
          assert.ok(Number.isFinite(m[key]), `${scenario.id}: ${key} missing`);
        }
      }
    }
    const byId = Object.fromEntries(report.scenarios.map((s) => [s.id, s]));
    assert.ok(byId.a!.ceiling && byId.a!.peer, '/me is compared with the ceiling and the peer');
    assert.ok(byId.d!.peer && byId.e1!.peer && byId.e2!.peer, 'refresh and code flow are compared with the peer');
    assert.ok(report.peakRssMb.ours > 0 && report.peakRssMb.ceiling > 0 && report.peakRssMb.peer > 0);
    assert.match(renderTable(report), /×ceiling[\s\S]*load generator:/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
