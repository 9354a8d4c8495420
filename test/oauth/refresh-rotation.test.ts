/**
 * A refresh token's rotation without a replay window (`TokenStore.rotate`): the token, its grant
 * and user are read, the new pair made and the id_token signed from that read with no transaction
 * open, then one write takes the token and stores the pair only while the token, its grant and its
 * user are still live (docs/performance.md, decisions 63 and 68). So an account that ends while
 * the id_token is signed gets no tokens from it, and no other write waits for a signature: on
 * SQLite none queues behind one on its one connection, on PostgreSQL no row is held locked while
 * one is made, and a grant revoked while the write waits on its row is not marked used.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { ACCOUNT_NOT_ACTIVE } from '../../src/core/errors.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase, onPostgres, outsideConnection, racingGrantRevocation } from '../support/databases.js';
import { type Tokens, clientFields, newClient, obtainTokens, signedInBrowser, startOAuthApp, tokenRequest, whileSigning } from './helpers.js';

/** A client, a member, and the tokens of an authorization with `openid` (an id_token at each refresh), with their grant's id. */
async function withTokens(t: TestApp, scope = 'openid profile:read') {
  const c = await newClient(t);
  const { browser, user } = await signedInBrowser(t);
  const tokens = await obtainTokens(t, browser, c, { scope });
  const stored = await t.deps.stores.tokens.findRefresh(hashSecret(tokens.refresh_token));
  const refresh = () => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
  return { user, tokens, grantId: stored!.grantId, refresh };
}

forEachDatabase('a refresh token\'s rotation', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  test('an account suspended while its refresh signs the id_token gets no tokens from it: told the account is not active, the token left unused', async () => {
    const { user, tokens, grantId, refresh } = await withTokens(t);
    const response = await whileSigning(t, async () => {
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    }, refresh);
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), { error: 'invalid_grant', error_description: ACCOUNT_NOT_ACTIVE });
    const stored = await t.deps.stores.tokens.findRefresh(hashSecret(tokens.refresh_token));
    assert.equal(stored!.usedAt, null, 'the token stays as it was');
    const { db } = t.deps.database;
    const counted = await Promise.all((['refresh_tokens', 'access_tokens'] as const).map((table) =>
      db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('grant_id', '=', grantId).executeTakeFirstOrThrow()));
    assert.equal(counted.reduce((sum, { n }) => sum + Number(n), 0), 2, 'no new token under the grant');
  });

  test('no other write waits for a refresh\'s id_token signature: another refresh rotates and answers meanwhile', { timeout: 30_000 }, async () => {
    const signing = await withTokens(t);
    const other = await withTokens(t, 'profile:read');
    let meanwhile: Response | undefined;
    const response = await whileSigning(t, async () => { meanwhile = await other.refresh(); }, signing.refresh);
    assert.equal(meanwhile?.status, 200, 'the other refresh answered while the id_token was being signed');
    assert.equal(response.status, 200);
    assert.ok(((await response.json()) as Tokens & { id_token?: string }).id_token);
  });
});

onPostgres('a refresh token\'s rotation on PostgreSQL', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());
  const monitor = outsideConnection(database);

  test('a refresh holds no lock on its family\'s refresh tokens while its id_token is signed', async () => {
    const { grantId, refresh } = await withTokens(t);
    let refused: unknown;
    const response = await whileSigning(t, async () => {
      // The rows a family's revocation takes first (`revokeByGrant`), without waiting for them.
      await monitor().query('begin');
      try {
        await monitor().query('select id from refresh_tokens where grant_id = $1 order by id desc for update nowait', [grantId]);
      } catch (error) {
        refused = (error as { message?: string }).message;
      } finally {
        await monitor().query('rollback');
      }
    }, refresh);
    assert.equal(response.status, 200);
    assert.equal(refused, undefined, 'a revocation of the family takes its rows at once');
  });

  test('a refresh admitted before its grant\'s revocation, whose write waits for it, records no use of the revoked grant', { timeout: 60_000 }, async () => {
    const { grantId, refresh } = await withTokens(t);
    // The grant's "last used" is due again: the refresh comes two minutes after the code's exchange.
    t.clock.advance(120_000);
    const usedBefore = await monitor().query<{ last_used_at: string }>('select last_used_at from grants where id = $1', [grantId]);
    // The rotation's statement, its snapshot taken before the revocation commits, waits on the grant's row.
    const answer = await racingGrantRevocation(monitor(), grantId, 'consent_withdrawn', t.clock.now(), refresh);
    assert.equal(answer.status, 200, 'admitted before the revocation');
    const usedAfter = await monitor().query<{ last_used_at: string }>('select last_used_at from grants where id = $1', [grantId]);
    assert.equal(usedAfter.rows[0]!.last_used_at, usedBefore.rows[0]!.last_used_at, 'the revoked grant\'s last use stays before its revocation');
  });

  test('a refresh whose write PostgreSQL ends as a deadlock\'s victim, against a deletion of its account, is refused as the deleted grant\'s token, not failed', { timeout: 60_000 }, async () => {
    const { grantId, refresh } = await withTokens(t);
    t.clock.advance(120_000);
    // The member's own deletion, in its order: the grants revoked first, then erased, which erases
    // their tokens (ON DELETE CASCADE) and so wants the row the rotation has taken while it waits
    // to mark the grant used.
    const response = await racingGrantRevocation(monitor(), grantId, 'account_unusable', t.clock.now(), () => refresh(),
      () => monitor().query('delete from grants where id = $1', [grantId]));
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_grant');
  });
});
