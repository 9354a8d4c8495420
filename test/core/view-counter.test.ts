/**
 * A post's views counted in memory (src/core/community/views.ts): added by one write per flush,
 * kept when it fails; not the author's, and one viewer's at most once per post an hour.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REMEMBERED_VIEWS, VIEW_WINDOW_MS, ViewCounter, type Viewer } from '../../src/core/community/views.js';
import type { Stores } from '../../src/core/stores.js';
import { flushDuringHeldWrite } from '../support/held-write.js';

const T0 = Date.UTC(2026, 10, 22);
const AUTHOR = 1;
let viewers = 0;

/** Someone not signed in, at an address no other test's viewer has. */
const newViewer = (): Viewer => ({ memberId: undefined, address: `10.0.${Math.floor(++viewers / 250)}.${(viewers % 250) + 1}` });

/** A view of post `id` (by `AUTHOR`) by a new viewer each time. */
const count = (counter: ViewCounter, id: number, viewer: Viewer = newViewer(), now = T0) => counter.count({ id, authorId: AUTHOR }, viewer, now);

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
  for (const id of [3, 7, 3, 3]) count(counter, id);
  await counter.flush(stores);
  await counter.flush(stores);
  count(counter, 7);
  await counter.flush(stores);
  assert.deepEqual(writes, [{ 3: 3, 7: 1 }, { 7: 1 }]);
});

test('views that could not be written are kept, with those counted meanwhile, for the next flush', async () => {
  const counter = new ViewCounter();
  let away = true;
  const { stores, writes } = postsStore(() => away);
  count(counter, 3);
  count(counter, 3);
  await assert.rejects(counter.flush(stores), /away/);
  count(counter, 3);
  count(counter, 9);
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
  count(counter, 1);
  const first = counter.flush(slow);
  count(counter, 1);
  finish();
  await first;
  const second = counter.flush(slow);
  finish();
  await second;
  assert.deepEqual(written, [{ 1: 1 }, { 1: 1 }]);
});

test('an author\'s views of their own post do not count', () => {
  const counter = new ViewCounter();
  counter.count({ id: 3, authorId: 42 }, { memberId: 42, address: '10.1.1.1' }, T0);
  assert.equal(counter.unwritten(3), 0);
  counter.count({ id: 3, authorId: 42 }, { memberId: 43, address: '10.1.1.1' }, T0);
  assert.equal(counter.unwritten(3), 1, 'another member\'s from the same address does');
});

test('one viewer counts at most once per post an hour: again an hour after the view that counted', () => {
  const counter = new ViewCounter();
  const viewer = newViewer();
  for (const at of [T0, T0 + 1, T0 + VIEW_WINDOW_MS - 1]) count(counter, 3, viewer, at);
  count(counter, 4, viewer, T0);
  assert.deepEqual([counter.unwritten(3), counter.unwritten(4)], [1, 1]);
  count(counter, 3, viewer, T0 + VIEW_WINDOW_MS);
  count(counter, 3, viewer, T0 + VIEW_WINDOW_MS + 1);
  assert.equal(counter.unwritten(3), 2);
});

test('a signed-in member is one viewer from any address; anyone else is their address, an IPv6 address by its /64', () => {
  const counter = new ViewCounter();
  count(counter, 3, { memberId: 7, address: '10.2.0.1' });
  count(counter, 3, { memberId: 7, address: '10.2.0.2' });
  assert.equal(counter.unwritten(3), 1);
  count(counter, 4, { memberId: undefined, address: '2001:db8:1:2::1' });
  count(counter, 4, { memberId: undefined, address: '2001:db8:1:2:ffff::9' });
  assert.equal(counter.unwritten(4), 1, 'one /64');
  count(counter, 4, { memberId: undefined, address: '2001:db8:1:3::1' });
  assert.equal(counter.unwritten(4), 2, 'another /64');
});

test('past its bound of remembered views the oldest is forgotten, and that viewer counts again within the hour', () => {
  assert.equal(REMEMBERED_VIEWS, 100_000);
  const counter = new ViewCounter(3);
  const [first, ...others] = [newViewer(), newViewer(), newViewer(), newViewer()];
  count(counter, 3, first, T0);
  for (const viewer of others) count(counter, 3, viewer, T0 + 1);
  count(counter, 3, others[0], T0 + 2);
  assert.equal(counter.unwritten(3), 4, 'the three newest are still remembered');
  count(counter, 3, first, T0 + 2);
  assert.equal(counter.unwritten(3), 5, 'the oldest was forgotten');
});

test('a flush called while the timer\'s flush is writing settles only once that write is done: every view counted before it is written when it answers', async () => {
  const counter = new ViewCounter();
  count(counter, 1);
  const race = await flushDuringHeldWrite<Record<number, number>>((stores) => counter.flush(stores), (write) => {
    const stores = {
      posts: { addViews: (views: ReadonlyMap<number, number>) => write(Object.fromEntries(views)) },
      transaction: (work: (tx: Stores) => Promise<unknown>) => work(stores),
    } as unknown as Stores;
    return stores;
  });
  assert.deepEqual({ first: race.first, second: race.second, secondAnswered: race.secondAnswered }, { first: 1, second: 0, secondAnswered: 'after 1 write(s)' });
  assert.deepEqual(race.written, [{ 1: 1 }]);
});
