/** The queue in front of argon2 and the avatar decoder (src/core/bounded-queue.ts): its order, its limits, its refusal. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BoundedQueue, QueueFullError } from '../../src/core/bounded-queue.js';

/** A piece of work that runs until the test releases it, and says when it started. */
function held(started: string[], name: string): { work: () => Promise<string>; release: () => void } {
  let release!: () => void;
  const done = new Promise<void>((resolve) => { release = resolve; });
  return { work: async () => { started.push(name); await done; return name; }, release };
}

/** Lets every settled promise's continuations run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test('no more than atOnce pieces run; the rest wait and start in arrival order as turns free', async () => {
  const queue = new BoundedQueue(2, 10);
  const started: string[] = [];
  const pieces = ['a', 'b', 'c', 'd', 'e'].map((name) => held(started, name));
  const results = pieces.map((piece) => queue.run(piece.work));
  await settle();
  assert.deepEqual(started, ['a', 'b']);
  assert.deepEqual(queue.state, { running: 2, waiting: 3 });
  pieces[1]!.release();
  await settle();
  assert.deepEqual(started, ['a', 'b', 'c'], 'the first in line takes the freed turn');
  assert.deepEqual(queue.state, { running: 2, waiting: 2 });
  pieces[0]!.release();
  pieces[2]!.release();
  await settle();
  assert.deepEqual(started, ['a', 'b', 'c', 'd', 'e']);
  pieces[3]!.release();
  pieces[4]!.release();
  assert.deepEqual(await Promise.all(results), ['a', 'b', 'c', 'd', 'e'], 'each caller gets its own piece\'s result');
  assert.deepEqual(queue.state, { running: 0, waiting: 0 });
});

test('past maxWaiting a piece is refused at once and never runs; a freed place takes the next one', async () => {
  const queue = new BoundedQueue(1, 2);
  const started: string[] = [];
  const pieces = ['a', 'b', 'c'].map((name) => held(started, name));
  const results = pieces.map((piece) => queue.run(piece.work));
  let refusedRan = false;
  await assert.rejects(queue.run(async () => { refusedRan = true; return 'refused'; }), QueueFullError);
  await settle();
  assert.equal(refusedRan, false, 'the refused piece never runs');
  assert.deepEqual(queue.state, { running: 1, waiting: 2 }, 'the refusal took no place');
  pieces[0]!.release();
  await settle();
  const late = held(started, 'd');
  const lateResult = queue.run(late.work);
  assert.deepEqual(queue.state, { running: 1, waiting: 2 }, 'the place b left is d\'s');
  for (const piece of [...pieces.slice(1), late]) piece.release();
  assert.deepEqual([...(await Promise.all(results)), await lateResult], ['a', 'b', 'c', 'd']);
  assert.deepEqual(started, ['a', 'b', 'c', 'd']);
});

test('one asker holds at most its share of the waiting places; others still get theirs, and a place it leaves is its again', async () => {
  const queue = new BoundedQueue(1, 4, 2);
  const started: string[] = [];
  const pieces = ['a', 'b', 'c'].map((name) => held(started, name));
  const results = [queue.run(pieces[0]!.work, { asker: 'flood' }), queue.run(pieces[1]!.work, { asker: 'flood' }), queue.run(pieces[2]!.work, { asker: 'flood' })];
  let refusedRan = false;
  await assert.rejects(queue.run(async () => { refusedRan = true; return 'refused'; }, { asker: 'flood' }), QueueFullError);
  assert.equal(refusedRan, false, 'the refused piece never runs');
  assert.deepEqual(queue.state, { running: 1, waiting: 2 }, 'the running piece is not counted in the share');
  const other = queue.run(async () => 'other', { asker: 'member' });
  const unnamed = queue.run(async () => 'unnamed');
  assert.deepEqual(queue.state, { running: 1, waiting: 4 });
  pieces[0]!.release();
  await settle();
  assert.deepEqual(started, ['a', 'b'], 'b leaves the line to run');
  const again = held(started, 'd');
  const againResult = queue.run(again.work, { asker: 'flood' });
  assert.deepEqual(queue.state, { running: 1, waiting: 4 }, 'the place b left is the asker\'s again');
  for (const piece of [...pieces.slice(1), again]) piece.release();
  assert.deepEqual([...(await Promise.all([...results, other, unnamed])), await againResult], ['a', 'b', 'c', 'other', 'unnamed', 'd']);
  assert.deepEqual(queue.state, { running: 0, waiting: 0 });
});

test('in a full line an asker holding fewer places pushes out the newest place of the one holding the most, which never runs; a line of one place each keeps a newcomer out', async () => {
  const queue = new BoundedQueue(1, 4, 2);
  const started: string[] = [];
  const running = held(started, 'a');
  const pieces = ['x1', 'x2', 'y1', 'y2'].map((name) => held(started, name));
  const results = [queue.run(running.work), ...pieces.map((piece) => queue.run(piece.work, { asker: piece === pieces[0] || piece === pieces[1] ? 'x' : 'y' }))];
  assert.deepEqual(queue.state, { running: 1, waiting: 4 }, 'the line is full');
  const member = queue.run(async () => 'member', { asker: 'member' });
  await assert.rejects(results[4]!, QueueFullError, 'the newest place of those holding the most went to the member: y\'s');
  const other = queue.run(async () => 'other', { asker: 'other' });
  await assert.rejects(results[2]!, QueueFullError, 'then x\'s, which now holds the most');
  assert.deepEqual(queue.state, { running: 1, waiting: 4 });
  await assert.rejects(queue.run(async () => 'late', { asker: 'late' }), QueueFullError, 'every place is held by a different asker');
  await assert.rejects(queue.run(async () => 'x3', { asker: 'x' }), QueueFullError, 'an asker pushes out no one holding as many as it does plus one');
  await assert.rejects(queue.run(async () => 'unnamed'), QueueFullError, 'a piece naming no asker pushes out no one');
  for (const piece of [running, ...pieces]) piece.release();
  assert.deepEqual(await Promise.all([results[0], results[1], results[3], member, other]), ['a', 'x1', 'y1', 'member', 'other']);
  assert.deepEqual(started, ['a', 'x1', 'y1'], 'the pushed-out pieces never ran');
  assert.deepEqual(queue.state, { running: 0, waiting: 0 });
  assert.equal(await queue.run(async () => 'x again', { asker: 'x' }), 'x again', 'no place is left counted for x');
});

test('within an asker\'s full share, a piece for someone it holds at least two fewer places for pushes out the newest place of the one it holds the most for', async () => {
  const queue = new BoundedQueue(1, 8, 3);
  const started: string[] = [];
  const running = held(started, 'running');
  const pieces = ['a1', 'a2', 'a3'].map((name) => held(started, name));
  const results = [queue.run(running.work), ...pieces.map((piece) => queue.run(piece.work, { asker: 'nat', onBehalfOf: 'flooder' }))];
  await assert.rejects(queue.run(async () => 'a4', { asker: 'nat', onBehalfOf: 'flooder' }), QueueFullError, 'the share is full and the flooder holds it all');
  await assert.rejects(queue.run(async () => 'nameless', { asker: 'nat' }), QueueFullError, 'a piece naming no one pushes out no one');
  const member = queue.run(async () => 'member', { asker: 'nat', onBehalfOf: 'member' });
  await assert.rejects(results[3]!, QueueFullError, 'the flooder\'s newest place went to the member');
  assert.deepEqual(queue.state, { running: 1, waiting: 3 }, 'the share is as long as it was');
  const second = queue.run(async () => 'second', { asker: 'nat', onBehalfOf: 'second' });
  await assert.rejects(results[2]!, QueueFullError, 'then the flooder\'s next newest, to another newcomer');
  await assert.rejects(queue.run(async () => 'third', { asker: 'nat', onBehalfOf: 'third' }), QueueFullError, 'a share of one place each keeps a newcomer out');
  await assert.rejects(queue.run(async () => 'member again', { asker: 'nat', onBehalfOf: 'member' }), QueueFullError, 'no one pushes out one holding as many as it does plus one');
  const elsewhere = queue.run(async () => 'elsewhere', { asker: 'other', onBehalfOf: 'flooder' });
  for (const piece of [running, ...pieces]) piece.release();
  assert.deepEqual(await Promise.all([results[0], results[1], member, second, elsewhere]), ['running', 'a1', 'member', 'second', 'elsewhere']);
  assert.deepEqual(started, ['running', 'a1'], 'the pushed-out pieces never ran');
  assert.deepEqual(queue.state, { running: 0, waiting: 0 });
  assert.equal(await queue.run(async () => 'flooder again', { asker: 'nat', onBehalfOf: 'flooder' }), 'flooder again', 'no place is left counted for anyone');
});

test('a piece several askers wait for is a place of each, and is pushed out only when every one of them holds at least two places more than the newcomer', async () => {
  const queue = new BoundedQueue(1, 4);
  const started: string[] = [];
  const running = held(started, 'running');
  // A decoy puts the app's piece in line alone, behind x's; the app joins it; then the decoy
  // joins x's places, to be the asker holding the most with the app's piece its newest (attack66).
  const pieces = ['x1', 'x2', 'x3', 'app'].map((name) => held(started, name));
  const results = [queue.run(running.work), ...pieces.map((piece, i) => queue.run(piece.work, { asker: i === 3 ? 'decoy' : 'x', piece: ['x1', 'x2', 'x3', 'app'][i] }))];
  queue.shareWith('app', 'app');
  for (const piece of ['x1', 'x2', 'x3', 'unknown']) queue.shareWith(piece, 'decoy');
  const first = queue.run(async () => 'first', { asker: 'first' });
  await assert.rejects(results[3]!, QueueFullError, 'x\'s newest went: every asker of it holds two more than the newcomer');
  const second = queue.run(async () => 'second', { asker: 'second' });
  await assert.rejects(results[2]!, QueueFullError, 'then x\'s next newest');
  await assert.rejects(queue.run(async () => 'third', { asker: 'third' }), QueueFullError, 'the app holds one place: its piece is not pushed out, nor x1, which x holds alone now');
  for (const piece of [running, ...pieces]) piece.release();
  assert.deepEqual(await Promise.all([results[0], results[1], results[4], first, second]), ['running', 'x1', 'app', 'first', 'second']);
  assert.deepEqual(queue.state, { running: 0, waiting: 0 });
  // No place is left counted: with the turn taken, each of them may wait for the whole line.
  const again = held(started, 'again');
  const holding = queue.run(again.work);
  for (const asker of ['x', 'decoy', 'app']) {
    const line = Array.from({ length: 4 }, () => queue.run(async () => asker, { asker: asker }));
    assert.deepEqual(queue.state, { running: 1, waiting: 4 }, asker);
    await assert.rejects(queue.run(async () => 'past', { asker: asker }), QueueFullError);
    queue.refuseWaiting('next asker');
    await Promise.allSettled(line);
  }
  again.release();
  await holding;
});

test('of the places a newcomer may push out, one that fewer askers wait for goes first, then the newest', async () => {
  const queue = new BoundedQueue(1, 5);
  const started: string[] = [];
  const running = held(started, 'running');
  // The app's share waits for one piece of its own; it joins its document's, which a1 put in line.
  const names = ['own', 'a1', 'a2', 'document'];
  const pieces = names.map((name) => held(started, name));
  const results = [queue.run(running.work), ...pieces.map((piece, i) => queue.run(piece.work, { asker: i === 0 ? 'app' : 'a', piece: names[i] }))];
  queue.shareWith('document', 'app');
  const newcomer = queue.run(async () => 'newcomer', { asker: 'newcomer' });
  assert.deepEqual(queue.state, { running: 1, waiting: 5 });
  const second = queue.run(async () => 'second', { asker: 'second' });
  await assert.rejects(results[3]!, QueueFullError, 'a\'s own newest goes, not the document a and the app both wait for');
  const third = queue.run(async () => 'third', { asker: 'third' });
  await assert.rejects(results[2]!, QueueFullError, 'then a\'s next: all hold two, and the document has two askers');
  for (const piece of [running, ...pieces]) piece.release();
  assert.deepEqual(await Promise.all([results[0], results[1], results[4], newcomer, second, third]), ['running', 'own', 'document', 'newcomer', 'second', 'third']);
});

test('a piece that fails passes its turn on and its caller gets its error', async () => {
  const queue = new BoundedQueue(1, 1);
  const failing = queue.run(async () => { throw new Error('argon2 failed'); });
  const next = queue.run(async () => 'next');
  await assert.rejects(failing, /argon2 failed/);
  assert.equal(await next, 'next');
  assert.deepEqual(queue.state, { running: 0, waiting: 0 });
});

test('with no waiting room, only the running pieces are taken', async () => {
  const queue = new BoundedQueue(1, 0);
  const piece = held([], 'a');
  const running = queue.run(piece.work);
  await assert.rejects(queue.run(async () => 'b'), QueueFullError);
  piece.release();
  assert.equal(await running, 'a');
  assert.equal(await queue.run(async () => 'c'), 'c');
});

test('bounds that are not positive whole numbers are refused', () => {
  assert.throws(() => new BoundedQueue(0, 1), RangeError);
  assert.throws(() => new BoundedQueue(1.5, 1), RangeError);
  assert.throws(() => new BoundedQueue(1, -1), RangeError);
  assert.throws(() => new BoundedQueue(1, 1, -1), RangeError);
});
