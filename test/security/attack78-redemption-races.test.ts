/**
 * attack78: a code's redemption on PostgreSQL (read, tokens made, then one statement that
 * consumes the code and stores the tokens while the grant is live) racing the writes that end
 * what the tokens rest on: the grant revoked, the user suspended, both left uncommitted by an
 * outside connection while the redemption runs, committed after. Whatever the token endpoint
 * answers, no token may work once those writes have committed; and a refused request (another
 * verifier, redirect URI) racing the real one leaves exactly one success.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Tokens, clientFields, freshCode, pkcePair, startOAuthApp, tokenRequest } from '../oauth/helpers.js';

forEachDatabase('attack78 code redemption races', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  const me = (token: string) => fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token}` } });

  for (const [what, write] of [
    ['the grant revoked', "update grants set revoked_at = 1, revoked_reason = 'consent_withdrawn' where user_id = $1 and client_id = $2"],
    ['the user suspended', "update users set status = 'suspended' where id = $1 and $2::text is not null"],
  ] as const) {
    // PostgreSQL alone: on SQLite the redemption's one transaction waits for the other writer.
    if (database.name === 'postgres') test(`a redemption racing ${what} (uncommitted meanwhile) leaves no working token`, async () => {
      const { c, user, fields } = await freshCode(t);
      const outside = new pg.Client({ connectionString: database.url });
      await outside.connect();
      try {
        await outside.query('begin');
        await outside.query(write, [user.id, c.client.clientId]);
        const redemption = tokenRequest(t, fields);
        await sleep(300);
        await outside.query('commit');
        const response = await redemption;
        const body = (await response.json()) as Tokens & { error?: string };
        if (response.status !== 200) {
          assert.equal(response.status, 400);
          assert.equal(body.error, 'invalid_grant');
          return;
        }
        assert.notEqual((await me(body.access_token)).status, 200, 'the access token works');
        const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: body.refresh_token, ...clientFields(c) });
        assert.notEqual(refreshed.status, 200, 'the refresh token works');
      } finally {
        await outside.query('rollback').catch(() => undefined);
        await outside.end();
      }
    });
  }

  test('mismatched requests racing the right one: exactly one success, the others refused without ending it', async () => {
    const { c, fields: right } = await freshCode(t);
    const wrong = [
      { ...right, code_verifier: pkcePair().verifier },
      { ...right, redirect_uri: `${c.redirectUri}/other` },
    ];
    const requests = [...Array.from({ length: 10 }, (_, i) => wrong[i % 2]!), right];
    const responses = await Promise.all(requests.map((fields) => tokenRequest(t, fields)));
    const statuses = responses.map((r) => r.status);
    assert.deepEqual(statuses, [...Array.from({ length: 10 }, () => 400), 200]);
    const won = (await responses[10]!.json()) as Tokens;
    assert.equal((await me(won.access_token)).status, 200, 'the winner was not ended by the mismatched requests');
  });
});
