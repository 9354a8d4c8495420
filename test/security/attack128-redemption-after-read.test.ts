/**
 * attack128: a code's redemption after commit f0475c79 reads the code, its grant and user, makes
 * the tokens and signs the id_token with no transaction open, then one write consumes the code
 * (re-checking everything it is bound to and whether its grant is still live) and stores the
 * tokens (SQLite: a transaction of a group commit; PostgreSQL: one statement). These tests race
 * that window over real HTTP on both databases: many redemptions of one code mixed with requests
 * that do not match it, consent withdrawal, suspension, deletion, client deactivation and a grant's
 * revocation while the id_token is signed, reuse while the first redemption signs, DPoP-bound
 * codes, expiry at the edge, two instances on one database, a group whose other member fails, and
 * the refresh token obtained right after.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { deleteAccount } from '../../src/core/accounts/account-deletion.js';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { deactivateClient } from '../../src/core/oauth/clients.js';
import { revokeGrant, withdrawConsent } from '../../src/core/oauth/tokens/revocation.js';
import type { TestApp } from '../support/app.js';
import { type TestDatabase, forEachDatabase } from '../support/databases.js';
import { type DpopKey, dpopKey, dpopProof } from '../support/dpop.js';
import { startAppsForSuite } from '../support/instances.js';
import {
  PASSWORD, type TestClient, type Tokens, clientFields, freshCode, newClient, pkcePair, startOAuthApp, tokenRequest, whileSigning,
  accessTokenWorks, codeUsedAt, errorShaped, grantOfCode, tokensUnder,
} from '../oauth/helpers.js';

const OPENID = { scope: 'openid profile:read' };

/** Every insert into access_tokens for `clientId` fails, as a statement timeout would fail it, while `work` runs. */
async function whileClientsTokensFail<T>(t: TestApp, database: TestDatabase, clientId: string, work: () => Promise<T>): Promise<T> {
  const { db } = t.deps.database;
  if (database.name === 'sqlite') {
    await sql`create trigger attack128_refuse before insert on access_tokens when new.client_id = ${sql.lit(clientId)} begin select raise(abort, 'refused by the test'); end`.execute(db);
  } else {
    await sql.raw(`create function attack128_refuse() returns trigger language plpgsql as $$ begin
      if new.client_id = '${clientId}' then raise exception 'refused by the test'; end if; return new; end $$`).execute(db);
    await sql`create trigger attack128_refuse before insert on access_tokens for each row execute function attack128_refuse()`.execute(db);
  }
  try {
    return await work();
  } finally {
    await sql.raw(database.name === 'sqlite' ? 'drop trigger attack128_refuse' : 'drop trigger attack128_refuse on access_tokens').execute(db);
    if (database.name === 'postgres') await sql`drop function attack128_refuse()`.execute(db);
  }
}

forEachDatabase('attack128 a code redeemed after it is read', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  const refresh = (c: TestClient, token: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, ...clientFields(c) });

  /** A code's exchange as requests it is not bound to: another verifier, another redirect URI, another client. */
  const unboundRequests = async (c: TestClient, fields: Record<string, string>) => [
    { ...fields, code_verifier: pkcePair().verifier },
    { ...fields, redirect_uri: `${c.redirectUri}/other` },
    { ...fields, ...clientFields(await newClient(t)) },
  ];

  test('of many racing redemptions of one code exactly one gets tokens; mismatched racers are refused without counting as reuse, the bound ones end the winner', { timeout: 60_000 }, async (ctx) => {
    const { c, code, fields } = await freshCode(t, {}, OPENID);
    const wrong = await unboundRequests(c, fields);
    const BOUND = 8;
    const requests = [...Array.from({ length: 12 }, (_, i) => wrong[i % 3]!), ...Array.from({ length: BOUND }, () => fields)];
    const responses = await Promise.all(requests.map((f) => tokenRequest(t, f)));
    // And spread over several turns (several groups on SQLite), the bound ones among the others.
    for (let round = 0; round < 4; round++) {
      const fresh = await freshCode(t, {}, OPENID);
      const spread = await Promise.all(Array.from({ length: 16 }, (_, i) => sleep(i % 5).then(() =>
        tokenRequest(t, i % 2 === 0 ? fresh.fields : { ...fresh.fields, code_verifier: pkcePair().verifier }))));
      const spreadStatuses = spread.map((r) => r.status);
      ctx.diagnostic(`spread round ${round}: ${spreadStatuses.join(',')}`);
      assert.equal(spreadStatuses.filter((s) => s === 200).length, 1, `spread round ${round}: ${spreadStatuses.join(',')}`);
      for (const r of spread) if (r.status !== 200) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
      assert.equal(await accessTokenWorks(t, ((await spread.find((r) => r.status === 200)!.json()) as Tokens).access_token), false, 'the winner outlived the reuse');
    }
    ctx.diagnostic(`statuses ${responses.map((r) => r.status).join(',')}`);
    const won = responses.filter((r) => r.status === 200);
    assert.equal(won.length, 1, `statuses ${responses.map((r) => r.status).join(',')}`);
    assert.ok(responses.indexOf(won[0]!) >= 12, 'a bound request won');
    for (const r of responses) if (r !== won[0]) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
    const tokens = (await won[0]!.json()) as Tokens;
    assert.ok(tokens.id_token);
    assert.notEqual(await codeUsedAt(t, code), null);
    // The other bound racers were reuses: every grant of the user for the client ended, the winner's tokens with it.
    assert.equal(await accessTokenWorks(t, tokens.access_token), false, 'the winner\'s access token survived the reuse');
    assert.notEqual((await refresh(c, tokens.refresh_token)).status, 200, 'the winner\'s refresh token survived the reuse');
  });

  test('requests that do not match a code (another client, verifier, redirect URI, an expired moment) racing each other leave it unused and not reused', { timeout: 60_000 }, async () => {
    const { c, code, fields } = await freshCode(t, {}, OPENID);
    const wrong = [...await unboundRequests(c, fields), (({ code_verifier: _, ...rest }) => rest)(fields)];
    const responses = await Promise.all(Array.from({ length: 16 }, (_, i) => tokenRequest(t, wrong[i % 4]!)));
    for (const r of responses) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
    assert.equal(await codeUsedAt(t, code), null, 'the code stays unused');
    const right = await tokenRequest(t, fields);
    assert.equal(right.status, 200);
    assert.equal(await accessTokenWorks(t, ((await right.json()) as Tokens).access_token), true, 'not ended as a reuse');
  });

  test('a code at the exact moment it expires is refused and left unused, not counted as reuse; one that expires while its id_token is signed is redeemed at most once', { timeout: 30_000 }, async (ctx) => {
    const { code, fields } = await freshCode(t, {}, OPENID);
    const stored = (await t.deps.stores.codes.find(hashSecret(code)))!;
    const shift = stored.expiresAt - t.clock.now();
    t.clock.advance(shift);
    try {
      const expired = await Promise.all(Array.from({ length: 4 }, () => tokenRequest(t, fields)));
      for (const r of expired) assert.match((await errorShaped(r, 400)).error_description ?? '', /expired/);
      assert.equal(await codeUsedAt(t, code), null, 'an expired code stays unused');
    } finally {
      t.clock.advance(-shift);
    }
    // Unexpired when read; the clock passes its expiry while the id_token is signed.
    const late = await freshCode(t, {}, OPENID);
    const lateCode = (await t.deps.stores.codes.find(hashSecret(late.code)))!;
    const lateShift = lateCode.expiresAt - t.clock.now() + 1;
    let response: Response;
    try {
      response = await whileSigning(t, async () => { t.clock.advance(lateShift); }, () => tokenRequest(t, late.fields));
    } finally {
      t.clock.advance(-lateShift);
    }
    ctx.diagnostic(`expiring while signed: ${response.status}`);
    if (response.status === 200) {
      // Decided at the request's time: redeemed, once.
      assert.equal(await accessTokenWorks(t, ((await response.json()) as Tokens).access_token), true);
      assert.notEqual(await codeUsedAt(t, late.code), null);
    } else {
      await errorShaped(response, 400);
      assert.equal(await codeUsedAt(t, late.code), null, 'refused as expired, yet used');
      assert.equal(await tokensUnder(t, lateCode.grantId), 0);
    }
  });

  for (const [what, end] of [
    ['consent withdrawn', async (user: { id: number }, c: TestClient) => { await withdrawConsent(t.deps, user.id, c.client.clientId); }],
    ['the account suspended', async (user: { id: number }) => { await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended'); }],
    ['the account deleted', async (user: { id: number }) => {
      const found = (await t.deps.stores.users.findById(user.id))!;
      const deleted = await deleteAccount(t.deps, found, { password: PASSWORD, code: '' }, { address: '127.0.0.1', deviceCookie: undefined });
      assert.equal(deleted.ok, true);
    }],
    ['the account suspended then reactivated', async (user: { id: number }) => {
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
      await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'active');
    }],
    ['the client deactivated', async (_user: { id: number }, c: TestClient) => { await deactivateClient(t.deps.stores, t.deps.clock, c.client.clientId); }],
  ] as const) {
    test(`${what} while the id_token is signed: no live token, an RFC 6749 5.2 refusal`, { timeout: 30_000 }, async (ctx) => {
      const { c, user, code, fields } = await freshCode(t, {}, OPENID);
      const grantId = await grantOfCode(t, code);
      const response = await whileSigning(t, () => end(user, c), () => tokenRequest(t, fields));
      const body = await errorShaped(response);
      ctx.diagnostic(`${response.status} ${JSON.stringify(body)}`);
      assert.ok(response.status === 400 || response.status === 401, `status ${response.status} ${JSON.stringify(body)}`);
      assert.ok(body.error === 'invalid_grant' || body.error === 'invalid_client', body.error);
      assert.equal(await tokensUnder(t, grantId), 0, 'no token stored under the grant');
    });
  }

  test('a grant revoked (its family ended) while the id_token is signed: the code stays used, no tokens', { timeout: 30_000 }, async () => {
    const { code, fields } = await freshCode(t, {}, OPENID);
    const grantId = await grantOfCode(t, code);
    const response = await whileSigning(t, async () => { await revokeGrant(t.deps.stores, grantId, 'refresh_reuse', t.clock.now()); }, () => tokenRequest(t, fields));
    assert.equal((await errorShaped(response, 400)).error, 'invalid_grant');
    assert.notEqual(await codeUsedAt(t, code), null);
    assert.equal(await tokensUnder(t, grantId), 0);
  });

  test('redemptions racing consent withdrawal, not hooked: once it has committed no token of theirs works', { timeout: 60_000 }, async (ctx) => {
    // The withdrawal starts later each round, so that on SQLite it lands before, among and after the redemptions' groups.
    for (let round = 0; round < 8; round++) {
      const { c, user, fields } = await freshCode(t, {}, OPENID);
      const racers = Array.from({ length: 6 }, (_, i) => sleep(i).then(() => tokenRequest(t, fields)));
      const withdrawn = sleep(round * 2).then(() => withdrawConsent(t.deps, user.id, c.client.clientId));
      const responses = await Promise.all(racers);
      await withdrawn;
      ctx.diagnostic(`round ${round}: statuses ${responses.map((r) => r.status).join(',')}`);
      assert.ok(responses.filter((r) => r.status === 200).length <= 1);
      for (const r of responses) {
        if (r.status !== 200) { assert.equal((await errorShaped(r, 400)).error, 'invalid_grant'); continue; }
        const tokens = (await r.json()) as Tokens;
        assert.equal(await accessTokenWorks(t, tokens.access_token), false, `round ${round}: an access token outlived the withdrawal`);
        assert.notEqual((await refresh(c, tokens.refresh_token)).status, 200, `round ${round}: a refresh token outlived the withdrawal`);
      }
    }
  });

  test('a code presented again while its first redemption signs the id_token: one winner, and the reuse ends its tokens', { timeout: 30_000 }, async (ctx) => {
    const { c, code, fields } = await freshCode(t, {}, OPENID);
    let second: Response | undefined;
    let third: Response | undefined;
    const first = await whileSigning(t, async () => {
      // Read after the first read it: it redeems the code first.
      second = await tokenRequest(t, fields);
      // Now a reuse, while the first has yet to write.
      third = await tokenRequest(t, fields);
    }, () => tokenRequest(t, fields));
    const all = [first, second!, third!];
    const statuses = all.map((r) => r.status);
    ctx.diagnostic(`first, second, third: ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses ${statuses.join(',')}`);
    assert.equal(second!.status, 200, 'the request that wrote first won');
    for (const r of [first, third!]) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
    const tokens = (await second!.json()) as Tokens;
    assert.notEqual(await codeUsedAt(t, code), null);
    assert.equal(await accessTokenWorks(t, tokens.access_token), false, 'the winner\'s access token outlived the reuse');
    assert.notEqual((await refresh(c, tokens.refresh_token)).status, 200, 'the winner\'s refresh token outlived the reuse');
  });

  test('a signature that fails leaves the code unused: a 5xx in RFC 6749 5.2 shape, then the code redeems and is not counted as reuse', { timeout: 30_000 }, async (ctx) => {
    const { code, fields } = await freshCode(t, {}, OPENID);
    const response = await whileSigning(t, async () => { throw new Error('the signing key could not be read'); }, () => tokenRequest(t, fields));
    const body = await errorShaped(response);
    ctx.diagnostic(`${response.status} ${JSON.stringify(body)}`);
    assert.ok(response.status >= 500, `status ${response.status}`);
    assert.equal(await codeUsedAt(t, code), null);
    const again = await tokenRequest(t, fields);
    assert.equal(again.status, 200);
    assert.equal(await accessTokenWorks(t, ((await again.json()) as Tokens).access_token), true);
  });

  test('a request that does not match a code whose grant was revoked leaves the code unused (the refusal\'s consuming write matches only the bound request)', { timeout: 30_000 }, async () => {
    const { code, fields } = await freshCode(t, {}, OPENID);
    const grantId = await grantOfCode(t, code);
    await revokeGrant(t.deps.stores, grantId, 'refresh_reuse', t.clock.now());
    const wrong = await Promise.all([
      tokenRequest(t, { ...fields, code_verifier: pkcePair().verifier }),
      tokenRequest(t, { ...fields, redirect_uri: 'https://app.example/elsewhere' }),
    ]);
    for (const r of wrong) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
    assert.equal(await codeUsedAt(t, code), null, 'a mismatched request used the code');
    assert.equal((await errorShaped(await tokenRequest(t, fields), 400)).error, 'invalid_grant');
    assert.notEqual(await codeUsedAt(t, code), null, 'the bound request uses it');
    assert.equal(await tokensUnder(t, grantId), 0);
  });

  test('a DPoP-bound code (dpop_jkt) raced by proofs of other keys: the bound key wins, the others are refused and do not end it', { timeout: 60_000 }, async (ctx) => {
    const key = await dpopKey();
    const others: DpopKey[] = await Promise.all(Array.from({ length: 3 }, () => dpopKey()));
    const { c, code, fields } = await freshCode(t, {}, { ...OPENID, extra: { dpop_jkt: key.jkt } });
    const htu = `${t.baseUrl}/api/oauth/token`;
    const asked = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu, nowMs: t.clock.now() }) });
    const nonce = asked.status === 400 ? asked.headers.get('dpop-nonce') ?? undefined : undefined;
    assert.equal(await codeUsedAt(t, code), null);
    const proof = (k: DpopKey) => dpopProof(k, { htu, nowMs: t.clock.now(), ...(nonce ? { nonce } : {}) });
    const wrongKeys = await Promise.all(Array.from({ length: 9 }, async (_, i) => ({ dpop: await proof(others[i % 3]!) })));
    const noProof = Array.from({ length: 3 }, () => ({}));
    const rightProof = { dpop: await proof(key) };
    const headers = [...wrongKeys, ...noProof, rightProof];
    const responses = await Promise.all(headers.map((h) => tokenRequest(t, fields, h)));
    ctx.diagnostic(`nonce asked: ${asked.status}; statuses ${responses.map((r) => r.status).join(',')}`);
    assert.deepEqual(responses.map((r) => r.status), [...headers.slice(0, -1).map(() => 400), 200]);
    for (const r of responses.slice(0, -1)) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
    const tokens = (await responses.at(-1)!.json()) as Tokens;
    assert.equal(tokens.token_type, 'DPoP');
    // Presented again after its use with another key: refused, not a reuse by the bound request.
    const later = await tokenRequest(t, fields, { dpop: await proof(others[0]!) });
    await errorShaped(later, 400);
    const introspected = await fetch(`${t.baseUrl}/api/oauth/introspect`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.access_token, ...clientFields(c) }).toString(),
    });
    assert.equal(((await introspected.json()) as { active: boolean }).active, true, 'the winner was not ended by requests with other keys');
  });

  for (const place of ['last', 'first'] as const) test(`a group commit whose other transaction fails (${place} to arrive): the other codes are redeemed, the failed one stays unused and redeems later`, { timeout: 60_000 }, async (ctx) => {
    const failing = await freshCode(t, {}, OPENID);
    const fine = await Promise.all(Array.from({ length: 5 }, () => freshCode(t, {}, OPENID)));
    const responses = await whileClientsTokensFail(t, database, failing.c.client.clientId, async () => {
      const failed = place === 'first' ? tokenRequest(t, failing.fields) : undefined;
      const others = fine.map((f) => tokenRequest(t, f.fields));
      return Promise.all([...others, failed ?? tokenRequest(t, failing.fields)]);
    });
    ctx.diagnostic(`statuses ${responses.map((r) => r.status).join(',')}`);
    const failed = responses.at(-1)!;
    assert.ok(failed.status >= 500, `the failing one: ${failed.status}`);
    ctx.diagnostic(JSON.stringify(await errorShaped(failed)));
    assert.equal(await codeUsedAt(t, failing.code), null, 'a failure to issue leaves the code unused');
    for (const [i, r] of responses.slice(0, -1).entries()) {
      assert.equal(r.status, 200, `code ${i}: ${await r.clone().text()}`);
      assert.equal(await accessTokenWorks(t, ((await r.json()) as Tokens).access_token), true);
    }
    const again = await tokenRequest(t, failing.fields);
    assert.equal(again.status, 200, 'the failed redemption did not use the code');
    assert.equal(await accessTokenWorks(t, ((await again.json()) as Tokens).access_token), true, 'and was not counted as a reuse');
  });

  test('the refresh token obtained right after a redemption is usable exactly once', { timeout: 30_000 }, async (ctx) => {
    const { c, fields } = await freshCode(t, {}, OPENID);
    const redeemed = await tokenRequest(t, fields);
    assert.equal(redeemed.status, 200);
    const tokens = (await redeemed.json()) as Tokens;
    const responses = await Promise.all(Array.from({ length: 10 }, () => refresh(c, tokens.refresh_token)));
    const statuses = responses.map((r) => r.status);
    ctx.diagnostic(`statuses ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses ${statuses.join(',')}`);
    for (const r of responses) if (r.status !== 200) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
  });

  // SQLite alone: another process's connection holds the write lock with its change uncommitted
  // while the redemption reads, signs and then waits for the lock (attack78 did this on PostgreSQL).
  if (database.name === 'sqlite') {
    for (const [what, write] of [
      ['the grant revoked', "update grants set revoked_at = 1, revoked_reason = 'consent_withdrawn' where user_id = ? and client_id = ?"],
      ['the user suspended (status alone, the grant left)', "update users set status = 'suspended' where id = ? and ? is not null"],
    ] as const) {
      test(`a redemption racing ${what} in another process's uncommitted transaction leaves no token`, { timeout: 30_000 }, async (ctx) => {
        const { c, user, code, fields } = await freshCode(t, {}, OPENID);
        const grantId = await grantOfCode(t, code);
        const outside = new SQLite((database.target as { path: string }).path);
        try {
          outside.pragma('busy_timeout = 5000');
          outside.exec('begin immediate');
          outside.prepare(write).run(user.id, c.client.clientId);
          const redemption = tokenRequest(t, fields);
          await sleep(300);
          outside.exec('commit');
          const response = await redemption;
          const body = await errorShaped(response);
          ctx.diagnostic(`${response.status} ${JSON.stringify(body)}`);
          assert.equal(response.status, 400);
          assert.equal(body.error, 'invalid_grant');
          assert.equal(await tokensUnder(t, grantId), 0, 'a token was stored under the ended grant');
        } finally {
          if (outside.inTransaction) outside.exec('rollback');
          outside.close();
        }
      });
    }

    test('a redemption whose write waits past busy_timeout for another process\'s lock is refused as a 503 and leaves the code unused', { timeout: 30_000 }, async (ctx) => {
      const { code, fields } = await freshCode(t, {}, OPENID);
      const outside = new SQLite((database.target as { path: string }).path);
      let response: Response;
      try {
        outside.exec('begin immediate');
        response = await tokenRequest(t, fields);
      } finally {
        if (outside.inTransaction) outside.exec('rollback');
        outside.close();
      }
      const body = await errorShaped(response);
      ctx.diagnostic(`${response.status} ${JSON.stringify(body)}`);
      assert.ok(response.status >= 500, `status ${response.status}`);
      assert.equal(await codeUsedAt(t, code), null, 'the code stays unused');
      const again = await tokenRequest(t, fields);
      assert.equal(again.status, 200, 'redeemed once the lock is gone, not counted as a reuse');
      assert.equal(await accessTokenWorks(t, ((await again.json()) as Tokens).access_token), true);
    });
  }

  describe('two instances on one database', () => {
    let apps: [TestApp, TestApp];
    startAppsForSuite(database, 2, {}, (started) => { apps = started; });

    test('redemptions of one code spread over two instances: exactly one gets tokens, and the reuse ends them', { timeout: 60_000 }, async (ctx) => {
      for (let round = 0; round < 3; round++) {
        const { c, code, fields } = await freshCode(apps[0], {}, OPENID);
        const other = await newClient(apps[0]);
        const requests = Array.from({ length: 12 }, (_, i) => {
          const on = apps[i % 2]!;
          const f = i % 4 === 3 ? { ...fields, code_verifier: pkcePair().verifier } : i % 4 === 2 ? { ...fields, ...clientFields(other) } : fields;
          return tokenRequest(on, f);
        });
        const responses = await Promise.all(requests);
        const statuses = responses.map((r) => r.status);
        ctx.diagnostic(`round ${round}: statuses ${statuses.join(',')}`);
        assert.equal(statuses.filter((s) => s === 200).length, 1, `round ${round}: statuses ${statuses.join(',')}`);
        for (const r of responses) if (r.status !== 200) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
        const tokens = (await responses.find((r) => r.status === 200)!.json()) as Tokens;
        assert.notEqual(await codeUsedAt(apps[1], code), null);
        for (const on of apps) assert.equal(await accessTokenWorks(on, tokens.access_token), false, `round ${round}: the winner outlived the reuse`);
        const refreshed = await tokenRequest(apps[1], { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
        assert.notEqual(refreshed.status, 200);
      }
    });

    test('a code redeemed and presented again on one instance while the other instance\'s redemption signs: one winner, its tokens ended', { timeout: 30_000 }, async (ctx) => {
      const { c, fields } = await freshCode(apps[0], {}, OPENID);
      let second: Response | undefined;
      let third: Response | undefined;
      const first = await whileSigning(apps[0], async () => {
        second = await tokenRequest(apps[1], fields);
        third = await tokenRequest(apps[1], fields);
      }, () => tokenRequest(apps[0], fields));
      const statuses = [first, second!, third!].map((r) => r.status);
      ctx.diagnostic(`first (instance 0), second and third (instance 1): ${statuses.join(',')}`);
      assert.deepEqual(statuses, [400, 200, 400]);
      for (const r of [first, third!]) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
      const tokens = (await second!.json()) as Tokens;
      for (const on of apps) assert.equal(await accessTokenWorks(on, tokens.access_token), false, 'the winner outlived the reuse');
      assert.notEqual((await tokenRequest(apps[0], { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) })).status, 200);
    });

    test('a redemption on one instance while the other withdraws consent during its signature: no live token', { timeout: 30_000 }, async () => {
      const { c, user, code, fields } = await freshCode(apps[0], {}, OPENID);
      const grantId = await grantOfCode(apps[0], code);
      const response = await whileSigning(apps[0], async () => { await withdrawConsent(apps[1].deps, user.id, c.client.clientId); }, () => tokenRequest(apps[0], fields));
      assert.equal((await errorShaped(response, 400)).error, 'invalid_grant');
      assert.equal(await tokensUnder(apps[0], grantId), 0);
    });
  });
});
