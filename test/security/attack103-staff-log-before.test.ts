/**
 * attack103 F4: bad input is never a 500. The staff log's `before` (a row id) was coerced by ajv
 * before any check of its digits: `1e309`, `Infinity` and `-1e309` became ±Infinity, which
 * Fastify's ajv let through `integer`, `minimum: 1` and `maximum` alike, and PostgreSQL refused the
 * query ('invalid input syntax for type integer: "Infinity"'): staff got the 500 page and the
 * operators an error line, where a larger number (`99999999999`) was the 400 it is.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Person, person } from '../staff/support.js';

forEachDatabase('attack103 F4: the staff log refuses a before that is no row id', (database) => {
  let t: TestApp;
  let admin: Person;
  before(async () => {
    t = await startTestApp(database);
    admin = await person(t, 'admin', { twoStep: true });
  });
  after(() => t.close());

  test('before=1e309, Infinity or -1e309 is a 400 page in the console, never a 500', async () => {
    for (const value of ['1e309', 'Infinity', '-1e309', '-Infinity', '1e308', '01', '+5', '0x10']) {
      const answer = await admin.visitor.get(`/admin/staff-log?before=${value}`);
      assert.equal(answer.status, 400, `before=${value}`);
      assert.match(answer.headers.get('content-type') ?? '', /^text\/html/, `before=${value}`);
    }
    assert.equal((await admin.visitor.get('/admin/staff-log?before=5')).status, 200);
    assert.equal((await admin.visitor.get('/admin/staff-log?before=2147483647')).status, 200);
  });
});
