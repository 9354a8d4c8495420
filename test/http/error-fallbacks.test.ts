/**
 * What an unexpected error leaves in the log: its type, message and stack alone. Logged whole, a
 * field such as a Node URL error's `input` put what the request carried in the log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Deps } from '../../src/deps.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

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
