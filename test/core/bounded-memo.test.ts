/** The bounded memo behind the date formatters and the look-alike folds (src/core/bounded-memo.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BoundedMemo } from '../../src/core/bounded-memo.js';

test('an answer is made once per key and then kept', () => {
  const memo = new BoundedMemo<string, number>(4);
  let made = 0;
  const make = (key: string) => { made += 1; return key.length; };
  assert.equal(memo.get('abc', make), 3);
  assert.equal(memo.get('abc', make), 3);
  assert.equal(made, 1);
});

test('past its bound the memo lets the oldest answer go first and keeps the newer ones', () => {
  const memo = new BoundedMemo<number, string>(2);
  const made: number[] = [];
  const make = (key: number) => { made.push(key); return String(key); };
  memo.get(1, make);
  memo.get(2, make);
  memo.get(3, make);
  assert.equal(memo.size, 2);
  memo.get(2, make);
  memo.get(3, make);
  memo.get(1, make);
  assert.deepEqual(made, [1, 2, 3, 1]);
});

test('a make that throws keeps nothing, so the next call tries again', () => {
  const memo = new BoundedMemo<string, string>(2);
  assert.throws(() => memo.get('x', () => { throw new RangeError('no such zone'); }), RangeError);
  assert.equal(memo.size, 0);
  assert.equal(memo.get('x', () => 'made'), 'made');
});
