/**
 * How two instances on one SQLite file share its write lock (docs/reliability.md "Several
 * instances", `writeLockTaker` in src/storage/database.ts): `INSTANCES` processes, each an app of
 * this checkout on the same file, each rotating its own `CHAINS` refresh chains (scenario d2's
 * request, through `app.inject`; `SCOPE`), all in flight at once, for `SECONDS`. Prints per instance the
 * refreshes served and their latency (p50, p99, max), and the ratio of the most served to the least.
 *   npx tsx bench/lock-fairness.ts                 # INSTANCES=1 for one instance alone
 */
import { spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/config/settings.js';
import { createAccount } from '../src/core/accounts/accounts.js';
import { registerClient } from '../src/core/oauth/clients.js';
import { prepareTokens } from '../src/core/oauth/tokens/issue.js';
import { ensureSigningKeys } from '../src/core/oidc/keys.js';
import { createDeps, prepareDatabase } from '../src/deps.js';
import { pinoAuditSink } from '../src/observability/audit.js';
import { temporarySqlitePath } from '../test/support/databases.js';

const INSTANCES = Number(process.env.INSTANCES ?? 2);
const CHAINS = Number(process.env.CHAINS ?? 24);
const SECONDS = Number(process.env.SECONDS ?? 15);
/** With `openid` each rotation signs an id_token while its group holds the write lock (decision 36). */
const SCOPE = process.env.SCOPE ?? 'profile:read';
const devNull = openSync('/dev/null', 'w');

interface Seed { path: string; authorization: string; chains: string[][] }

function open(path: string) {
  const settings = loadSettings({ DATABASE_URL: `sqlite:${path}`, BASE_URL: 'http://127.0.0.1:1', DEMO: '0' });
  const deps = createDeps(settings, { audit: pinoAuditSink({ logLevel: 'info', destination: { write: (line: string) => { writeSync(devNull, line); } } }) });
  return { settings, deps };
}

/** A file with a confidential client and `CHAINS` refresh tokens for each instance. */
async function seed(): Promise<Seed> {
  const path = temporarySqlitePath();
  const { settings, deps } = open(path);
  await prepareDatabase(deps);
  await ensureSigningKeys(deps.stores, deps.clock, settings.keysSecret);
  const now = deps.clock.now();
  const signing = { keys: await deps.keys.keySet(), marker: await deps.tokenMarks.ready() };
  const { client, secret } = await registerClient(deps.stores, deps.clock, {
    name: 'Fairness', type: 'confidential', redirectUris: ['https://app.example/callback'], ownerId: null,
    homepageUrl: 'https://app.example', description: 'The lock fairness bench.',
  });
  const chains: string[][] = [];
  for (let instance = 0; instance < INSTANCES; instance++) {
    const own: string[] = [];
    for (let i = 0; i < CHAINS; i++) {
      const user = await createAccount(deps.stores, deps.clock, { username: `fair${instance}x${i}`, password: 'correct horse battery' });
      const grant = await deps.stores.grants.create({ userId: user.id, clientId: client.clientId, scope: SCOPE, nonce: null, authTime: now }, now);
      const { issued, access, refresh } = await prepareTokens(now, settings, signing, {
        grant, user, client, accessScope: 'profile:read', refreshScope: SCOPE, nonce: null, dpopJkt: null, resource: null,
      });
      await deps.stores.tokens.insertPair(access, refresh);
      own.push(issued.refreshToken);
    }
    chains.push(own);
  }
  await deps.close();
  return { path, authorization: `Basic ${Buffer.from(`${client.clientId}:${secret}`).toString('base64')}`, chains };
}

/** One instance: waits for "go" on standard input, rotates its chains for `SECONDS`, prints its figures. */
async function serve(seedFile: string, instance: number): Promise<void> {
  const { path, authorization, chains: all } = JSON.parse(readFileSync(seedFile, 'utf8')) as Seed;
  const chains = all[instance]!;
  const { settings, deps } = open(path);
  await ensureSigningKeys(deps.stores, deps.clock, settings.keysSecret);
  const app = await buildApp(deps, { logLevel: 'silent' });
  await app.ready();
  console.log('ready');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));
  const latencies: number[] = [];
  const refused = new Map<string, number>();
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(chains.map(async (_, chain) => {
    while (performance.now() < end) {
      const start = performance.now();
      const response = await app.inject({
        method: 'POST', url: '/api/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
        payload: `grant_type=refresh_token&refresh_token=${chains[chain]}`,
      });
      if (response.statusCode !== 200) {
        const key = `${response.statusCode} ${response.body.slice(0, 120)}`;
        refused.set(key, (refused.get(key) ?? 0) + 1);
        return;
      }
      latencies.push(performance.now() - start);
      chains[chain] = (JSON.parse(response.body) as { refresh_token: string }).refresh_token;
    }
  }));
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))]! * 10) / 10;
  console.log(JSON.stringify({ instance, served: latencies.length, p50: at(0.5), p99: at(0.99), max: at(1), refused: Object.fromEntries(refused) }));
  await app.close();
  await deps.close();
}

async function main(): Promise<void> {
  const seeded = await seed();
  const seedFile = join(dirname(seeded.path), 'seed.json');
  writeFileSync(seedFile, JSON.stringify(seeded));
  const self = fileURLToPath(import.meta.url);
  const children = Array.from({ length: INSTANCES }, (_, instance) => {
    const child = spawn(process.execPath, [...process.execArgv, self, seedFile, String(instance)], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! });
    const ready = new Promise<void>((resolve) => lines.once('line', () => resolve()));
    const result = new Promise<{ served: number }>((resolve) => lines.on('line', (line) => { if (line.startsWith('{')) resolve(JSON.parse(line)); }));
    return { child, ready, result };
  });
  await Promise.all(children.map(({ ready }) => ready));
  for (const { child } of children) child.stdin!.write('go\n');
  const results = await Promise.all(children.map(({ result }) => result));
  const served = results.map((result) => result.served);
  console.log(JSON.stringify({ instances: INSTANCES, chains: CHAINS, seconds: SECONDS, scope: SCOPE, results, total: served.reduce((a, b) => a + b, 0), ratio: Math.round((Math.max(...served) / Math.min(...served)) * 100) / 100 }));
}

if (process.argv.length > 3) await serve(process.argv[2]!, Number(process.argv[3]));
else await main();
process.exit(0);
