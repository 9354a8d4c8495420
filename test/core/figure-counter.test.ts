/** The overview's counts (src/core/staff/figures.ts): each event lands on its day in the site's zone, the day kept between events. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FigureCounter } from '../../src/core/staff/figures.js';
import type { DailyCount } from '../../src/core/staff/ports.js';
import type { Stores } from '../../src/core/stores.js';
import { flushDuringHeldWrite } from '../support/held-write.js';

async function flushed(counter: FigureCounter): Promise<Record<string, number>> {
  const added: DailyCount[] = [];
  const stores = {
    dailyFigures: { add: async (counts: DailyCount[]) => { added.push(...counts); } },
    transaction: (work: (tx: Stores) => Promise<unknown>) => work(stores),
  } as unknown as Stores;
  const written = await counter.flush(stores);
  assert.equal(written, added.reduce((sum, c) => sum + c.count, 0), 'the flush says how many it wrote');
  return Object.fromEntries(added.map((c) => [`${c.day} ${c.figure}`, c.count]));
}

test('events on either side of midnight in UTC+8 count on their own days, whatever the order', async () => {
  const counter = new FigureCounter('Asia/Shanghai');
  const midnight = Date.parse('2026-11-24T16:00:00Z'); // 2026-11-25 00:00 in UTC+8
  for (const at of [midnight - 60_000, midnight - 1, midnight, midnight + 1, midnight - 1, midnight + 86_400_000 - 1, midnight + 86_400_000, midnight - 86_400_000 - 1]) {
    counter.count('tokens_issued', at);
  }
  assert.deepEqual(await flushed(counter), {
    '2026-11-24 tokens_issued': 3,
    '2026-11-25 tokens_issued': 3,
    '2026-11-26 tokens_issued': 1,
    '2026-11-23 tokens_issued': 1,
  });
});

test('a day a clock change shortens ends where the zone says', async () => {
  // New York: 2026-11-01 is 25 hours long (UTC−4 until 06:00Z, then UTC−5), so it ends at 05:00Z the next day.
  const counter = new FigureCounter('America/New_York');
  counter.count('sign_ins', Date.parse('2026-11-01T12:00:00Z'));
  counter.count('sign_ins', Date.parse('2026-11-02T04:59:59.999Z'));
  counter.count('sign_ins', Date.parse('2026-11-02T05:00:00Z'));
  assert.deepEqual(await flushed(counter), { '2026-11-01 sign_ins': 2, '2026-11-02 sign_ins': 1 });
});

test('a flush called while the timer\'s flush is writing settles only once that write is done: every count made before it is written when it answers', async () => {
  const counter = new FigureCounter('UTC');
  counter.count('refusals', Date.parse('2026-11-24T12:00:00Z'));
  const race = await flushDuringHeldWrite<DailyCount[]>((stores) => counter.flush(stores), (add) => {
    const stores = { dailyFigures: { add }, transaction: (work: (tx: Stores) => Promise<unknown>) => work(stores) } as unknown as Stores;
    return stores;
  });
  assert.deepEqual({ first: race.first, second: race.second, secondAnswered: race.secondAnswered }, { first: 1, second: 0, secondAnswered: 'after 1 write(s)' });
  assert.deepEqual(race.written.map((counts) => counts.map((c) => `${c.day} ${c.figure} ${c.count}`)), [['2026-11-24 refusals 1']]);
});

test('a flush waiting for the timer\'s write that failed writes the counts it handed back, with its own', async () => {
  const counter = new FigureCounter('UTC');
  const written: string[][] = [];
  let failing = true;
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  const stores = {
    dailyFigures: {
      add: async (counts: DailyCount[]) => {
        if (failing) { await held; failing = false; throw new Error('the database is away'); }
        written.push(counts.map((c) => `${c.day} ${c.figure} ${c.count}`));
      },
    },
    transaction: (work: (tx: Stores) => Promise<unknown>) => work(stores),
  } as unknown as Stores;
  const at = Date.parse('2026-11-24T12:00:00Z');
  counter.count('refusals', at);
  const timers = counter.flush(stores);
  counter.count('refusals', at);
  const mine = counter.flush(stores);
  release();
  await assert.rejects(timers, /away/);
  assert.equal(await mine, 2);
  assert.deepEqual(written, [['2026-11-24 refusals 2']]);
});
