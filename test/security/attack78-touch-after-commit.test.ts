/**
 * attack78: on PostgreSQL a code's redemption commits the consumption and the tokens in one
 * statement, then writes the grant's "last used" time in a second (when due: a minute after the
 * grant's last use). When that second write fails (here: it waits on the grant's row past
 * `statement_timeout`, 9 s), the token endpoint answered an error although the code was already
 * used and the tokens stored: the client, told the exchange failed, presents the code again, which
 * is a reuse and ends the user's grants. A failure to issue must leave the code unused (docs/oauth.md),
 * and a code whose tokens were committed must be answered. That write never marks a revoked grant
 * used: a revocation that held the grant's row while the statement waited is read again.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { hashSecret } from '../../src/core/credentials/formats.js';
import type { TestApp } from '../support/app.js';
import { onPostgres, outsideConnection, racingGrantRevocation } from '../support/databases.js';
import { freshCode, startOAuthApp, tokenRequest } from '../oauth/helpers.js';

onPostgres('attack78 the grant touched after the redemption committed', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());
  const outside = outsideConnection(database);
  /** The grant a code was issued under, with its "last used" as stored. */
  const grantOf = async (code: string) => (await outside().query<{ id: number; last_used_at: string }>(
    'select g.id, g.last_used_at from grants g join authorization_codes c on c.grant_id = g.id where c.code_hash = $1', [hashSecret(code)])).rows[0]!;

  test('a redemption whose grant row is held past the statement timeout either answers its tokens or leaves the code usable', { timeout: 60_000 }, async () => {
    const { c, user, fields } = await freshCode(t);
    // The grant's "last used" is due again: its code is redeemed two minutes after the approval.
    t.clock.advance(120_000);
    let first: Response;
    try {
      // A lock that lets the tokens' foreign keys through (FOR KEY SHARE) but not an UPDATE of the row.
      await outside().query('begin');
      await outside().query('select id from grants where user_id = $1 and client_id = $2 for no key update', [user.id, c.client.clientId]);
      const answer = tokenRequest(t, fields);
      await sleep(200);
      first = await Promise.race([answer, sleep(15_000).then(() => { throw new Error('no answer in 15 s'); })]);
      await outside().query('commit');
    } finally {
      await outside().query('rollback').catch(() => undefined);
    }
    if (first.status !== 200) {
      // The client was told the exchange failed: it tries again, as it may.
      const again = await tokenRequest(t, fields);
      assert.equal(again.status, 200, `first ${first.status} ${await first.text()}, then ${await again.text()}`);
    }
    // Either way the grant's "last used" is the redemption's time.
    const grants = await t.deps.stores.grants.summarizeForUser(user.id);
    assert.deepEqual(grants.map((g) => g.lastUsedAt), [t.clock.now()]);
  });

  test('a redemption admitted before its grant\'s revocation, whose write waits for it, records no use of the revoked grant', { timeout: 60_000 }, async () => {
    const { code, fields } = await freshCode(t);
    t.clock.advance(120_000);
    const grant = await grantOf(code);
    // The redemption's statement, its snapshot taken before the revocation commits, waits on the grant's row.
    const answer = await racingGrantRevocation(outside(), grant.id, 'consent_withdrawn', t.clock.now(), () => tokenRequest(t, fields));
    assert.equal(answer.status, 200, 'admitted before the revocation');
    const { rows: [touched] } = await outside().query<{ last_used_at: string }>('select last_used_at from grants where id = $1', [grant.id]);
    assert.equal(touched!.last_used_at, grant.last_used_at, 'the revoked grant\'s last use stays before its revocation');
  });

  test('a redemption whose write PostgreSQL ends as a deadlock\'s victim, against a deletion of its account, is refused as the erased grant\'s code, not failed', { timeout: 60_000 }, async () => {
    const { code, fields } = await freshCode(t);
    t.clock.advance(120_000);
    const grant = await grantOf(code);
    // The member's own deletion, in its order: the grants revoked, then erased with their codes
    // (ON DELETE CASCADE), which wants the code the redemption has taken.
    const response = await racingGrantRevocation(outside(), grant.id, 'account_unusable', t.clock.now(), () => tokenRequest(t, fields),
      () => outside().query('delete from grants where id = $1', [grant.id]));
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_grant');
  });
});
