/**
 * A token's "last used" over HTTP (docs/api.md, "Last use"): an app's tokens of one grant write its
 * last use between them, and a write that fails neither fails the request nor loses the use.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase, whileWritesFail } from '../support/databases.js';
import { anotherAccessToken, get, newAccessToken, newUser } from './fixtures.js';

const MINUTE = 60_000;

forEachDatabase('last use of a token', (database) => {
  let t: TestApp;
  const logLines: string[] = [];
  before(async () => {
    t = await startTestApp(database, { logLines, logLevel: 'warn' });
  });
  after(() => t.close());

  /** An app's grant made 5 minutes ago with two access tokens (a refresh's, or another instance's), and the grant's last use. */
  async function grantWithTwoTokens() {
    const user = await newUser(t.deps);
    const created = t.clock.now();
    const issued = await newAccessToken(t.deps, user, 'profile:read');
    const other = await anotherAccessToken(t.deps, user, 'profile:read', issued);
    t.clock.advance(5 * MINUTE);
    return { tokens: [issued.token, other], created, lastUsed: async () => (await t.deps.stores.grants.findById(issued.grantId))?.lastUsedAt };
  }

  test('an app\'s access tokens of one grant write its last use at most once a minute between them, not once per token', async () => {
    const { tokens: [first, second], lastUsed } = await grantWithTwoTokens();
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token: first })).status, 200);
    const firstUse = t.clock.now();
    assert.equal(await lastUsed(), firstUse);
    t.clock.advance(30_000);
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token: second })).status, 200);
    assert.equal(await lastUsed(), firstUse, 'the other token within the minute: not written again');
    t.clock.advance(30_000);
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token: second })).status, 200);
    assert.equal(await lastUsed(), t.clock.now(), 'a minute on: written');
  });

  test('a use whose last use cannot be written is served, the failure logged as a warning, and the next use writes it', async () => {
    const { tokens: [token], created, lastUsed } = await grantWithTwoTokens();
    const from = logLines.length;
    const served = await whileWritesFail(t.deps.database.db, database, 'grants', 'update', () => get(t.baseUrl, '/api/open/v1/me', { token }));
    assert.equal(served.status, 200);
    assert.equal(await lastUsed(), created, 'not written');
    const logged = logLines.slice(from).map((line) => JSON.parse(line) as { level: number; msg: string });
    assert.deepEqual(logged.map(({ level, msg }) => [level, msg]), [[40, 'could not record token use']]);
    t.clock.advance(1_000);
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 200);
    assert.equal(await lastUsed(), t.clock.now(), 'the next use, within the minute, writes it');
  });
});
