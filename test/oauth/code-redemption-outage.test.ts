/**
 * attack83's leftover: PostgreSQL going away in the middle of a code's redemption, at the reads
 * that follow a refused one: the grant's read of a code it could not redeem (which decides reuse,
 * RFC 6749 4.1.2) answers as any outage does, 503 `temporarily_unavailable` in the RFC 6749 5.2
 * shape through the one error handler, never a 500; the store's read that words a refusal its
 * consuming write already decided (`consumeAndStore`) loses only the wording: the refusal stands,
 * so the app is not told to try a used code again. The outage is real: the service
 * reaches PostgreSQL through a TCP relay, cut as the read carrying the code's hash goes out.
 * PostgreSQL only: SQLite cannot become unreachable, and decides a refusal in its transaction.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { hashSecret } from '../../src/core/credentials/formats.js';
import type { TestApp } from '../support/app.js';
import { onPostgres } from '../support/databases.js';
import { TcpRelay } from '../support/relay.js';
import { freshCode, startOAuthApp, tokenRequest } from './helpers.js';

onPostgres('a code redemption that meets PostgreSQL going away', (database) => {
  let relay: TcpRelay;
  let t: TestApp;
  let admin: pg.Client;
  const logLines: string[] = [];
  before(async () => {
    const url = new URL(database.url);
    relay = new TcpRelay({ host: url.hostname, port: Number(url.port || 5432) });
    await relay.open();
    url.host = `127.0.0.1:${relay.port}`;
    t = await startOAuthApp({ ...database, target: { kind: 'postgres', url: url.toString() }, url: url.toString() }, { logLines });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  after(async () => {
    await t.close();
    await relay.cut();
    await admin.end();
  });

  /** Calls `at(n)` as the n-th statement carrying `code`'s hash goes out to PostgreSQL. */
  function watchCode(code: string, at: (n: number) => void): () => void {
    const hash = Buffer.from(hashSecret(code));
    let seen = 0;
    relay.onClientData = (chunk) => {
      if (chunk.includes(hash)) at(++seen);
    };
    return () => { relay.onClientData = undefined; };
  }

  async function reopened(): Promise<void> {
    await relay.open();
    for (let attempt = 0; attempt < 40; attempt++) {
      if ((await fetch(`${t.baseUrl}/readyz`)).status === 200) return;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.fail('the service came back');
  }

  /** The answer of a request that met the outage: the service's JSON error, try again soon (src/http/plugins/errors.ts). */
  async function assertUnavailable(response: Response): Promise<void> {
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '5');
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await response.json(), { error: 'temporarily_unavailable', error_description: 'The service is briefly unavailable; try again shortly.' });
  }

  /**
   * Redeems the code of `fields` with its user suspended after the redemption read it, PostgreSQL
   * gone at the read that words the refusal: the answer, its body read, once the service is back.
   */
  async function redeemWithWordingCut(fields: Record<string, string> & { code: string }, userId: number): Promise<{ status: number; body: unknown }> {
    let suspended: Promise<unknown> = Promise.resolve();
    // The redemption's read (1) is answered with the user active, its answer held until the user is
    // suspended (on another connection, once the read has surely run), so the consuming write (2)
    // consumes the code and issues nothing; the read that words the refusal (3) meets the outage.
    const stop = watchCode(fields.code, (n) => {
      if (n === 1) {
        relay.stall();
        suspended = new Promise((r) => setTimeout(r, 100))
          .then(() => admin.query(`update users set status = 'suspended' where id = $1`, [userId]))
          .finally(() => relay.resume());
      }
      if (n === 3) void relay.cut();
    });
    try {
      const answer = await tokenRequest(t, fields);
      return { status: answer.status, body: await answer.json() };
    } finally {
      await suspended;
      stop();
      await reopened();
    }
  }

  const reuses = (clientId: string) => t.audit.filter((e) => e.audit === 'code.reuse_detected' && e.clientId === clientId).length;

  test('a used code presented again, PostgreSQL gone at the read that decides it is reuse: 503, and reuse still ends the grant once it is back', async () => {
    const { c, fields } = await freshCode(t, { type: 'public' });
    const first = await tokenRequest(t, fields);
    assert.equal(first.status, 200);
    const { refresh_token: refreshToken } = await first.json() as { refresh_token: string };
    // The redemption's read finds the code used (1); the grant's read of it decides reuse (2).
    const stop = watchCode(fields.code, (n) => { if (n === 2) void relay.cut(); });
    try {
      await assertUnavailable(await tokenRequest(t, fields));
    } finally {
      stop();
      await reopened();
    }
    assert.equal(reuses(c.client.clientId), 0, 'nothing was decided in the outage');
    const again = await tokenRequest(t, fields);
    assert.equal(again.status, 400);
    assert.equal((await again.json() as { error: string }).error, 'invalid_grant');
    assert.equal(reuses(c.client.clientId), 1);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: c.client.clientId });
    assert.equal(refreshed.status, 400, 'the first redemption\'s tokens ended with the grant');
  });

  test('a code whose user was suspended after the redemption read it, PostgreSQL gone at the read that words the refusal: still invalid_grant, no reuse recorded, the code used and no tokens made', async () => {
    const { c, fields, user } = await freshCode(t, { type: 'public' });
    const refused = await redeemWithWordingCut(fields, user.id);
    assert.equal(refused.status, 400, 'the write decided: no 503 that asks the app to try the code again');
    assert.deepEqual(refused.body, { error: 'invalid_grant', error_description: 'The authorization can no longer be used.' });
    const code = await admin.query<{ used_at: unknown; grant_id: number }>('select used_at, grant_id from authorization_codes where code_hash = $1', [hashSecret(fields.code)]);
    assert.notEqual(code.rows[0]!.used_at, null, 'the write consumed the code');
    const tokens = await admin.query('select 1 from access_tokens where grant_id = $1 union all select 1 from refresh_tokens where grant_id = $1', [code.rows[0]!.grant_id]);
    assert.equal(tokens.rowCount, 0, 'and issued nothing for it');
    assert.equal(reuses(c.client.clientId), 0, 'the one presentation is no replay');
  });

  test('the failed read that words a refused redemption is logged as an error though the answer hides it, and no line holds the code, its verifier or its hash', async () => {
    const { fields, user } = await freshCode(t, { type: 'public' });
    const from = logLines.length;
    assert.equal((await redeemWithWordingCut(fields, user.id)).status, 400);
    const lines = logLines.slice(from);
    const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: { type?: string } })
      .filter((line) => line.msg.startsWith('the read that words a refused code redemption failed'));
    assert.equal(logged.length, 1, lines.join('\n'));
    assert.equal(logged[0]!.level, 50);
    assert.ok(logged[0]!.err?.type, 'the line names the failure');
    for (const secret of [fields.code, fields.code_verifier!, hashSecret(fields.code)]) {
      assert.ok(!lines.some((line) => line.includes(secret)), 'no line holds the code, its verifier or its hash');
    }
  });

  test('the failed read that words a refused redemption is logged with the token request\'s id, as every line written while answering it', async () => {
    const { fields, user } = await freshCode(t, { type: 'public' });
    const from = logLines.length;
    assert.equal((await redeemWithWordingCut(fields, user.id)).status, 400);
    const lines = logLines.slice(from).map((line) => JSON.parse(line) as { msg: string; reqId?: string; req?: { url?: string } });
    const request = lines.filter((line) => line.msg === 'incoming request' && line.req?.url === '/api/oauth/token');
    assert.equal(request.length, 1);
    assert.ok(request[0]!.reqId);
    const logged = lines.filter((line) => line.msg.startsWith('the read that words a refused code redemption failed'));
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.reqId, request[0]!.reqId);
  });
});
