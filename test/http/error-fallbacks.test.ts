/**
 * What an error answer does when its own page cannot be made, and what an unexpected error leaves
 * in the log. Every answer with a page, a route's error and a request no route took alike (not
 * found, 405, the Host rule, the router's refusal), is the same refusal in JSON (RFC 6749 5.2)
 * should its page fail: the not-found answer's failure was a 500 `server_error` in place of its
 * 404, and the Host rule's too. An unexpected error is logged by its type, message and stack
 * alone: logged whole, a field such as a Node URL error's `input` put what the request carried in
 * the log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Deps } from '../../src/deps.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { answersIn, exchange } from '../support/raw-socket.js';

/** What an address carried into a real Node URL error, in its `input` field. */
const CARRIED = 'http://%zz/carried-by-the-request-7f3a';

/** Runs `work` while every page's words fail, as they would for a failure reading them. */
async function withoutWords(t: TestApp, failure: () => never, work: () => Promise<void>): Promise<void> {
  const deps = t.deps as { -readonly [K in keyof Deps]: Deps[K] };
  const words = deps.words;
  deps.words = failure;
  try {
    await work();
  } finally {
    deps.words = words;
  }
}

forEachDatabase('error answers whose page cannot be made, and unexpected errors in the log', (database) => {
  let t: TestApp;
  const logLines: string[] = [];
  before(async () => { t = await startTestApp(database, { logLines, logLevel: 'error' }); });
  after(() => t.close());

  test('a request no route takes, or one the Host rule refuses, whose page cannot be made is the same refusal in JSON', async () => {
    const host = new URL(t.baseUrl).host;
    await withoutWords(t, () => { throw new TypeError('no words today'); }, async () => {
      const cases: Array<[string, number, string]> = [
        [`GET /no-such-page HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, 404, 'not_found'],
        [`DELETE /login HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, 405, 'invalid_request'],
        ['GET /settings HTTP/1.1\r\nHost: a b\r\n\r\n', 400, 'invalid_request'],
        [`GET /settings/%zz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, 400, 'invalid_request'],
      ];
      for (const [bytes, status, code] of cases) {
        const what = JSON.stringify(bytes);
        const [answer, ...more] = answersIn((await exchange(t.baseUrl, bytes)).text);
        assert.equal(more.length, 0, what);
        assert.equal(answer?.status, status, what);
        assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8', what);
        assert.equal(answer.headers.get('cache-control'), 'no-store', what);
        const body = JSON.parse(answer.body) as Record<string, unknown>;
        assert.deepEqual(Object.keys(body), ['error', 'error_description'], what);
        assert.equal(body.error, code, what);
        assert.doesNotMatch(answer.body, /no words today|statusCode/, what);
      }
    });
  });

  test('an unexpected error is logged by its type, message and stack, never its fields that carry the request', async () => {
    logLines.length = 0;
    const urlFailure = (): never => { new URL(CARRIED); throw new Error('unreachable'); };
    await withoutWords(t, urlFailure, async () => {
      const answer = await fetch(`${t.baseUrl}/`);
      assert.equal(answer.status, 500);
      assert.equal((await answer.json() as { error: string }).error, 'server_error');
    });
    const unexpected = logLines.map((line) => JSON.parse(line) as { msg: string; err?: Record<string, unknown> }).find((line) => line.msg === 'unexpected error');
    assert.ok(unexpected, `an 'unexpected error' line: ${logLines.join('')}`);
    assert.equal(unexpected.err?.type, 'TypeError');
    assert.equal(typeof unexpected.err?.stack, 'string');
    assert.ok(!logLines.some((line) => line.includes('carried-by-the-request')), logLines.join(''));
  });
});
