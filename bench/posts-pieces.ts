/**
 * `npm run bench -- --posts-pieces [--iterations 2000] [--out FILE]` (issue 35): what each piece
 * of a page of `/me/posts` costs, in one process on the bench's posts (the 1,000-post and the
 * 10,000-post author of `bench/seed.ts`, in an embedded SQLite file), to say where a page's CPU
 * beyond `/me` goes. No HTTP: the HTTP bench's scenarios a and b1–b4 measure the whole request, and a
 * CPU profile of them (`BENCH_CPU_PROF`) the share of the server's own machinery.
 *
 * The pieces, per page of 20, each alone in a loop:
 * - the page's SQL statement, and the author's count and names (`users.published_posts`), run by
 *   better-sqlite3 on a connection of their own: the database's work and the row objects (and the
 *   page's statement with rows as arrays, to tell the two apart);
 * - the store's `listPublishedByAuthor`: both statements through Kysely's compiled queries and the
 *   rows made into `PostSummary`s;
 * - the twenty API items (`postItemOf`), and inside them the post URLs and the UTC+8 timestamps alone;
 * - the answer serialised by fast-json-stringify from `PostPageSchema`, as Fastify does it (and by
 *   `JSON.stringify`, to compare);
 * - `/me`'s own work for reference (issue 35 item 2): `profileOf` and its serialisation, and each
 *   piece of the bearer gate over the bench's 1,000 rotating tokens: the whole authentication
 *   (`authenticateBearer`), and in it the token's shape and checksum, its hash and the remembered
 *   lookup; the per-token limit with its answer headers (the in-memory limiter); the metrics of
 *   the `onResponse` hook (`observeHttp`); the Host rule every request passes (RFC 9112 3.2), on the
 *   header lines wrk sends for scenario a.
 *
 * Each figure is CPU time (`process.cpuUsage`, user + system) over a batch of `iterations` calls,
 * the median of nine batches, in µs per call. Run it pinned to one core (`taskset -c 0`) on a quiet
 * machine if there is one; compare its figures with each other, not with another day's.
 */
import SQLite from 'better-sqlite3';
import fastJsonStringify from 'fast-json-stringify';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem, type as osType, release as osRelease } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../src/config/settings.js';
import { authenticateBearer } from '../src/core/api/bearer.js';
import { ApiLimits, rateLimitHeaders } from '../src/core/api/limits.js';
import { postItemOf, profileOf, readPosts } from '../src/core/api/views.js';
import { hashSecret, tokenKind } from '../src/core/credentials/formats.js';
import { formatLocalTimestamp } from '../src/core/time.js';
import { siteUrls } from '../src/core/urls.js';
import { createDeps, prepareDatabase } from '../src/deps.js';
import { breaksHostRule } from '../src/http/plugins/errors.js';
import { PostPageSchema, ProfileSchema } from '../src/http/routes/api-v1/schemas.js';
import { pageQuery, publishedCountByAuthor } from '../src/storage/repositories/community/posts.js';
import { POSTS_PIECES_OPTIONS, parseBenchArguments, wholeNumber } from './arguments.js';
import { FULL_SEED, seedBench } from './seed.js';
import { writeResults } from './results-file.js';
import { median } from './statistics.js';

const SIZE = 20;
const BATCHES = 9;

/** The bench's posts and users; tokens, chains, sessions and two-step accounts only as few as seeding takes. */
const POSTS_SEED = { ...FULL_SEED, accessTokens: 1_000, rotatingTokens: 1_000, refreshChains: 1, sessions: 1, totpUsers: 1 };

/** µs of CPU per call of `run`: the median over `BATCHES` batches of `iterations` calls. */
async function cpuPerCall(iterations: number, run: () => unknown): Promise<number> {
  for (let i = 0; i < iterations; i++) await run();
  const batches: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const started = process.cpuUsage();
    for (let i = 0; i < iterations; i++) await run();
    const used = process.cpuUsage(started);
    batches.push((used.user + used.system) / iterations);
  }
  return Math.round(median(batches) * 10) / 10;
}

export async function runPostsPiecesBench(): Promise<void> {
  const values = parseBenchArguments(POSTS_PIECES_OPTIONS);
  const iterations = wholeNumber(values.iterations, '--iterations', 1);
  const work = mkdtempSync(join(tmpdir(), 'posts-pieces-'));
  const file = join(work, 'posts.sqlite');
  const baseUrl = 'http://127.0.0.1:8080';
  const deps = createDeps(loadSettings({ DATABASE_URL: `sqlite:${file}`, REDIS_URL: '', DEMO: '0', LOG_LEVEL: 'warn', JANITOR_INTERVAL: '0', BASE_URL: baseUrl }));
  const rows: Array<Record<string, number | string>> = [];
  try {
    await prepareDatabase(deps);
    const { rotatingTokens } = await seedBench(deps, POSTS_SEED, 1, 'bench-posts-pieces');
    const { db } = deps.database;
    const [heavy, prolific] = await db.selectFrom('users').select('id').orderBy('id').limit(2).execute();
    const urls = siteUrls(baseUrl);
    const sqlite = new SQLite(file, { readonly: true });
    const statement = (query: { sql: string }) => sqlite.prepare(query.sql);
    const count = statement(publishedCountByAuthor(db).compile());
    const serialisePage = fastJsonStringify(PostPageSchema);
    const serialiseProfile = fastJsonStringify(ProfileSchema);

    const cases = [
      { id: 'b1', title: 'first page, 1,000 posts', author: heavy!.id, total: POSTS_SEED.heavyUserPosts, page: 0 },
      { id: 'b2', title: 'page 49 of 50', author: heavy!.id, total: POSTS_SEED.heavyUserPosts, page: 49 },
      { id: 'b3', title: 'first page, 10,000 posts', author: prolific!.id, total: POSTS_SEED.prolificUserPosts, page: 0 },
      { id: 'b4', title: 'page 499 of 500', author: prolific!.id, total: POSTS_SEED.prolificUserPosts, page: 499 },
    ];
    for (const c of cases) {
      const offset = c.page * SIZE;
      // The store's choice (posts.ts): the first page needs no total, a later one skips from the nearer end.
      const page = pageQuery(c.author, offset, SIZE, offset === 0 ? undefined : c.total);
      const pageStatement = statement(page.build(db).compile());
      const pageParameters = page.parameters;
      const answer = await readPosts(deps.stores, c.author, { page: c.page, size: SIZE }, urls);
      if (answer.items.length !== SIZE || pageStatement.all(...pageParameters).length !== SIZE) throw new Error(`${c.id}: expected a full page`);
      const summaries = (await deps.stores.posts.listPublishedByAuthor(c.author, offset, SIZE)).items;
      const row: Record<string, number | string> = { id: c.id, title: c.title };
      row.pageStatementUs = await cpuPerCall(iterations, () => pageStatement.all(...pageParameters));
      // The same statement with rows as arrays: what the driver's row objects cost.
      pageStatement.raw(true);
      row.pageStatementArraysUs = await cpuPerCall(iterations, () => pageStatement.all(...pageParameters));
      pageStatement.raw(false);
      row.countStatementUs = await cpuPerCall(iterations, () => count.get(c.author));
      row.storeUs = await cpuPerCall(iterations, () => deps.stores.posts.listPublishedByAuthor(c.author, offset, SIZE));
      row.itemsUs = await cpuPerCall(iterations, () => summaries.map((post) => postItemOf(post, urls)));
      row.urlsUs = await cpuPerCall(iterations, () => summaries.map((post) => urls.post(post.id)));
      row.timestampsUs = await cpuPerCall(iterations, () => summaries.map((post) => formatLocalTimestamp(post.createdAt)));
      row.serialiseUs = await cpuPerCall(iterations, () => serialisePage(answer));
      row.jsonStringifyUs = await cpuPerCall(iterations, () => JSON.stringify(answer));
      row.readPostsUs = await cpuPerCall(iterations, () => readPosts(deps.stores, c.author, { page: c.page, size: SIZE }, urls));
      row.answerBytes = Buffer.byteLength(serialisePage(answer));
      rows.push(row);
      process.stderr.write(`${JSON.stringify(row)}\n`);
    }
    const user = (await deps.stores.users.findById(heavy!.id))!;
    const profile = profileOf(user, urls);
    // The tokens in turn, as scenario a sends them: each lookup is of another row.
    let turn = 0;
    const nextToken = () => rotatingTokens[turn++ % rotatingTokens.length]!;
    const bearer = await authenticateBearer(deps, `Bearer ${nextToken()}`);
    if (bearer instanceof Error) throw bearer;
    // The gate's limits with a limit that never refuses, as the HTTP bench sets it.
    const limits = new ApiLimits(deps.limiter, 100_000_000);
    // wrk's request for scenario a: its Host line and the script's Authorization line.
    const token = nextToken();
    const wrkRequest = { httpVersionMinor: 1, headers: { host: '127.0.0.1:8080', authorization: `Bearer ${token}` }, rawHeaders: ['Host', '127.0.0.1:8080', 'Authorization', `Bearer ${token}`] };
    const me = {
      profileUs: await cpuPerCall(iterations, () => profileOf(user, urls)),
      serialiseUs: await cpuPerCall(iterations, () => serialiseProfile(profile)),
      answerBytes: Buffer.byteLength(serialiseProfile(profile)),
      authenticateBearerUs: await cpuPerCall(iterations, () => authenticateBearer(deps, `Bearer ${nextToken()}`)),
      tokenShapeUs: await cpuPerCall(iterations, () => tokenKind(nextToken())),
      tokenHashUs: await cpuPerCall(iterations, () => hashSecret(nextToken())),
      lookupUs: await cpuPerCall(iterations, () => deps.stores.tokens.findAccessBearer(hashSecret(nextToken()))),
      tokenLimitUs: await cpuPerCall(iterations, async () => rateLimitHeaders(await limits.hitToken(bearer, deps.clock.now()), deps.clock.now())),
      metricsUs: await cpuPerCall(iterations, () => deps.metrics.observeHttp('GET', '/api/open/v1/me', 200, 0.0004)),
      hostRuleUs: await cpuPerCall(iterations, () => breaksHostRule(wrkRequest)),
    };
    process.stderr.write(`/me: ${JSON.stringify(me)}\n`);
    sqlite.close();

    const cpu = cpus();
    const report = {
      date: new Date().toISOString(),
      machine: { cpu: cpu[0]?.model ?? 'unknown', cores: cpu.length, memoryGb: Math.round(totalmem() / 1e8) / 10, os: `${osType()} ${osRelease()}`, node: process.version },
      setup: { iterations, batches: BATCHES, pageSize: SIZE, seed: POSTS_SEED },
      pages: rows,
      me,
      notes: [
        'µs of CPU (process.cpuUsage) per call, median of the batches; each piece alone in a loop, so its data stays in the caches',
        'pageStatementArraysUs: the page statement with rows as arrays (better-sqlite3 raw mode) instead of objects',
        'pageStatementUs and countStatementUs: better-sqlite3 on a connection of their own, the SQL the store compiles; storeUs: listPublishedByAuthor (both statements through Kysely\'s compiled queries, rows made into PostSummary)',
        'itemsUs: the twenty postItemOf calls (the URLs and timestamps included: urlsUs and timestampsUs are those alone); readPostsUs: the whole core function (store, items, envelope)',
        'serialiseUs: fast-json-stringify from PostPageSchema, as Fastify serialises the answer; jsonStringifyUs: JSON.stringify of the same object',
        'me: profileUs and serialiseUs the route\'s work; authenticateBearerUs the whole bearer authentication (tokenShapeUs, tokenHashUs and lookupUs, which includes the hash, are pieces of it); tokenLimitUs the per-token count and its five header fields; metricsUs one observeHttp (its counts, which prom-client reads when it is read: docs/performance.md, decision 64); hostRuleUs the Host rule of the onRequest hook (RFC 9112 3.2) on wrk\'s two header lines',
      ],
    };
    const out = writeResults(report, 'sqlite-posts-pieces', report.date, typeof values.out === 'string' ? values.out : undefined);
    process.stderr.write(`results written to ${out}\n`);
  } finally {
    await deps.close();
    rmSync(work, { recursive: true, force: true });
  }
}
