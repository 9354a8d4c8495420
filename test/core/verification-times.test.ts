/** Holding wrong passwords' answers to the slowest stored parameter set's time (pure logic). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_HOLD_FACTOR, VerificationTimes, parametersOf } from '../../src/core/accounts/verification-times.js';

const TODAY = '$argon2id$v=19$m=12288,t=3,p=1';
const EARLIER = '$argon2id$v=19$m=19456,t=2,p=1';

test('a set is named by its algorithm, version and parameters, never its salt or digest', () => {
  assert.equal(parametersOf(`${TODAY}$c2FsdHNhbHQ$ZGlnZXN0`), TODAY);
  assert.equal(parametersOf('not a hash'), 'not a hash');
});

test('a wrong answer against a faster set is held by what the slowest set takes beyond it, at the same pace', () => {
  const times = new VerificationTimes();
  times.record(TODAY, 8);
  times.record(EARLIER, 14);
  assert.equal(times.holdAfterWrong(TODAY, 8), 6);
  assert.equal(times.holdAfterWrong(TODAY, 16), 12, 'a busy machine that doubles the verification doubles the hold');
});

test('a wrong answer against the slowest set, or with no slower set known, is not held', () => {
  const times = new VerificationTimes();
  times.record(TODAY, 7);
  assert.equal(times.holdAfterWrong(TODAY, 7), 0);
  times.record(EARLIER, 12.6);
  assert.equal(times.holdAfterWrong(EARLIER, 12.6), 0);
  assert.equal(times.holdAfterWrong('$argon2id$v=19$m=65536,t=1,p=1', 3), 0, 'a set never timed');
});

test('a hold is at most six times the verification\'s own time in all', () => {
  const times = new VerificationTimes();
  times.record(TODAY, 7);
  times.record('$argon2id$v=19$m=262144,t=8,p=1', 7_000);
  assert.equal(times.holdAfterWrong(TODAY, 7), 7 * (MAX_HOLD_FACTOR - 1));
});

test('a set\'s time is the median of its latest nine, so one slow verification does not set the holds, and a first one wrongly timed is forgotten', () => {
  const times = new VerificationTimes();
  times.record(TODAY, 8);
  for (const ms of [80, 16, 16]) times.record(EARLIER, ms);
  assert.equal(times.holdAfterWrong(TODAY, 8), 8);
  for (let i = 0; i < 9; i += 1) times.record(TODAY, 4);
  assert.equal(times.holdAfterWrong(TODAY, 4), 12, 'the first time, 8 ms, is the tenth back and gone');
});

test('at most eight sets are remembered; a ninth is neither timed nor held', () => {
  const times = new VerificationTimes();
  for (let m = 1; m <= 8; m += 1) times.record(`$argon2id$v=19$m=${m},t=1,p=1`, m);
  times.record('$argon2id$v=19$m=9,t=1,p=1', 1_000);
  assert.equal(times.holdAfterWrong('$argon2id$v=19$m=9,t=1,p=1', 1), 0);
  assert.equal(times.holdAfterWrong('$argon2id$v=19$m=4,t=1,p=1', 4), 4, 'the slowest of the eight is twice the fourth');
});
