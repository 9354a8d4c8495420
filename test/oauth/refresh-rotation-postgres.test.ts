/**
 * A refresh token's rotation on PostgreSQL (`TokenStore.rotate`): the token, its grant and user
 * are read, the new pair made and the id_token signed from that read, then one statement takes
 * the token and stores the pair only while the token, its grant and its user are still live
 * (docs/performance.md, decision 63). So no row is held locked while a signature is made, an
 * account that ends while it is made gets no tokens from it, and a grant revoked while that
 * statement waits on its row is not marked used. PostgreSQL only: SQLite rotates in the
 * transaction that holds its one connection, where nothing can come between.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { ACCOUNT_NOT_ACTIVE } from '../../src/core/errors.js';
import type { KeySet } from '../../src/core/oidc/key-ring.js';
import type { TestApp } from '../support/app.js';
import { onPostgres, outsideConnection, racingGrantRevocation } from '../support/databases.js';
import { clientFields, newClient, obtainTokens, signedInBrowser, startOAuthApp, tokenRequest } from './helpers.js';

onPostgres('a refresh token\'s rotation on PostgreSQL', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());
  const monitor = outsideConnection(database);

  /** Runs `meanwhile` as the next id_token is about to be signed, inside the token request that signs it. */
  async function whileSigning<T>(meanwhile: () => Promise<void>, request: () => Promise<T>): Promise<T> {
    const keys = t.deps.keys as { keySet(): Promise<KeySet> };
    const keySet = keys.keySet.bind(keys);
    let pending: (() => Promise<void>) | undefined = meanwhile;
    keys.keySet = async () => {
      const set = await keySet();
      return Object.assign(Object.create(set) as KeySet, {
        signingKey: async (...args: Parameters<KeySet['signingKey']>) => {
          const work = pending;
          pending = undefined;
          await work?.();
          return set.signingKey(...args);
        },
      });
    };
    try {
      return await request();
    } finally {
      keys.keySet = keySet;
    }
  }

  /** A client, a member, and the tokens of an authorization with `openid` (an id_token at each refresh), with their grant's id. */
  async function withTokens() {
    const c = await newClient(t);
    const { browser, user } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { scope: 'openid profile:read' });
    const { rows } = await monitor().query<{ grant_id: number }>('select grant_id from refresh_tokens where token_hash = $1', [hashSecret(tokens.refresh_token)]);
    return { user, tokens, grantId: rows[0]!.grant_id, refresh: () => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) }) };
  }

  test('a refresh holds no lock on its family\'s refresh tokens while its id_token is signed', async () => {
    const { grantId, refresh } = await withTokens();
    let refused: unknown;
    const response = await whileSigning(async () => {
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

  test('an account suspended while its refresh signs the id_token gets no tokens from it: told the account is not active, the token left unused', async () => {
    const { user, tokens, grantId, refresh } = await withTokens();
    const response = await whileSigning(async () => {
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    }, refresh);
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), { error: 'invalid_grant', error_description: ACCOUNT_NOT_ACTIVE });
    const stored = await monitor().query<{ used_at: unknown }>('select used_at from refresh_tokens where token_hash = $1', [hashSecret(tokens.refresh_token)]);
    assert.equal(stored.rows[0]!.used_at, null, 'the token stays as it was');
    const made = await monitor().query<{ n: number }>(
      'select (select count(*) from refresh_tokens where grant_id = $1)::int + (select count(*) from access_tokens where grant_id = $1)::int as n', [grantId]);
    assert.equal(made.rows[0]!.n, 2, 'no new token under the grant');
  });

  test('a refresh admitted before its grant\'s revocation, whose write waits for it, records no use of the revoked grant', { timeout: 60_000 }, async () => {
    const { grantId, refresh } = await withTokens();
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
    const { grantId, refresh } = await withTokens();
    t.clock.advance(120_000);
    // The member's own deletion, in its order: the grants revoked first, then erased, which erases
    // their tokens (ON DELETE CASCADE) and so wants the row the rotation has taken while it waits
    // to mark the grant used.
    const response = await racingGrantRevocation(monitor(), grantId, 'account_unusable', t.clock.now(), refresh,
      () => monitor().query('delete from grants where id = $1', [grantId]));
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_grant');
  });
});
