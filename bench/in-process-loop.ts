/**
 * What the in-process loops (`refresh-loop.ts`, `codeflow-loop.ts`) share: a database of its own
 * for each checkout (a temporary SQLite file, or a schema on `LOOP_DATABASE_URL`, dropped at the
 * end), rounds of `count` requests with `AT_ONCE` in flight timed by our process's CPU, and the
 * checkouts' rounds taking turns so the machine's drift falls on all alike. On PostgreSQL each
 * checkout's connections carry its schema's name as `application_name`, and when the server runs
 * on this machine (its backends' /proc entries readable) a round also reads their CPU: what the
 * database server spent per request beside our process.
 */
import { openSync, readFileSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { dropSchema, temporarySqlitePath, withSearchPath } from '../test/support/databases.js';
import { median } from './statistics.js';

const AT_ONCE = 8;
export const postgresUrl = process.env.LOOP_DATABASE_URL;
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

/** A database of its own for a checkout: a temporary SQLite file, or a new schema named after `name` on `postgresUrl`. */
export async function loopDatabaseUrl(name: string): Promise<string> {
  if (postgresUrl === undefined) return `sqlite:${temporarySqlitePath()}`;
  const schema = `${name}_${process.pid}_${schemas.length}`;
  await onPostgres(async (client) => { await client.query(`create schema ${schema}`); });
  schemas.push(schema);
  const url = new URL(withSearchPath(postgresUrl, schema));
  url.searchParams.set('application_name', schema);
  return url.toString();
}

/** CPU ticks (user + system, 1/100 s) of a process, 0 when it is not readable here. */
function ticksOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** The PostgreSQL backends serving `schema`'s app (`application_name`), with their CPU ticks. */
async function backendTicks(monitor: pg.Client, schema: string): Promise<Map<number, number>> {
  const { rows } = await monitor.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [schema]);
  return new Map(rows.map(({ pid }) => [pid, ticksOf(pid)]));
}

const devNull = openSync('/dev/null', 'w');

/** A module of `checkout`'s code, by its path there. */
export function loader(checkout: string): (path: string) => Promise<any> {
  return (path) => import(pathToFileURL(resolve(checkout, path)).href);
}

/**
 * An app of `checkout`'s code over a database of its own (`loopDatabaseUrl(name)`), with `env`'s
 * settings besides, its keys made, ready for `inject`; the audit line written synchronously to
 * /dev/null, as the bench's server writes its standard output to a file.
 */
export async function startLoopApp(checkout: string, name: string, env: Record<string, string> = {}): Promise<{ app: FastifyInstance; deps: any; settings: any }> {
  const load = loader(checkout);
  const [{ buildApp }, { loadSettings }, { ensureSigningKeys }, { createDeps, prepareDatabase }, { pinoAuditSink }] = await Promise.all([
    'src/app.ts', 'src/config/settings.ts', 'src/core/oidc/keys.ts', 'src/deps.ts', 'src/observability/audit.ts',
  ].map(load));
  const settings = loadSettings({ DATABASE_URL: await loopDatabaseUrl(name), BASE_URL: 'http://127.0.0.1:1', DEMO: '0', ...env });
  const deps = createDeps(settings, { audit: pinoAuditSink({ logLevel: 'info', destination: { write: (line: string) => { writeSync(devNull, line); } } }) });
  await prepareDatabase(deps);
  await ensureSigningKeys(deps.stores, deps.clock, settings.keysSecret);
  const app: FastifyInstance = await buildApp(deps, { logLevel: 'silent' });
  await app.ready();
  return { app, deps, settings };
}

/** CPU µs of our process per request over `count` requests, `AT_ONCE` in flight; and of the PostgreSQL backends of `schema`, when given. */
async function round(request: () => Promise<void>, count: number, monitor?: { client: pg.Client; schema: string }): Promise<{ ours: number; database?: number }> {
  const before = monitor && await backendTicks(monitor.client, monitor.schema);
  const start = process.cpuUsage();
  let started = 0;
  const lane = async () => { while (started++ < count) await request(); };
  await Promise.all(Array.from({ length: AT_ONCE }, lane));
  const used = process.cpuUsage(start);
  const ours = (used.user + used.system) / count;
  if (!monitor || !before) return { ours };
  const after = await backendTicks(monitor.client, monitor.schema);
  let ticks = 0;
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0);
  return { ours, database: (ticks * 10_000) / count };
}

/**
 * Sets up each checkout (`setUp` gives its request), runs a warm-up round of each, then `rounds`
 * rounds of each in turn; the schemas go whether the rounds succeeded or not. Answers each
 * checkout's median and rounds, in CPU µs per request.
 */
export async function alternatingRounds(checkouts: string[], setUp: (checkout: string) => Promise<() => Promise<void>>, count: number, rounds: number):
  Promise<Array<{ checkout: string; median: number; all: number[]; databaseMedian?: number; databaseAll?: number[] }>> {
  const loops: Array<{ checkout: string; request: () => Promise<void>; rounds: number[]; database: number[]; schema?: string }> = [];
  const monitor = postgresUrl === undefined ? undefined : new pg.Client({ connectionString: postgresUrl });
  await monitor?.connect();
  try {
    for (const checkout of checkouts) {
      const request = await setUp(checkout);
      loops.push({ checkout, request, rounds: [], database: [], schema: schemas.at(-1) });
    }
    const watch = (loop: (typeof loops)[number]) => (monitor && loop.schema ? { client: monitor, schema: loop.schema } : undefined);
    for (const loop of loops) await round(loop.request, count, watch(loop));
    for (let r = 0; r < rounds; r++) {
      for (const loop of loops) {
        const { ours, database } = await round(loop.request, count, watch(loop));
        loop.rounds.push(ours);
        if (database !== undefined) loop.database.push(database);
      }
    }
  } finally {
    await monitor?.end();
    if (schemas.length > 0) await onPostgres(async (client) => { for (const schema of schemas) await dropSchema(client, schema); });
  }
  return loops.map(({ checkout, rounds: all, database }) => ({
    checkout, median: Math.round(median(all) * 10) / 10, all: all.map(Math.round),
    ...(database.length > 0 ? { databaseMedian: Math.round(median(database) * 10) / 10, databaseAll: database.map(Math.round) } : {}),
  }));
}
