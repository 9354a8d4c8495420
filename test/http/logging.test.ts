/** The request logger: pino's child logger made only when a line is written. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { requestLogger } from '../../src/http/logging.js';

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
