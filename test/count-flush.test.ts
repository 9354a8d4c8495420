/** An instance's counts kept in memory, written every few seconds and on closing (src/count-flush.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Stores } from '../src/core/stores.js';
import { COUNT_FLUSH_INTERVAL_MS, CountFlush, type PendingCounts } from '../src/count-flush.js';

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
    },
  };
  return { counter: counter as PendingCounts & { flushes: number }, release: () => releases.splice(0).forEach((r) => r()) };
}

test('a counter whose write fails holds up none of the others, and is named in the log', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const [failing, fine] = [counts({ failing: true }), counts()];
  const warnings: Array<{ counts?: string }> = [];
  const flush = new CountFlush({ 'post views': failing.counter, 'overview figures': fine.counter }, stores);
  flush.start({ warn: (object) => { warnings.push(object as { counts?: string }); } });
  t.mock.timers.tick(COUNT_FLUSH_INTERVAL_MS);
  await flush.stop();
  assert.deepEqual([failing.counter.flushes, fine.counter.flushes], [2, 2], 'a turn, then the last one on closing');
  assert.deepEqual(warnings.map((w) => w.counts), ['post views', 'post views']);
});

test('counts the database does not take as the server closes are told lost in the log, as no turn follows', async () => {
  const failing = counts({ failing: true });
  const warnings: string[] = [];
  const flush = new CountFlush({ 'post views': failing.counter }, stores);
  flush.start({ warn: (_object, message) => { warnings.push(message); } });
  await flush.stop();
  assert.deepEqual(warnings, ['counts not written as the server closed; lost']);
});

test('a turn still under way leaves the next one out, and closing waits for it before its last write', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const slow = counts({ held: true });
  const flush = new CountFlush({ views: slow.counter }, stores);
  flush.start({ warn: () => {} });
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
