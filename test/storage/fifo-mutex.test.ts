/** The SQLite connection's mutex: waiters get the connection in the order they asked for it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FifoMutex } from '../../src/storage/database.js';

test('the mutex hands the connection to waiters in arrival order, never to a newcomer first', async () => {
  const mutex = new FifoMutex();
  const order: string[] = [];
  await mutex.lock();
  const waiters = ['first', 'second', 'third'].map((name) => mutex.lock().then(() => { order.push(name); mutex.unlock(); }));
  mutex.unlock();
  // A newcomer arriving after the release queues behind those already waiting.
  const newcomer = mutex.lock().then(() => { order.push('newcomer'); mutex.unlock(); });
  await Promise.all([...waiters, newcomer]);
  assert.deepEqual(order, ['first', 'second', 'third', 'newcomer']);
  await mutex.lock();
  mutex.unlock();
});
