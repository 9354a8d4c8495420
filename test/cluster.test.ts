/** `npm run cluster -- N` (scripts/cluster.mjs): instances on consecutive ports, each with its own metrics port. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { temporarySqlitePath } from './support/databases.js';
import { answers, compiled, descendants, isAlive, run } from './support/processes.js';

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A first port whose `count` consecutive ports are all free. */
async function freeRange(count: number, avoid: number[] = []): Promise<number> {
  for (;;) {
    const first = 20_000 + Math.floor(Math.random() * 40_000);
    const range = Array.from({ length: count }, (_, i) => first + i);
    if (range.some((p) => avoid.includes(p))) continue;
    if ((await Promise.all(range.map(free))).every(Boolean)) return first;
  }
}

const healthzCount = (metrics: string) =>
  Number(/http_requests_total\{method="GET",route="\/healthz",status="200"\} (\d+)/.exec(metrics)?.[1] ?? 0);

test('npm run cluster gives each instance its own metrics port, says which, and stops them all on SIGTERM', async () => {
  compiled();
  const port = await freeRange(2);
  const metricsPort = await freeRange(2, [port, port + 1]);
  const cluster = run('npm', ['run', 'cluster', '--', '2'], {
    DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(port), METRICS_PORT: String(metricsPort), DEMO: '0', LOG_LEVEL: 'warn',
  });
  const tree: number[] = [];
  try {
    const output = await cluster.waitFor(/instance 2: [^\n]*\n/);
    tree.push(...descendants(cluster.child.pid!));
    assert.match(output, new RegExp(`instance 1: http://127\\.0\\.0\\.1:${port} +metrics http://127\\.0\\.0\\.1:${metricsPort}/metrics`));
    assert.match(output, new RegExp(`instance 2: http://127\\.0\\.0\\.1:${port + 1} +metrics http://127\\.0\\.0\\.1:${metricsPort + 1}/metrics`));

    // Each metrics port counts its own instance's requests, and only those.
    const metricsOf = async (p: number) => (await fetch(`http://127.0.0.1:${p}/metrics`)).text();
    const before = await Promise.all([metricsOf(metricsPort), metricsOf(metricsPort + 1)]);
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${port + 1}/healthz`)).status, 200);
    const after = await Promise.all([metricsOf(metricsPort), metricsOf(metricsPort + 1)]);
    assert.equal(healthzCount(after[0]) - healthzCount(before[0]), 3);
    assert.equal(healthzCount(after[1]) - healthzCount(before[1]), 1);
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'never on the public port');

    cluster.child.kill('SIGTERM');
    assert.equal(await cluster.exited, 0, cluster.output());
    for (const p of [port, port + 1, metricsPort, metricsPort + 1]) assert.equal(await answers(p), false, `port ${p} closed`);
    assert.deepEqual(tree.filter(isAlive), [], 'no instance is left');
  } finally {
    for (const pid of [...tree, cluster.child.pid!].filter(isAlive)) process.kill(pid, 'SIGKILL');
  }
});

test('metrics ports that overlap the instances\' ports are refused with one line, exit 2', () => {
  const result = spawnSync(process.execPath, ['scripts/cluster.mjs', '3'], {
    encoding: 'utf8', env: { PATH: process.env.PATH ?? '', PORT: '4000', METRICS_PORT: '4002' },
  });
  assert.equal(result.status, 2);
  assert.equal(result.stderr, 'cluster: the metrics ports 4002–4004 overlap the instances\' ports 4000–4002\n');
});
