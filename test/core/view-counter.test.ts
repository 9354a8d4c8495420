/** A post's views counted in memory (src/core/community/views.ts): added by one write per flush, kept when it fails. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ViewCounter } from '../../src/core/community/views.js';
import type { Stores } from '../../src/core/stores.js';

/** Stores whose `posts.addViews` records each write's counts, or fails while `away` says so. */
function postsStore(away: () => boolean = () => false) {
  const writes: Array<Record<number, number>> = [];
  const stores = {
    posts: {
      addViews: async (views: ReadonlyMap<number, number>) => {
        if (away()) throw new Error('the database is away');
        writes.push(Object.fromEntries(views));
      },
    },
    transaction: (work: (tx: Stores) => Promise<unknown>) => work(stores),
  } as unknown as Stores;
  return { stores, writes };
}

test('the views of each post since the last flush are added by one write, and a flush with none writes nothing', async () => {
  const counter = new ViewCounter();
  const { stores, writes } = postsStore();
  for (const id of [3, 7, 3, 3]) counter.count(id);
  await counter.flush(stores);
  await counter.flush(stores);
  counter.count(7);
  await counter.flush(stores);
  assert.deepEqual(writes, [{ 3: 3, 7: 1 }, { 7: 1 }]);
});

test('views that could not be written are kept, with those counted meanwhile, for the next flush', async () => {
  const counter = new ViewCounter();
  let away = true;
  const { stores, writes } = postsStore(() => away);
  counter.count(3);
  counter.count(3);
  await assert.rejects(counter.flush(stores), /away/);
  counter.count(3);
  counter.count(9);
  await assert.rejects(counter.flush(stores), /away/);
  away = false;
  await counter.flush(stores);
  await counter.flush(stores);
  assert.deepEqual(writes, [{ 3: 3, 9: 1 }]);
});

test('views counted while a write is under way go to the next flush, not lost with the one under way', async () => {
  const counter = new ViewCounter();
  const written: Array<Record<number, number>> = [];
  let finish!: () => void;
  const slow = {
    posts: { addViews: (views: ReadonlyMap<number, number>) => new Promise<void>((resolve) => { written.push(Object.fromEntries(views)); finish = resolve; }) },
    transaction: (work: (tx: Stores) => Promise<unknown>) => work(slow),
  } as unknown as Stores;
  counter.count(1);
  const first = counter.flush(slow);
  counter.count(1);
  finish();
  await first;
  const second = counter.flush(slow);
  finish();
  await second;
  assert.deepEqual(written, [{ 1: 1 }, { 1: 1 }]);
});
