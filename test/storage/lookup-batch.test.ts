/** Reads and lookups sent together (src/storage/lookup-batch.ts), with loaders that record their queries. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LOOKUP_BATCH_KEYS, LookupBatch, TurnBatch } from '../../src/storage/lookup-batch.js';

interface Row { key: string; value: number }

function recordingBatch(known: (key: string) => boolean = (key) => !key.startsWith('unknown')) {
  const queries: string[][] = [];
  const batch = new LookupBatch<Row>(async (keys) => {
    queries.push(keys);
    // Rows in another order than asked, as a database may answer.
    return keys.filter(known).reverse().map((key) => ({ key, value: key.length }));
  }, (row) => row.key);
  return { batch, queries };
}

test('lookups asked in one turn go out as one query; each gets its own row, an unknown key none, a key asked twice is sent once', async () => {
  const { batch, queries } = recordingBatch();
  const answers = await Promise.all(['a', 'bb', 'unknown-1', 'a', 'ccc'].map((key) => batch.load(key)));
  assert.deepEqual(queries, [['a', 'bb', 'unknown-1', 'ccc']]);
  assert.deepEqual(answers, [{ key: 'a', value: 1 }, { key: 'bb', value: 2 }, undefined, { key: 'a', value: 1 }, { key: 'ccc', value: 3 }]);
});

test(`a key asked many times in one turn takes one of a query's ${LOOKUP_BATCH_KEYS} places`, async () => {
  const { batch, queries } = recordingBatch();
  const keys = [...Array.from({ length: LOOKUP_BATCH_KEYS * 2 }, () => 'same'), ...Array.from({ length: LOOKUP_BATCH_KEYS - 1 }, (_, i) => `k${i}`)];
  const answers = await Promise.all(keys.map((key) => batch.load(key)));
  assert.deepEqual(queries.map((query) => query.length), [LOOKUP_BATCH_KEYS]);
  assert.deepEqual(answers.map((row) => row?.key), keys);
});

test('lookups of a later turn go out in a query of their own', async () => {
  const { batch, queries } = recordingBatch();
  await batch.load('a');
  await batch.load('b');
  assert.deepEqual(queries, [['a'], ['b']]);
});

test(`one query carries at most ${LOOKUP_BATCH_KEYS} keys`, async () => {
  const { batch, queries } = recordingBatch();
  const keys = Array.from({ length: LOOKUP_BATCH_KEYS * 2 + 1 }, (_, i) => `k${i}`);
  const answers = await Promise.all(keys.map((key) => batch.load(key)));
  assert.deepEqual(queries.map((query) => query.length), [LOOKUP_BATCH_KEYS, LOOKUP_BATCH_KEYS, 1]);
  assert.deepEqual(answers.map((row) => row?.key), keys);
});

test('a failed query fails every lookup waiting on it, a loader that throws at once too, and the next turn queries again', async () => {
  const failure = new Error('database unreachable');
  let calls = 0;
  const batch = new LookupBatch<Row>((keys) => {
    calls++;
    if (calls === 1) return Promise.reject(failure);
    if (calls === 2) throw failure;
    return Promise.resolve(keys.map((key) => ({ key, value: 0 })));
  }, (row) => row.key);
  for (let round = 0; round < 2; round++) {
    const results = await Promise.allSettled([batch.load('a'), batch.load('b')]);
    assert.deepEqual(results, [{ status: 'rejected', reason: failure }, { status: 'rejected', reason: failure }]);
  }
  assert.deepEqual(await batch.load('a'), { key: 'a', value: 0 });
});

test('reads asked in one turn go out together, a read asked twice twice, and each gets the answer in its place', async () => {
  const sent: number[][] = [];
  const batch = new TurnBatch<number, string>(async (questions) => {
    sent.push(questions);
    return questions.map((question, i) => `${question} at ${i}`);
  });
  const answers = await Promise.all([3, 1, 3, 2].map((question) => batch.ask(question)));
  assert.deepEqual(sent, [[3, 1, 3, 2]]);
  assert.deepEqual(answers, ['3 at 0', '1 at 1', '3 at 2', '2 at 3']);
  const many = Array.from({ length: LOOKUP_BATCH_KEYS + 1 }, (_, i) => i);
  await Promise.all(many.map((question) => batch.ask(question)));
  assert.deepEqual(sent.slice(1).map((questions) => questions.length), [LOOKUP_BATCH_KEYS, 1]);
});
