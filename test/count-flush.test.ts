/** An instance's counts kept in memory, written every few seconds and on closing (src/count-flush.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { ViewCounter } from '../src/core/community/views.js';
import type { Stores } from '../src/core/stores.js';
import { COUNT_FLUSH_INTERVAL_MS, CountFlush, type PendingCounts } from '../src/count-flush.js';
import { TestClock } from './support/clock.js';

const stores = {} as Stores;

/** Counts whose `flush` records each call, fails while `failing`, and holds each call until released when `held`. */
function counts(options: { failing?: boolean; held?: boolean } = {}) {
  const releases: Array<() => void> = [];
  const counter = {
    flushes: 0,
    flush: async () => {
      counter.flushes++;
      if (options.held) await new Promise<void>((resolve) => releases.push(resolve));
      if (options.failing) throw new Error('the database is away');
      return 0;
    },
  };
  return { counter: counter as PendingCounts & { flushes: number }, release: () => releases.splice(0).forEach((r) => r()) };
}

/** A logger as the server's (pino, JSON lines), its lines read back as written. */
function capturedLog() {
  const lines: Array<{ level: number; msg: string; counts?: string; err?: { message: string; stack: string }; [field: string]: unknown }> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line)); } });
  return { log, lines };
}

const WARN = 40;
const INFO = 30;

test('a counter whose write fails holds up none of the others, and is named in the log', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const [failing, fine] = [counts({ failing: true }), counts()];
  const { log, lines } = capturedLog();
  const flush = new CountFlush({ 'post views': failing.counter, 'overview figures': fine.counter }, stores, new TestClock());
  flush.start(log);
  t.mock.timers.tick(COUNT_FLUSH_INTERVAL_MS);
  await flush.stop();
  assert.deepEqual([failing.counter.flushes, fine.counter.flushes], [2, 2], 'a turn, then the last one on closing');
  assert.deepEqual(lines.map((line) => line.counts), ['post views', 'post views']);
});

test('counts the database does not take as the server closes are told lost in the log, as no turn follows', async () => {
  const failing = counts({ failing: true });
  const { log, lines } = capturedLog();
  const flush = new CountFlush({ 'post views': failing.counter }, stores, new TestClock());
  flush.start(log);
  await flush.stop();
  assert.deepEqual(lines.map((line) => [line.level, line.msg]), [[WARN, 'counts not written as the server closed; lost']]);
});

test('a flush that keeps failing is told once with its error, quiet while it fails, and told in one info line when it writes again', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const clock = new TestClock();
  // The real view counter over stores whose write fails while the database is away.
  let away = true;
  const written: Array<Record<number, number>> = [];
  const awayThenBack = {
    transaction: (work: (tx: Stores) => Promise<unknown>) => work(awayThenBack),
    posts: {
      addViews: async (views: ReadonlyMap<number, number>) => {
        if (away) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        written.push(Object.fromEntries(views));
      },
    },
  } as unknown as Stores;
  const views = new ViewCounter();
  const { log, lines } = capturedLog();
  const flush = new CountFlush({ 'post views': views }, awayThenBack, clock);
  flush.start(log);
  const turn = async () => {
    clock.advance(COUNT_FLUSH_INTERVAL_MS);
    t.mock.timers.tick(COUNT_FLUSH_INTERVAL_MS);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  // Six readers of one post, each counted once.
  const read = (reader: number) => views.count({ id: 7, authorId: 1 }, { memberId: 100 + reader, address: '192.0.2.1' }, clock.now());
  for (let i = 0; i < 6; i++) {
    read(i);
    await turn();
  }
  assert.equal(lines.length, 1, 'six failed turns, one line');
  const [first] = lines;
  assert.deepEqual([first?.level, first?.counts, first?.msg], [WARN, 'post views', 'counts not written; kept for the next turn, and not told again until written']);
  assert.equal(first?.err?.message, 'connect ECONNREFUSED 127.0.0.1:5432');
  assert.match(first?.err?.stack ?? '', /ECONNREFUSED[\s\S]*\n\s+at /, 'the first failure carries its stack');

  away = false;
  await turn();
  assert.deepEqual(written, [{ 7: 6 }], 'the views kept are written');
  assert.equal(lines.length, 2);
  const { time: _time, pid: _pid, hostname: _hostname, ...back } = lines[1]!;
  assert.deepEqual(back, {
    level: INFO, counts: 'post views', failedTurns: 6, failedForMs: 6 * COUNT_FLUSH_INTERVAL_MS, written: 6,
    msg: 'counts written again, kept while they could not be',
  });

  read(6);
  await turn();
  await flush.stop();
  assert.equal(lines.length, 2, 'a flush that writes, as every one should, is not told');
});

test('a turn still under way leaves the next one out, and closing waits for it before its last write', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const slow = counts({ held: true });
  const flush = new CountFlush({ views: slow.counter }, stores, new TestClock());
  flush.start(capturedLog().log);
  t.mock.timers.tick(COUNT_FLUSH_INTERVAL_MS);
  t.mock.timers.tick(COUNT_FLUSH_INTERVAL_MS);
  assert.equal(slow.counter.flushes, 1, 'no second turn beside the first');
  let stopped = false;
  const stopping = flush.stop().then(() => { stopped = true; });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(stopped, false, 'closing waits for the turn under way');
  slow.release();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(slow.counter.flushes, 2, 'then writes once more');
  slow.release();
  await stopping;
});
