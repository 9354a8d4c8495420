/** The command `npm start` serves with (scripts/service-node-flags.mjs), which the bench and `npm run cluster` use too. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { serviceEntry, serviceNodeFlags, serviceProcessEnv } from '../scripts/service-node-flags.mjs';

/** What the script prints with `DATABASE_URL` set to `databaseUrl` (unset when undefined), split as the shell splits it. */
function printedCommand(databaseUrl: string | undefined): string[] {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (databaseUrl === undefined) delete env.DATABASE_URL;
  else env.DATABASE_URL = databaseUrl;
  const printed = spawnSync(process.execPath, ['scripts/service-node-flags.mjs'], { env, encoding: 'utf8' });
  assert.equal(printed.status, 0, printed.stderr);
  return printed.stdout.trim().split(/\s+/);
}

test('the embedded database runs with semi-spaces of 4 MB, PostgreSQL with 8 (docs/performance.md decision 67)', () => {
  for (const embedded of [undefined, '', 'sqlite:./data/svc.sqlite']) {
    assert.ok(serviceNodeFlags(embedded).includes('--max-semi-space-size=4'), String(embedded));
  }
  for (const postgres of ['postgres://svc@db/svc', 'postgresql://svc@db/svc']) {
    assert.ok(serviceNodeFlags(postgres).includes('--max-semi-space-size=8'), postgres);
  }
});

test('the printed command is the environment, node with the flags for DATABASE_URL, and the bundle, one word each', () => {
  for (const databaseUrl of [undefined, 'sqlite:/tmp/a.sqlite', 'postgres://svc@db/svc']) {
    const environment = Object.entries(serviceProcessEnv()).map(([name, value]) => `${name}=${value}`);
    assert.deepEqual(printedCommand(databaseUrl), ['env', ...environment, 'node', ...serviceNodeFlags(databaseUrl), serviceEntry()]);
  }
});
