// In-process CPU per page of /me/posts on PostgreSQL: the store's listPublishedByAuthor, 16 at a time.
import pg from 'pg';
import { loadSettings } from '../src/config/settings.js';
import { createDeps, prepareDatabase } from '../src/deps.js';
import { readPosts } from '../src/core/api/views.js';
import { siteUrls } from '../src/core/urls.js';
import { SMOKE_SEED, seedBench } from '../bench/seed.js';
import { readdirSync, readFileSync } from 'node:fs';
/** CPU µs of every postgres process, from /proc (clock ticks of 10 ms). */
function postgresCpuUs(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch { /* gone */ }
  }
  return ticks * 10_000;
}
const schema = `scratch_page_${process.pid}`;
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
await admin.connect();
await admin.query(`create schema ${schema}`);
const url = `postgres://postgres@127.0.0.1:5432/test?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
const deps = createDeps(loadSettings({ DATABASE_URL: url, REDIS_URL: '', DEMO: '0', LOG_LEVEL: 'warn', JANITOR_INTERVAL: '0', BASE_URL: 'http://127.0.0.1:8080' }));
try {
  await prepareDatabase(deps);
  await seedBench(deps, { ...SMOKE_SEED, posts: 4_000, prolificUserPosts: 2_000 }, 1, 'x');
  const [heavy] = await deps.database.db.selectFrom('users').select('id').orderBy('id').limit(1).execute();
  const urls = siteUrls('http://127.0.0.1:8080');
  const CONC = Number(process.env.CONC ?? 16), N = 6000;
  for (const page of [0, 49]) {
    const once = () => readPosts(deps.stores, heavy!.id, { page, size: 20 }, urls);
    const first = await once();
    if (first.items.length !== 20) throw new Error('not a full page');
    for (let i = 0; i < 2000; i += CONC) await Promise.all(Array.from({ length: CONC }, once));
    const figures: number[] = []; const pgFigures: number[] = [];
    for (let round = 0; round < 7; round++) {
      const t0 = process.cpuUsage(); const p0 = postgresCpuUs();
      for (let i = 0; i < N; i += CONC) await Promise.all(Array.from({ length: CONC }, once));
      const t = process.cpuUsage(t0);
      figures.push((t.user + t.system) / N);
      pgFigures.push((postgresCpuUs() - p0) / N);
    }
    figures.sort((a, b) => a - b); pgFigures.sort((a, b) => a - b);
    console.log(`page ${page}: ours median ${figures[3]!.toFixed(1)} µs cpu/page (${figures.map((f) => f.toFixed(0)).join(' ')}); postgres ${pgFigures[3]!.toFixed(1)} (${pgFigures.map((f) => f.toFixed(0)).join(' ')})`);
  }
} finally {
  await deps.close?.();
  await admin.query(`drop schema ${schema} cascade`);
  await admin.end();
}
process.exit(0);
