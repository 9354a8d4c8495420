/**
 * attack78: a returning user's authorization racing the withdrawal of the consent it relies on
 * (PostgreSQL). Commit a891a84 says the code is written "only while the remembered consent covers
 * it, decided by the write", so that "a consent withdrawn meanwhile can no longer yield a code".
 *
 * The interleaving, pinned with one row lock held by an outside connection: the withdrawal
 * (`revokeApplicationAccess`: delete the consent, then revoke the user's grants for the app) has
 * deleted the consent and waits to revoke the grants; the authorization's `INSERT … SELECT … FROM
 * consents` runs meanwhile. Its snapshot still sees the consent (the delete is not committed) and
 * nothing makes it wait for the delete, so it writes a new grant and code; the withdrawal's
 * revoking UPDATE, whose snapshot was taken before that grant existed, never sees it. Once both
 * have committed the consent is gone, yet the code redeems for tokens that work. A pushed request
 * (RFC 9126) still reads the consent and then writes (docs/oauth.md promises the same for it).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { TestApp } from '../support/app.js';
import { onPostgres } from '../support/databases.js';
import { type TestClient, authorizeQuery, clientFields, codeExchangeFields, freshCode, pkcePair, startOAuthApp, tokenRequest } from '../oauth/helpers.js';

onPostgres('attack78 remembered consent racing its withdrawal', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  for (const pushed of [false, true]) test(`a code approved by a remembered consent while that consent is being withdrawn yields no working token${pushed ? ' (a pushed request, RFC 9126)' : ''}`, async () => {
    // The first authorization, through the consent page: a consent and a first grant.
    const { c, browser, user } = await freshCode(t);

    const outside = new pg.Client({ connectionString: database.url });
    await outside.connect();
    let withdrawal: Promise<Response> | undefined;
    let authorization: Promise<Response> | undefined;
    try {
      // Hold the first grant's row: the withdrawal's revoking UPDATE waits on it, after its delete.
      await outside.query('begin');
      const held = await outside.query('select id from grants where user_id = $1 and client_id = $2 for update', [user.id, c.client.clientId]);
      assert.equal(held.rowCount, 1);
      withdrawal = browser.postForm('/settings/applications/revoke', { _csrf: browser.cookies.get('svc_csrf')!, client_id: c.client.clientId });
      await waitForLockWaiters(outside, 1);
      // The returning user's authorization, while the withdrawal has deleted the consent and not committed.
      const pkce = pkcePair();
      authorization = browser.fetch(`/oauth/authorize?${pushed ? await pushedQuery(t, c, authorizeQuery(c, { pkce })) : authorizeQuery(c, { pkce })}`);
      // Let the authorization run (or wait on the consent's row, as it should), then release the withdrawal.
      await sleep(500);
      await outside.query('commit');
      const withdrawn = await withdrawal;
      assert.equal(withdrawn.status, 303, 'the withdrawal succeeded');
      const answer = await authorization;
      // Both have committed: the consent is gone.
      const consents = await outside.query('select 1 from consents where user_id = $1 and client_id = $2', [user.id, c.client.clientId]);
      assert.equal(consents.rowCount, 0, 'the consent is withdrawn');
      if (answer.status !== 302) return; // the consent page: no code, as it should be
      const code = new URL(answer.headers.get('location')!).searchParams.get('code');
      if (code === null) return;
      const redeemed = await tokenRequest(t, codeExchangeFields(c, code, pkce));
      if (redeemed.status !== 200) return;
      const tokens = (await redeemed.json()) as { access_token: string };
      const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      const live = await outside.query('select id from grants where user_id = $1 and client_id = $2 and revoked_at is null', [user.id, c.client.clientId]);
      assert.notEqual(me.status, 200, `a token made after the consent was withdrawn works (live grants ${JSON.stringify(live.rows)})`);
    } finally {
      await outside.query('rollback').catch(() => undefined);
      await outside.end();
      await Promise.allSettled([withdrawal, authorization].filter((p) => p !== undefined));
    }
  });
});

/** RFC 9126: the request pushed by the client, and the query that then goes to the authorization endpoint. */
async function pushedQuery(t: TestApp, c: TestClient, query: URLSearchParams): Promise<URLSearchParams> {
  const response = await fetch(`${t.baseUrl}/api/oauth/par`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams([...[...query].filter(([name]) => name !== 'client_id'), ...Object.entries(clientFields(c))]).toString(),
  });
  assert.equal(response.status, 201, await response.clone().text());
  const { request_uri: requestUri } = (await response.json()) as { request_uri: string };
  return new URLSearchParams({ client_id: c.client.clientId, request_uri: requestUri });
}

/** Waits until `count` other backends wait for a lock the outside connection holds. */
async function waitForLockWaiters(outside: pg.Client, count: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const waiting = await outside.query("select count(*)::int as n from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))");
    if (waiting.rows[0].n >= count) return;
    await sleep(20);
  }
  throw new Error('nothing waited for the held row');
}
