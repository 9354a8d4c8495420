/** Which backend errors are a 503 "try again soon" rather than a 500 (src/http/plugins/errors.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isUnavailable } from '../../src/http/plugins/errors.js';

const failure = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

test('a backend that cannot serve for now is unavailable: unreachable, restarting, out of resources, locked or out of disk', () => {
  // 57014: a statement PostgreSQL ended at statement_timeout, a lock held too long (attack93).
  for (const code of ['ECONNREFUSED', 'ECONNRESET', '57P01', '08006', '53100', '53300', '57014', 'SQLITE_BUSY', 'SQLITE_FULL']) {
    assert.equal(isUnavailable(failure(code)), true, code);
  }
  // pg's own query_timeout: a server that stopped answering.
  assert.equal(isUnavailable(new Error('Query read timeout')), true);
  assert.equal(isUnavailable(new Error('timeout exceeded when trying to connect')), true);
  // pg's refusal on a lost connection: the rollback of a transaction whose connection died.
  assert.equal(isUnavailable(new Error('Client has encountered a connection error and is not queryable')), true);
});

test('a mistake of ours, a refused statement or a query past a configured limit is not unavailability: it stays a 500', () => {
  for (const code of ['42P01', '23505', '0A000', '53200', '53400', 'SQLITE_CONSTRAINT', 'SQLITE_ERROR']) {
    assert.equal(isUnavailable(failure(code)), false, code);
  }
  assert.equal(isUnavailable(new TypeError('x is undefined')), false);
  assert.equal(isUnavailable(undefined), false);
});
