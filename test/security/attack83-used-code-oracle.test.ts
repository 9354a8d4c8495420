/**
 * attack83: a used code presented by a request it is not bound to (another verifier, redirect
 * URI, no verifier) is refused without counting as reuse (124fdfb), "as an unknown code,
 * revealing nothing". It revealed that the code was used: the same request on the code before
 * the app redeemed it named what differs, after it the unknown code. Whoever merely saw a code
 * (a log, a referrer) could ask, as often as they liked and now with no effect on the user's
 * grants and no line anywhere, whether the app had redeemed it yet. Both answers must be alike.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { freshCode, pkcePair, startOAuthApp, tokenRequest } from '../oauth/helpers.js';

forEachDatabase('attack83: a used code is not told apart from an unused one by a request it is not bound to', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  async function refusal(fields: Record<string, string>): Promise<unknown> {
    const response = await tokenRequest(t, fields);
    const body = await response.json() as Record<string, unknown>;
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(body.error, 'invalid_grant');
    return body.error_description;
  }

  test('a wrong verifier, redirect_uri or missing verifier gets the same answer before and after the app redeems the code', async () => {
    for (const type of ['public', 'confidential'] as const) {
      const { fields } = await freshCode(t, { type });
      const { code_verifier: _, ...withoutVerifier } = fields;
      const probes: Array<Record<string, string>> = [
        { ...fields, code_verifier: pkcePair().verifier }, { ...fields, redirect_uri: `${fields.redirect_uri}/` }, withoutVerifier,
      ];
      const before = [];
      for (const probe of probes) before.push(await refusal(probe));
      assert.equal((await tokenRequest(t, fields)).status, 200, 'the app redeems its code');
      const afterwards = [];
      for (const probe of probes) afterwards.push(await refusal(probe));
      assert.deepEqual(afterwards, before, `${type}: the answers to whoever holds only the code tell whether it was used`);
    }
  });
});
