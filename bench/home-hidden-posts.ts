/**
 * `npx tsx bench/home-hidden-posts.ts [--hidden 0,5000,50000] [--calls 200] [--name NAME] [--out FILE]`:
 * what the home page's read (`stores.posts.listRecentPublished(30)`) costs when a member who is
 * not active wrote the newest posts (docs/performance.md, decision 57). SQLite in a temporary file;
 * with `LOOP_DATABASE_URL=postgres://…`, PostgreSQL in a schema of its own, dropped after.
 *
 * For each count of hidden posts, a fresh database: 50 active members with 20,000 older posts,
 * then one member's `hidden` newer posts; PostgreSQL is analysed. Then, timing each phase:
 * - the suspension (`users.setStatus`), and the home read right after it;
 * - when the store has `syncHiddenFlags`, the passes that bring the posts' flags to it (their
 *   count, the slowest, the total), then the home read again (PostgreSQL vacuumed and analysed
 *   first, as autovacuum would);
 * - the member made active again, the home read right after (checked to show their posts), the
 *   passes again, the home read once more.
 * Last, `statusWriteMs`: the median of `calls` status changes of the member, suspended and made
 * active in turn (after 20), with no pass between.
 * Each read figure is the median of `calls` calls after 20, in ms. Run it against a checkout
 * without `syncHiddenFlags` for the figures before.
 * Writes bench/results/<date>-<sqlite|postgres>-home-hidden-posts[-NAME].json.
 */
import { cpus } from 'node:os';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import type { Stores } from '../src/core/stores.js';
import { openDatabase } from '../src/storage/database.js';
import { migrateToLatest } from '../src/storage/migrate.js';
import { createStores } from '../src/storage/stores.js';
import { parseBenchArguments, readBenchArguments, wholeNumber } from './arguments.js';
import { writeResults } from './results-file.js';
import { median } from './statistics.js';

const USAGE = 'usage: npx tsx bench/home-hidden-posts.ts [--hidden 0,5000,50000] [--calls 200] [--name NAME] [--out FILE]';
const { values, counts, calls } = readBenchArguments(() => {
  const typed = parseBenchArguments({
    hidden: { type: 'string', default: '0,5000,50000' }, calls: { type: 'string', default: '200' },
    name: { type: 'string' }, out: { type: 'string' },
  });
  return { values: typed, counts: typed.hidden.split(',').map((count) => wholeNumber(count, '--hidden', 0)), calls: wholeNumber(typed.calls, '--calls', 1) };
}, USAGE);
const postgresUrl = process.env.LOOP_DATABASE_URL;
const T0 = Date.UTC(2026, 10, 1);
const ACTIVE_MEMBERS = 50;
const OLDER_POSTS = 20_000;
const CHUNK = 500;

/** The store's pass over the flags, where the checkout has one. */
type Sync = (batch: number) => Promise<number>;
const syncOf = (stores: Stores): Sync | undefined => {
  const posts = stores.posts as unknown as { syncHiddenFlags?: Sync };
  return posts.syncHiddenFlags?.bind(posts);
};

/** The median time of `calls` calls of `run` after 20 unmeasured ones, in ms. */
async function medianMs(run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return Number(median(times).toFixed(3));
}

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const value = await run();
  return [value, Number((Number(process.hrtime.bigint() - start) / 1e6).toFixed(3))];
}

/** Passes until one changes nothing: how many, the slowest and the whole in ms. */
async function converge(sync: Sync) {
  let passes = 0;
  let slowestMs = 0;
  let totalMs = 0;
  for (;;) {
    const [changed, ms] = await timed(() => sync(500));
    passes++;
    slowestMs = Math.max(slowestMs, ms);
    totalMs += ms;
    if (changed === 0) break;
  }
  return { passes, slowestMs, totalMs: Number(totalMs.toFixed(1)) };
}

async function measure(hidden: number) {
  const schema = `bench_home_${randomBytes(4).toString('hex')}`;
  const directory = postgresUrl ? undefined : mkdtempSync(join(tmpdir(), 'svc-bench-home-'));
  const admin = postgresUrl ? new pg.Client({ connectionString: postgresUrl }) : undefined;
  let url: string | undefined;
  if (admin) {
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    const u = new URL(postgresUrl!);
    u.searchParams.set('options', `-c search_path=${schema}`);
    url = u.toString();
  }
  const handle = openDatabase(url ? { kind: 'postgres', url } : { kind: 'sqlite', path: join(directory!, 'svc.sqlite') });
  try {
    await migrateToLatest(handle.db);
    const stores = createStores(handle.db, handle.queries);
    const category = await stores.posts.ensureCategory('Bench');
    const user = (i: number) => stores.users.create({ username: `bench-${i}`, passwordHash: 'h', bio: '', member: false, level: 1, xp: 0 }, T0);
    const active: Array<{ id: number }> = [];
    for (let i = 0; i < ACTIVE_MEMBERS; i++) active.push(await user(i));
    const member = await user(ACTIVE_MEMBERS);
    const post = (authorId: number, at: number) => ({
      author_id: authorId, category_id: category.id, title: 't', body: 'b', excerpt: 'b', body_html: '<p>b</p>',
      status: 'published', created_at: at, updated_at: at,
    });
    const insert = async (rows: ReturnType<typeof post>[]) => {
      await handle.db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; i += CHUNK) await trx.insertInto('posts').values(rows.slice(i, i + CHUNK)).execute();
      });
    };
    await insert(Array.from({ length: OLDER_POSTS }, (_, i) => post(active[i % ACTIVE_MEMBERS]!.id, T0 + i * 1000)));
    await insert(Array.from({ length: hidden }, (_, i) => post(member.id, T0 + (OLDER_POSTS + i) * 1000)));
    const settle = async (vacuum: boolean) => {
      if (handle.dialect === 'postgres') await sql.raw(vacuum ? 'vacuum analyze' : 'analyze').execute(handle.db);
    };
    await settle(true);
    const home = () => stores.posts.listRecentPublished(30);
    const shows = async () => (await home()).some((p) => p.authorId === member.id);
    const sync = syncOf(stores);

    const [, suspendMs] = await timed(() => stores.users.setStatus(member.id, 'suspended', T0 + 1));
    const result: Record<string, unknown> = { hidden, suspendMs, suspendedAtOnceMs: await medianMs(home) };
    if (await shows()) throw new Error('a suspended member\'s post is on the home page');
    if (sync) {
      result.hidingPasses = await converge(sync);
      await settle(true);
      result.suspendedSyncedMs = await medianMs(home);
    }
    const [, reactivateMs] = await timed(() => stores.users.setStatus(member.id, 'active', T0 + 2));
    result.reactivateMs = reactivateMs;
    result.reactivatedAtOnceMs = await medianMs(home);
    if (hidden > 0 && !(await shows())) throw new Error('a member made active again is not on the home page');
    if (sync) {
      result.showingPasses = await converge(sync);
      await settle(true);
      result.reactivatedSyncedMs = await medianMs(home);
    }
    // The status write alone, 100 times each way, the member's posts as they are.
    let toggle = 0;
    result.statusWriteMs = await medianMs(() => stores.users.setStatus(member.id, toggle++ % 2 === 0 ? 'suspended' : 'active', T0 + 3));
    return result;
  } finally {
    await handle.close();
    if (admin) {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
    if (directory) rmSync(directory, { recursive: true, force: true });
  }
}

const rows = [];
for (const hidden of counts) {
  const row = await measure(hidden);
  console.log(JSON.stringify(row));
  rows.push(row);
}
const database = postgresUrl ? 'postgres' : 'sqlite';
const date = new Date().toISOString();
const file = writeResults({
  date, database, calls, activeMembers: ACTIVE_MEMBERS, olderPosts: OLDER_POSTS,
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version }, rows,
}, `${database}-home-hidden-posts${values.name ? `-${values.name}` : ''}`, date, values.out);
console.log(file);
