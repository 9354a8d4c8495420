/** The request logger: pino's child logger made only when a line is written. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { loggerOptions, redactUrl, requestLogger } from '../../src/http/logging.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

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

/** A pino logger with the service's serializers (`loggerOptions`), writing into `lines`. */
function serviceLogger(lines: string[]) {
  const { serializers } = loggerOptions('info') as { serializers: Record<string, (value: unknown) => unknown> };
  return pino({ level: 'info', serializers }, { write: (line: string) => { lines.push(line); } });
}

test('an error is logged by its type, message, stack, code and cause, never its other fields, which may hold what a request carried', () => {
  const lines: string[] = [];
  const cause = Object.assign(new Error('connection reset'), { code: 'ECONNRESET', address: '203.0.113.9' });
  const failure = Object.assign(new Error('duplicate key value violates unique constraint', { cause }),
    { code: '23505', detail: 'Key (email)=(someone@example.com) already exists.', input: '/settings?return_to=SECRET_INPUT' });
  serviceLogger(lines).error({ err: failure }, 'unexpected error');
  const { err } = JSON.parse(lines[0]!) as { err: Record<string, unknown> & { cause: Record<string, unknown> } };
  assert.deepEqual(Object.keys(err).sort(), ['cause', 'code', 'message', 'stack', 'type']);
  assert.deepEqual([err.type, err.code, err.message], ['Error', '23505', 'duplicate key value violates unique constraint']);
  assert.match(String(err.stack), /\n\s+at /);
  assert.deepEqual(Object.keys(err.cause).sort(), ['code', 'message', 'stack', 'type']);
  assert.equal(err.cause.code, 'ECONNRESET');
  assert.doesNotMatch(lines[0]!, /someone@example\.com|SECRET_INPUT|203\.0\.113\.9/);
});

test('an error whose causes loop is logged a few causes deep, and a thrown value that is no error by its type alone', () => {
  const lines: string[] = [];
  const first = new Error('first');
  const second = new Error('second', { cause: first });
  first.cause = second;
  const logger = serviceLogger(lines);
  logger.error({ err: first }, 'looped');
  logger.error({ err: 'the token was SECRET_VALUE' }, 'thrown string');
  let depth = 0;
  for (let err = (JSON.parse(lines[0]!) as { err: { cause?: unknown } }).err; err.cause !== undefined; err = err.cause as { cause?: unknown }) depth += 1;
  assert.equal(depth, 3);
  assert.deepEqual((JSON.parse(lines[1]!) as { err: unknown }).err, { type: 'string', message: '', stack: '' });
});

forEachDatabase('request log lines', (database) => {
  const lines: string[] = [];
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { logLines: lines }); });
  after(() => t.close());

  test('a secret-bearing query parameter is redacted by its name before any bracket, in any case or percent-encoding', async () => {
    const query = ['token[a]=SECRET_1', 'code[a]=SECRET_2', 'access_token[]=SECRET_3', '%61ccess_token=SECRET_4', 'Access_Token=SECRET_5',
      'refresh_token%5B0%5D=SECRET_6', 'STATE[x][y]=SECRET_7', 'page=kept'].join('&');
    assert.equal((await fetch(`${t.baseUrl}/.well-known/openid-configuration?${query}`)).status, 200);
    const logged = lines.join('');
    assert.match(logged, /token\[a\]=\[redacted\]/);
    assert.match(logged, /page=kept/);
    assert.doesNotMatch(logged, /SECRET_\d/);
  });
});
