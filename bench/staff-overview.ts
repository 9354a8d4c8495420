/**
 * `npm run bench -- --staff-overview` (issues 34 and 35 item 4): the staff console's overview,
 * `GET /admin`, on a database of 100,000 members (14,000 of them joined in the last 14 days) and
 * a million access tokens, loaded with wrk through our real server as a signed-in admin with
 * two-step verification. Its figure is the server's CPU per overview (the bench's first figure),
 * against issue 35's budget of 50 ms. Embedded SQLite, or PostgreSQL with DATABASE_URL, as the
 * main bench; `--small` seeds the smoke run's few hundred members instead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SITE_TIME_ZONE, dayIn } from '../src/core/site-time.js';
import { FIGURES } from '../src/core/staff/ports.js';
import type { Deps } from '../src/deps.js';
import {
  type BenchOptions, type BenchReport, type ScenarioResult, type Server, buildReport, fmt, load, measureRounds, overRounds, peakRssMb,
  prepareDatabaseTarget, prepareRun, scenarioLine, seedDatabase, serviceEnvironment, starvedNote, starvedRuns, startService, writeLines, writeReport,
} from './run.js';
import { type SeededData, seedSession } from './seed.js';

/** Issue 35 item 4: the overview under 50 ms of CPU. */
const BUDGET_US = 50_000;
const OVERVIEW = '/admin';
const DAY_MS = 86_400_000;
/** The overview's days, each with a row of every stored figure, as a site that runs has them. */
const FIGURE_DAYS = 14;

/**
 * Makes one of the seeded two-step accounts an admin and signs it in just now, with password and
 * code (so the console's 15-minute rule holds too).
 * Adds a fortnight of stored daily figures. Returns the session cookie's value.
 */
async function signedInAdmin(deps: Deps, seeded: SeededData): Promise<string> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const username = seeded.totpUsers[0]![0]!;
  const { id } = await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow();
  if (!(await deps.stores.roles.setRole(id, 'admin', now))) throw new Error(`no account ${username} to make an admin`);
  const sessionId = await seedSession(db, id, now);
  const days = Array.from({ length: FIGURE_DAYS }, (_, i) => dayIn(now - i * DAY_MS, DEFAULT_SITE_TIME_ZONE));
  await deps.stores.dailyFigures.add(days.flatMap((day, i) => FIGURES.filter((figure) => figure !== 'new_members').map((figure) => ({ day, figure, count: 1000 + i }))));
  return sessionId;
}

export async function runStaffOverview(options: BenchOptions): Promise<BenchReport> {
  const { log, env } = prepareRun(options);
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const servers: Server[] = [];
  try {
    const databaseUrl = await prepareDatabaseTarget(env, work);
    const redisUrl = env.REDIS_URL || undefined;
    const serviceEnv = serviceEnvironment(databaseUrl, redisUrl);
    // No DPoP-bound token is used here: any thumbprint will do for the rows seeding writes.
    const { seeded, extra: sessionId, seeding } = await seedDatabase(serviceEnv, options.seed, 1, 'bench-staff-overview', log, undefined, signedInAdmin);
    const { server } = await startService(serviceEnv, env, seeded.rotatingTokens[0]!);
    servers.push(server);

    const cookie = `svc_session=${sessionId!}`;
    const first = await fetch(server.url + OVERVIEW, { headers: { cookie } });
    if (first.status !== 200) throw new Error(`GET ${OVERVIEW} as the admin answered ${first.status}, not the overview`);
    const cookies = writeLines(work, 'admin-cookies.txt', [cookie]);
    const overview = load('o: ours, the overview', server, 'get.lua', OVERVIEW, () => ({ BENCH_PATH: OVERVIEW, BENCH_COOKIES: cookies }), options);
    const title = `GET ${OVERVIEW}, the overview (${fmt(options.seed.users)} members, ${fmt(options.seed.accessTokens)} access tokens)`;
    const runs = await measureRounds({ references: [], comparisons: [{ id: 'o', title, ours: overview }] }, options.rounds, log);
    const ours = overRounds(runs.get(overview)!);
    const scenario: ScenarioResult = { id: 'o', title, ours, target: `< ${BUDGET_US / 1000} ms CPU per overview`, met: ours.cpuUsPerRequest < BUDGET_US };
    log(scenarioLine(scenario));
    const report = buildReport(options, databaseUrl, redisUrl, {
      seeding: [seeding], scenarios: [scenario], runs: runs.get(overview)!, peakRssMb: { ours: peakRssMb(server.pid) },
      notes: [
        `${fmt(options.seed.joinedPerDay * 14)} members joined in the overview's 14 days; the admin's session is seeded as a sign-in with password and code, just before the run`,
        ...starvedNote(starvedRuns(runs, options.rounds)),
      ],
    });
    writeReport(report, options.out, '-staff-overview', log);
    return report;
  } finally {
    for (const server of servers.reverse()) await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
