/**
 * A code's redemption (`CodeStore.redeem`): the code, its grant and user are read, the tokens made
 * and the id_token signed from that read with no transaction open, then one write consumes the
 * code and stores the tokens only while its grant and user are still live (docs/performance.md,
 * decisions 58 and 68). So an account that ends while the id_token is signed gets no tokens from
 * it, and no other write waits for a signature: on SQLite none queues behind one on its one
 * connection, on PostgreSQL no row is held locked while one is made.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { ACCOUNT_NOT_ACTIVE } from '../../src/core/errors.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Tokens, freshCode, startOAuthApp, tokenRequest, whileSigning } from './helpers.js';

const WITH_ID_TOKEN = { scope: 'openid profile:read' };

forEachDatabase('a code\'s redemption', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  test('an account suspended while its code\'s redemption signs the id_token gets no tokens: told the account is not active, the code used', { timeout: 30_000 }, async () => {
    const { user, code, fields } = await freshCode(t, {}, WITH_ID_TOKEN);
    const response = await whileSigning(t, async () => {
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    }, () => tokenRequest(t, fields));
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), { error: 'invalid_grant', error_description: ACCOUNT_NOT_ACTIVE });
    const stored = await t.deps.stores.codes.find(hashSecret(code));
    assert.notEqual(stored!.usedAt, null, 'the code is used');
    const { db } = t.deps.database;
    const counted = await Promise.all((['refresh_tokens', 'access_tokens'] as const).map((table) =>
      db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('grant_id', '=', stored!.grantId).executeTakeFirstOrThrow()));
    assert.equal(counted.reduce((sum, { n }) => sum + Number(n), 0), 0, 'no token under the grant');
  });

  test('no other write waits for a code\'s id_token signature: another code is redeemed and answered meanwhile', { timeout: 30_000 }, async () => {
    const signing = await freshCode(t, {}, WITH_ID_TOKEN);
    const other = await freshCode(t, {}, { scope: 'profile:read' });
    let meanwhile: Response | undefined;
    const response = await whileSigning(t, async () => { meanwhile = await tokenRequest(t, other.fields); }, () => tokenRequest(t, signing.fields));
    assert.equal(meanwhile?.status, 200, 'the other code was redeemed while the id_token was being signed');
    assert.equal(response.status, 200);
    assert.ok(((await response.json()) as Tokens & { id_token?: string }).id_token);
  });
});
