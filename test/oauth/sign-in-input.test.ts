/** The sign-in form the authorization flow sends people to: odd input is a failed sign-in, not a server error. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Browser, startOAuthApp } from './helpers.js';

forEachDatabase('sign-in input', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  test('a username with a NUL character is a failed sign-in (401), not a 500', async () => {
    const response = await new Browser(t).signIn('a\u0000b', 'whatever-password');
    assert.equal(response.status, 401);
    assert.match(await response.text(), /do not match an account/);
  });
});
