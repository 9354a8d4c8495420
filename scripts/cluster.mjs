// `npm run cluster -- N`: N instances of the service on consecutive ports from PORT (3000), all
// on the same DATABASE_URL and REDIS_URL, as they would run behind a load balancer. They share
// one issuer: BASE_URL, or the first instance's address when unset. The first instance
// prepares the database (migrations, keys, demo) before the others start. SIGTERM or Ctrl-C
// stops them all.
import { spawn } from 'node:child_process';
import { serviceNodeFlags } from './service-node-flags.mjs';

const count = Number(process.argv[2] ?? 2);
if (!Number.isInteger(count) || count < 1 || count > 32) {
  process.stderr.write('usage: npm run cluster -- N   (N from 1 to 32)\n');
  process.exit(2);
}
const firstPort = Number(process.env.PORT ?? 3000);
const baseUrl = process.env.BASE_URL ?? `http://localhost:${firstPort}`;
const children = [];

async function waitHealthy(port) {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
    } catch { /* not yet listening */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`instance on port ${port} did not become healthy`);
}

function start(port) {
  const child = spawn(process.execPath, [...serviceNodeFlags(), 'dist/main.js'], {
    env: { ...process.env, PORT: String(port), BASE_URL: baseUrl, WORKERS: '1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.on('exit', (code) => {
    if (!stopping) { process.stderr.write(`instance on port ${port} exited (${code})\n`); stop(); }
  });
  children.push(child);
}

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.on('exit', r))))).then(() => process.exit(0));
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

start(firstPort);
await waitHealthy(firstPort);
for (let i = 1; i < count; i++) start(firstPort + i);
await Promise.all(children.map((_, i) => waitHealthy(firstPort + i)));
process.stdout.write(`${count} instances on ports ${firstPort}–${firstPort + count - 1}, issuer ${baseUrl}\n`);
