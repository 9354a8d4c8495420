/** The request logger: pino's child logger made only when a line is written. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { redactUrl, requestLogger } from '../../src/http/logging.js';

function parentAt(level: string, lines: string[]): { logger: FastifyBaseLogger; children: () => number } {
  const logger = pino({ level }, { write: (line: string) => { lines.push(line); } });
  let children = 0;
  const child = logger.child.bind(logger);
  (logger as { child: unknown }).child = (...args: Parameters<typeof child>) => { children += 1; return child(...args); };
  return { logger: logger as unknown as FastifyBaseLogger, children: () => children };
}

test('a request logger below its level writes nothing and makes no child logger', () => {
  const lines: string[] = [];
  const parent = parentAt('warn', lines);
  const log = requestLogger(parent.logger, { reqId: 'req-1' }, {});
  log.info({ res: { statusCode: 200 } }, 'request completed');
  log.debug('details');
  assert.deepEqual(lines, []);
  assert.equal(parent.children(), 0);
  assert.equal(log.level, 'warn');
});

test('a request logger at its level writes through one child carrying the bindings', () => {
  const lines: string[] = [];
  const parent = parentAt('info', lines);
  const log = requestLogger(parent.logger, { reqId: 'req-2' }, {});
  log.warn({ reason: 'x' }, 'first');
  log.error('second');
  assert.equal(parent.children(), 1);
  assert.deepEqual(lines.map((line) => JSON.parse(line) as { reqId: string; msg: string }).map(({ reqId, msg }) => ({ reqId, msg })),
    [{ reqId: 'req-2', msg: 'first' }, { reqId: 'req-2', msg: 'second' }]);
});

test('redactUrl redacts inside the return_to of a sign-in page and keeps the rest readable', () => {
  const url = `/login?${new URLSearchParams({ return_to: '/oauth/authorize?client_id=abc&state=STATE_1&nonce=NONCE_1' })}`;
  const redacted = redactUrl(url);
  assert.equal(decodeURIComponent(redacted.slice('/login?return_to='.length)), '/oauth/authorize?client_id=abc&state=[redacted]&nonce=[redacted]');
});

test('redactUrl redacts a pushed request\'s request_uri, and its pushed marker in the return_to of a sign-in page', () => {
  const requestUri = 'urn:ietf:params:oauth:request_uri:REQUEST_URI_SECRET';
  const opened = redactUrl(`/oauth/authorize?${new URLSearchParams({ client_id: 'abc', request_uri: requestUri })}`);
  assert.equal(opened, '/oauth/authorize?client_id=abc&request_uri=[redacted]');
  const url = `/login?${new URLSearchParams({ return_to: '/oauth/authorize?client_id=abc&pushed=1767225600.MARKER_SECRET' })}`;
  assert.equal(decodeURIComponent(redactUrl(url).slice('/login?return_to='.length)), '/oauth/authorize?client_id=abc&pushed=[redacted]');
});

test('redactUrl takes linear time and space on a return_to nested a request-chosen number of times', () => {
  const url = `/login?${'return_to=?'.repeat(1400)}state=SECRET`;
  const started = performance.now();
  const redacted = redactUrl(url);
  assert.ok(performance.now() - started < 500, `took ${performance.now() - started} ms`);
  assert.ok(redacted.length <= 3 * url.length, `${redacted.length} characters from ${url.length}`);
  assert.equal(redacted.includes('SECRET'), false);
});

test('redactUrl redacts a return_to that does not decode, rather than logging it as sent', () => {
  const url = `/login?return_to=${encodeURIComponent('/oauth/authorize?client_id=abc&state=SECRET_STATE')}%E0&x=1`;
  const redacted = redactUrl(url);
  assert.equal(redacted.includes('SECRET_STATE'), false);
  assert.equal(redacted, '/login?return_to=[redacted]&x=1');
});
