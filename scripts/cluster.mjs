// `npm run cluster -- N`: N instances of the service on consecutive ports from PORT (3000), all
// on the same DATABASE_URL and REDIS_URL, as they would run behind a load balancer. They share
// one issuer: BASE_URL, or the first instance's address when unset. With METRICS_PORT, each
// instance serves its own /metrics on consecutive ports from it (METRICS_PORT, +1, …), and the
// script says which is which. The first instance prepares the database (migrations, keys, demo)
// before the others start. SIGTERM or Ctrl-C stops them all.
import { spawn } from 'node:child_process';
import { serviceEntry, serviceNodeFlags, serviceProcessEnv } from './service-node-flags.mjs';

function usage(problem) {
  process.stderr.write(`cluster: ${problem}\n`);
  process.exit(2);
}

const count = Number(process.argv[2] ?? 2);
if (process.argv.length > 3 || !Number.isInteger(count) || count < 1 || count > 32) usage('usage: npm run cluster -- N   (N from 1 to 32)');
const firstPort = Number(process.env.PORT || 3000);
const host = process.env.HOST || '127.0.0.1';
const baseUrl = process.env.BASE_URL || `http://localhost:${firstPort}`;
const firstMetricsPort = process.env.METRICS_PORT ? Number(process.env.METRICS_PORT) : undefined;
if (firstPort + count - 1 > 65535) usage(`PORT=${firstPort} leaves no room for ${count} instances`);
if (firstMetricsPort !== undefined) {
  if (firstMetricsPort + count - 1 > 65535) usage(`METRICS_PORT=${firstMetricsPort} leaves no room for ${count} instances`);
  if (firstMetricsPort < firstPort + count && firstPort < firstMetricsPort + count) {
    usage(`the metrics ports ${firstMetricsPort}–${firstMetricsPort + count - 1} overlap the instances' ports ${firstPort}–${firstPort + count - 1}`);
  }
}
const children = [];

async function waitHealthy(port) {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
    } catch { /* not yet listening */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`instance on port ${port} did not become healthy`);
}

const metricsPortOf = (index) => (firstMetricsPort === undefined ? undefined : firstMetricsPort + index);

function start(index) {
  const port = firstPort + index;
  const metricsPort = metricsPortOf(index);
  const child = spawn(process.execPath, [...serviceNodeFlags(), serviceEntry()], {
    env: {
      ...process.env, ...serviceProcessEnv(), PORT: String(port), BASE_URL: baseUrl, WORKERS: '1',
      ...(metricsPort === undefined ? {} : { METRICS_PORT: String(metricsPort) }),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.on('exit', (code) => {
    if (!stopping) { process.stderr.write(`instance on port ${port} exited (${code})\n`); stop(1); }
  });
  children.push(child);
}

let stopping = false;
/** Stops every instance, then exits: 0 on a signal, 1 when an instance failed. */
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.on('exit', r)))))
    .then(() => process.exit(code));
}
process.on('SIGTERM', () => stop(0));
process.on('SIGINT', () => stop(0));

try {
  start(0);
  await waitHealthy(firstPort);
  for (let i = 1; i < count; i++) start(i);
  await Promise.all(children.map((_, i) => waitHealthy(firstPort + i)));
} catch (error) {
  process.stderr.write(`cluster: ${error.message}\n`);
  stop(1);
}
// Stopping already (an instance failed): nothing to announce.
if (!stopping) {
  const lines = [`${count} instances on ports ${firstPort}–${firstPort + count - 1}, issuer ${baseUrl}`];
  for (let i = 0; i < count; i++) {
    const metricsPort = metricsPortOf(i);
    lines.push(`  instance ${i + 1}: http://${host}:${firstPort + i}${metricsPort === undefined ? '' : `   metrics http://${host}:${metricsPort}/metrics`}`);
  }
  if (firstMetricsPort === undefined) lines.push('  (set METRICS_PORT to give each instance its own /metrics, on consecutive ports from it)');
  process.stdout.write(`${lines.join('\n')}\n`);
}
