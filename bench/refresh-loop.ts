/**
 * A refresh without `openid` (scenario d2's request: HTTP Basic, `grant_type=refresh_token`) through
 * the whole app in process (`app.inject`), on a SQLite file or, with `LOOP_DATABASE_URL`, on that
 * PostgreSQL server: Fastify's routing, hooks and reply, our route, the rotation and its COMMIT,
 * the audit line written to /dev/null; not Node's HTTP server. `CHAINS` refresh chains rotate in
 * turn, `AT_ONCE` requests in flight.
 *
 * Given checkouts (default: this one), each gets an app of its own code on a file (or a schema,
 * dropped at the end) of its own, and their rounds take turns, so the machine's drift falls on all
 * alike. Prints CPU µs per refresh for each, median of the rounds: our process's only, not the
 * PostgreSQL server's.
 *   npx tsx bench/refresh-loop.ts [CHECKOUT ...]       # e.g. a copy of main, then .
 *   LOOP_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/refresh-loop.ts /tmp/main .
 */
import { openSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { dropSchema, temporarySqlitePath, withSearchPath } from '../test/support/databases.js';

const REFRESHES = Number(process.env.REFRESHES ?? 2_000);
const ROUNDS = Number(process.env.ROUNDS ?? 9);
const CHAINS = 64;
const AT_ONCE = 8;
const devNull = openSync('/dev/null', 'w');
const postgresUrl = process.env.LOOP_DATABASE_URL;
const schemas: string[] = [];

/** Runs `work` on a connection of its own to `postgresUrl`, closed afterwards. */
async function onPostgres(work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/** A database of its own for each checkout: a temporary SQLite file, or a new schema on `postgresUrl`. */
async function databaseUrl(): Promise<string> {
  if (postgresUrl === undefined) return `sqlite:${temporarySqlitePath()}`;
  const schema = `refresh_loop_${process.pid}_${schemas.length}`;
  await onPostgres(async (client) => { await client.query(`create schema ${schema}`); });
  schemas.push(schema);
  return withSearchPath(postgresUrl, schema);
}

/** An app of `checkout`'s code with a confidential client and `CHAINS` refresh tokens; `refresh()` rotates the next. */
async function setUp(checkout: string): Promise<() => Promise<void>> {
  const load = (path: string) => import(pathToFileURL(resolve(checkout, path)).href);
  const [{ buildApp }, { loadSettings }, { createAccount }, { registerClient }, { issueTokens }, { ensureSigningKeys }, { createDeps, prepareDatabase }, { pinoAuditSink }] = await Promise.all([
    'src/app.ts', 'src/config/settings.ts', 'src/core/accounts/accounts.ts', 'src/core/oauth/clients.ts', 'src/core/oauth/tokens/issue.ts',
    'src/core/oidc/keys.ts', 'src/deps.ts', 'src/observability/audit.ts',
  ].map(load));
  const settings = loadSettings({ DATABASE_URL: await databaseUrl(), BASE_URL: 'http://127.0.0.1:1', DEMO: '0' });
  // The audit line written synchronously, as the bench's server writes its standard output to a file.
  const deps = createDeps(settings, { audit: pinoAuditSink({ logLevel: 'info', destination: { write: (line: string) => { writeSync(devNull, line); } } }) });
  await prepareDatabase(deps);
  await ensureSigningKeys(deps.stores, deps.clock, settings.keysSecret);
  const app: FastifyInstance = await buildApp(deps, { logLevel: 'silent' });
  await app.ready();
  const now = deps.clock.now();
  const { client, secret } = await registerClient(deps.stores, deps.clock, {
    name: 'Loop', type: 'confidential', redirectUris: ['https://app.example/callback'], ownerId: null,
    homepageUrl: 'https://app.example', description: 'The refresh loop.',
  });
  const authorization = `Basic ${Buffer.from(`${client.clientId}:${secret}`).toString('base64')}`;
  const chains: string[] = [];
  for (let i = 0; i < CHAINS; i++) {
    const user = await createAccount(deps.stores, deps.clock, { username: `loop${i}`, password: 'correct horse battery' });
    const grant = await deps.stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    const issued = await deps.stores.transaction((tx: unknown) => issueTokens(tx, now, settings, undefined, {
      grant, user, client, accessScope: 'profile:read', refreshScope: 'profile:read', nonce: null, dpopJkt: null, resource: null,
    }));
    chains.push(issued.refreshToken);
  }
  let next = 0;
  return async () => {
    const chain = next++ % CHAINS;
    const response = await app.inject({
      method: 'POST', url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
      payload: `grant_type=refresh_token&refresh_token=${chains[chain]}`,
    });
    if (response.statusCode !== 200) throw new Error(`${response.statusCode} ${response.body}`);
    chains[chain] = (JSON.parse(response.body) as { refresh_token: string }).refresh_token;
  };
}

async function round(refresh: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  let started = 0;
  const lane = async () => { while (started++ < REFRESHES) await refresh(); };
  await Promise.all(Array.from({ length: AT_ONCE }, lane));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / REFRESHES;
}

const checkouts = process.argv.length > 2 ? process.argv.slice(2) : ['.'];
const loops: Array<{ checkout: string; refresh: () => Promise<void>; rounds: number[] }> = [];
try {
  for (const checkout of checkouts) loops.push({ checkout, refresh: await setUp(checkout), rounds: [] });
  for (const loop of loops) await round(loop.refresh);
  for (let r = 0; r < ROUNDS; r++) for (const loop of loops) loop.rounds.push(await round(loop.refresh));
} finally {
  // The schemas go whether the rounds succeeded or not.
  if (schemas.length > 0) await onPostgres(async (client) => { for (const schema of schemas) await dropSchema(client, schema); });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(JSON.stringify({
  refreshes: REFRESHES, rounds: ROUNDS, database: postgresUrl === undefined ? 'sqlite' : 'postgres',
  cpuUsPerRefresh: loops.map(({ checkout, rounds }) => ({ checkout, median: Math.round(median(rounds) * 10) / 10, all: rounds.map(Math.round) })),
}));
process.exit(0);
