/**
 * attack129: decision 70 (commit f92d647b) wrote the grant's liveness once, `grantIsLive` in
 * src/storage/repositories/oauth/grants.ts, a scalar subquery by the grant's key that every
 * consuming write uses: a code's redemption (`consumeIssuing` on PostgreSQL,
 * `consumeCodeSayingLive` on SQLite) and a refresh rotation (`consumeIfLive`). These tests attack
 * that condition over real HTTP on both databases: the key must be the row's own grant among a
 * member's many (same app, other apps, other members, some revoked); a code's reuse racing a new
 * authorization of the same member and app; codes without PKCE; two hundred racers; the member or
 * grant changed between a rotation's read and its write (`whileSigning`), including the changes
 * only the write's condition can see (a grant revoked without its tokens, a status changed alone);
 * a grant id that names no grant; a user row changed in other columns; hostile token requests.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { deleteAccount } from '../../src/core/accounts/account-deletion.js';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { revokeGrant } from '../../src/core/oauth/tokens/revocation.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  type Browser, PASSWORD, type TestClient, type Tokens, clientFields, codeExchangeFields, newClient, obtainCode, pkcePair, signedInBrowser,
  startOAuthApp, tokenRequest, whileSigning,
  accessTokenWorks, codeFor, codeUsedAt, errorShaped, grantOfCode, tokensUnder,
} from '../oauth/helpers.js';

const OPENID = { scope: 'openid profile:read' };

interface Authorized { c: TestClient; code: string; grantId: number; fields: Record<string, string> }

/** One more authorization of `c` by the member signed in on `browser`: a new grant and its unredeemed code. */
async function authorize(t: TestApp, browser: Browser, c: TestClient): Promise<Authorized> {
  const { code, fields } = await codeFor(browser, c, OPENID);
  return { c, code, grantId: await grantOfCode(t, code), fields };
}

/** An authorization redeemed: its grant and tokens. */
async function redeemed(t: TestApp, browser: Browser, c: TestClient): Promise<{ c: TestClient; grantId: number; tokens: Tokens }> {
  const a = await authorize(t, browser, c);
  const response = await tokenRequest(t, a.fields);
  assert.equal(response.status, 200, await response.clone().text());
  return { c, grantId: a.grantId, tokens: (await response.json()) as Tokens };
}

/** The grant alone marked revoked, its tokens left as they are: what a code's reuse and a suspension do (`revokeForUserAndClient`, `revokeForUser`). */
const revokeGrantRowOnly = (t: TestApp, grantId: number) => t.deps.stores.grants.revoke(grantId, 'revoked_by_client', t.clock.now());

forEachDatabase('attack129 the grant\'s liveness read by its key', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  const refresh = (c: TestClient, token: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, ...clientFields(c) });

  /** A member with many grants: of app A pending codes and redeemed ones, three revoked; of app B the same; another member's of app A. */
  async function crowdedMember() {
    const [a, b] = [await newClient(t), await newClient(t)];
    const member = await signedInBrowser(t);
    const other = await signedInBrowser(t);
    const pending: Authorized[] = [];
    const held: Array<{ c: TestClient; grantId: number; tokens: Tokens }> = [];
    const revoked: Authorized[] = [];
    // Interleaved, so that the member's grants of either app are not one run of ids.
    for (let i = 0; i < 10; i++) {
      pending.push(await authorize(t, member.browser, a));
      if (i % 2 === 0) held.push(await redeemed(t, member.browser, a));
      if (i % 3 === 0) revoked.push(await authorize(t, member.browser, a));
      if (i % 2 === 1) pending.push(await authorize(t, member.browser, b));
      if (i % 3 === 1) held.push(await redeemed(t, member.browser, b));
      if (i % 4 === 0) pending.push(await authorize(t, other.browser, a));
      if (i % 5 === 0) held.push(await redeemed(t, other.browser, a));
    }
    for (const r of revoked) assert.equal(await revokeGrantRowOnly(t, r.grantId), true);
    return { a, b, member, other, pending, held, revoked };
  }

  test('the key is the code\'s own grant: of a member\'s many grants, the one revoked while its code is redeemed refuses it; every other code and refresh token works', { timeout: 120_000 }, async (ctx) => {
    const { pending, held, revoked } = await crowdedMember();
    // The target in the middle of the member's grants of app A, with live ones of the same member and app before and after it.
    const target = pending[4]!;
    assert.equal(target.c, pending[0]!.c);
    const others = pending.filter((p) => p !== target);
    let racing: Promise<Response[]> | undefined;
    let rotating: Promise<Response[]> | undefined;
    const response = await whileSigning(t, async () => {
      await revokeGrant(t.deps.stores, target.grantId, 'revoked_by_client', t.clock.now());
      racing = Promise.all(others.map((o) => tokenRequest(t, o.fields)));
      rotating = Promise.all(held.map((h) => refresh(h.c, h.tokens.refresh_token)));
    }, () => tokenRequest(t, target.fields));
    const body = await errorShaped(response, 400);
    assert.equal(body.error, 'invalid_grant');
    ctx.diagnostic(`target: ${response.status} ${JSON.stringify(body)}`);
    assert.notEqual(await codeUsedAt(t, target.code), null, 'the target code stays used');
    assert.equal(await tokensUnder(t, target.grantId), 0, 'no token under the revoked grant');
    const [redemptions, rotations] = [await racing!, await rotating!];
    ctx.diagnostic(`others: ${redemptions.map((r) => r.status).join(',')}; rotations: ${rotations.map((r) => r.status).join(',')}`);
    for (const [i, r] of redemptions.entries()) {
      assert.equal(r.status, 200, `code ${i} of grant ${others[i]!.grantId}: ${await r.clone().text()}`);
      assert.equal(await accessTokenWorks(t, ((await r.json()) as Tokens).access_token), true, `code ${i}'s access token`);
    }
    for (const [i, r] of rotations.entries()) {
      assert.equal(r.status, 200, `refresh ${i} of grant ${held[i]!.grantId}: ${await r.clone().text()}`);
      const tokens = (await r.json()) as Tokens;
      assert.equal(await accessTokenWorks(t, tokens.access_token), true, `refresh ${i}'s access token`);
    }
    // The grants revoked before: their codes are refused (by the read), and leave nothing.
    for (const r of revoked) {
      assert.equal((await errorShaped(await tokenRequest(t, r.fields), 400)).error, 'invalid_grant');
      assert.equal(await tokensUnder(t, r.grantId), 0);
    }
  });

  test('the key is the refresh token\'s own grant: of a member\'s many grants, the one revoked (its tokens left) while its token rotates refuses it; every other rotation and code works', { timeout: 120_000 }, async (ctx) => {
    const { pending, held } = await crowdedMember();
    // The member's grants of app A that were redeemed; the target among them, not the first nor the last.
    const ofA = held.filter((h) => h.c === held[0]!.c);
    const target = ofA[2]!;
    const others = held.filter((h) => h !== target);
    const before = await tokensUnder(t, target.grantId);
    let racing: Promise<Response[]> | undefined;
    let rotating: Promise<Response[]> | undefined;
    const response = await whileSigning(t, async () => {
      // Only the write's condition can see this: the token itself is neither used nor revoked.
      assert.equal(await revokeGrantRowOnly(t, target.grantId), true);
      racing = Promise.all(pending.map((o) => tokenRequest(t, o.fields)));
      rotating = Promise.all(others.map((h) => refresh(h.c, h.tokens.refresh_token)));
    }, () => refresh(target.c, target.tokens.refresh_token));
    const body = await errorShaped(response, 400);
    ctx.diagnostic(`target: ${response.status} ${JSON.stringify(body)}`);
    assert.equal(body.error, 'invalid_grant');
    assert.equal(await tokensUnder(t, target.grantId), before, 'no token stored under the revoked grant');
    assert.equal((await t.deps.stores.tokens.findRefresh(hashSecret(target.tokens.refresh_token)))?.usedAt, null, 'the refused rotation took nothing');
    const [redemptions, rotations] = [await racing!, await rotating!];
    ctx.diagnostic(`codes: ${redemptions.map((r) => r.status).join(',')}; other rotations: ${rotations.map((r) => r.status).join(',')}`);
    for (const [i, r] of rotations.entries()) {
      assert.equal(r.status, 200, `refresh ${i} of grant ${others[i]!.grantId}: ${await r.clone().text()}`);
      const tokens = (await r.json()) as Tokens;
      assert.equal(await accessTokenWorks(t, tokens.access_token), true);
      assert.equal((await refresh(others[i]!.c, tokens.refresh_token)).status, 200, `refresh ${i}'s successor rotates`);
    }
    for (const [i, r] of redemptions.entries()) assert.equal(r.status, 200, `code ${i}: ${await r.clone().text()}`);
  });

  test('a code presented again while a new authorization of the same member and app is redeemed: the reuse ends the new grant, whose write then stores nothing', { timeout: 60_000 }, async (ctx) => {
    const a = await newClient(t);
    const b = await newClient(t);
    const member = await signedInBrowser(t);
    const other = await signedInBrowser(t);
    const old = await authorize(t, member.browser, a);
    assert.equal((await tokenRequest(t, old.fields)).status, 200);
    const ofB = await redeemed(t, member.browser, b);
    const othersOfA = await redeemed(t, other.browser, a);
    const fresh = await authorize(t, member.browser, a);
    let reuse: Response | undefined;
    const response = await whileSigning(t, async () => { reuse = await tokenRequest(t, old.fields); }, () => tokenRequest(t, fresh.fields));
    ctx.diagnostic(`reuse ${reuse!.status}; the new authorization's redemption ${response.status}`);
    assert.equal((await errorShaped(reuse!, 400)).error, 'invalid_grant');
    assert.equal((await errorShaped(response, 400)).error, 'invalid_grant');
    assert.notEqual((await t.deps.stores.grants.findById(fresh.grantId))?.revokedAt, null, 'the reuse revoked the grant that existed');
    assert.equal(await tokensUnder(t, fresh.grantId), 0, 'no token under the new grant the reuse ended');
    // The member's other app, and another member's grant of the same app, are not the reuse's.
    assert.equal(await accessTokenWorks(t, ofB.tokens.access_token), true);
    assert.equal((await refresh(ofB.c, ofB.tokens.refresh_token)).status, 200);
    assert.equal(await accessTokenWorks(t, othersOfA.tokens.access_token), true);
    assert.equal((await refresh(othersOfA.c, othersOfA.tokens.refresh_token)).status, 200);
    // An authorization after the reuse is the member's new grant: it works.
    const after = await redeemed(t, member.browser, a);
    assert.equal(await accessTokenWorks(t, after.tokens.access_token), true);
    assert.equal((await refresh(a, after.tokens.refresh_token)).status, 200);
  });

  test('a code presented again while a refresh token of the same member and app rotates: the reuse ends that grant, the rotation stores nothing', { timeout: 60_000 }, async (ctx) => {
    const a = await newClient(t);
    const member = await signedInBrowser(t);
    const old = await authorize(t, member.browser, a);
    assert.equal((await tokenRequest(t, old.fields)).status, 200);
    const newer = await redeemed(t, member.browser, a);
    const before = await tokensUnder(t, newer.grantId);
    let reuse: Response | undefined;
    const response = await whileSigning(t, async () => { reuse = await tokenRequest(t, old.fields); }, () => refresh(a, newer.tokens.refresh_token));
    ctx.diagnostic(`reuse ${reuse!.status}; the rotation ${response.status}`);
    assert.equal((await errorShaped(reuse!, 400)).error, 'invalid_grant');
    assert.equal((await errorShaped(response, 400)).error, 'invalid_grant');
    assert.equal(await tokensUnder(t, newer.grantId), before, 'the rotation stored a pair under a grant the reuse ended');
    assert.equal(await accessTokenWorks(t, newer.tokens.access_token), false);
  });

  test('reuses racing new authorizations of the same member and app: a new grant the reuse did not revoke works, one it revoked leaves no working token', { timeout: 120_000 }, async (ctx) => {
    const a = await newClient(t);
    const b = await newClient(t);
    const member = await signedInBrowser(t);
    const ofB = await redeemed(t, member.browser, b);
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round++) {
      const old = await authorize(t, member.browser, a);
      assert.equal((await tokenRequest(t, old.fields)).status, 200);
      // The new authorization and its redemption, started a little later each round than the reuses.
      const fresh = sleep(round * 3).then(async () => {
        const f = await authorize(t, member.browser, a);
        return { f, response: await tokenRequest(t, f.fields) };
      });
      const reuses = Array.from({ length: 3 }, (_, i) => sleep(i * 2).then(() => tokenRequest(t, old.fields)));
      const [{ f, response }, ...reused] = await Promise.all([fresh, ...reuses]);
      for (const r of reused) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
      const revokedAt = (await t.deps.stores.grants.findById(f.grantId))!.revokedAt;
      outcomes.push(`${response.status}/${revokedAt === null ? 'live' : 'revoked'}`);
      if (revokedAt === null) {
        assert.equal(response.status, 200, `round ${round}: a grant the reuse left alone was refused: ${await response.clone().text()}`);
        const tokens = (await response.json()) as Tokens;
        assert.equal(await accessTokenWorks(t, tokens.access_token), true);
        assert.equal((await refresh(a, tokens.refresh_token)).status, 200);
      } else if (response.status === 200) {
        // Issued before the reuse revoked it: the tokens died with it.
        const tokens = (await response.json()) as Tokens;
        assert.equal(await accessTokenWorks(t, tokens.access_token), false, `round ${round}: an access token outlived the reuse`);
        assert.notEqual((await refresh(a, tokens.refresh_token)).status, 200);
      } else {
        assert.equal((await errorShaped(response, 400)).error, 'invalid_grant');
        assert.equal(await tokensUnder(t, f.grantId), 0, `round ${round}: a refused redemption stored tokens`);
      }
    }
    ctx.diagnostic(`new authorization's answer / its grant: ${outcomes.join(' ')}`);
    assert.equal(await accessTokenWorks(t, ofB.tokens.access_token), true, 'the member\'s other app is not the reuse\'s');
  });

  test('codes of a confidential client without PKCE raced by many requests: exactly one winner, unbound racers refused without counting as reuse', { timeout: 60_000 }, async (ctx) => {
    for (let round = 0; round < 3; round++) {
      const c = await newClient(t, { type: 'confidential' });
      const { browser } = await signedInBrowser(t);
      const code = await obtainCode(browser, c, { ...OPENID, pkce: null, state: `s${round}`, extra: { nonce: `n${round}` } });
      assert.equal((await t.deps.stores.codes.find(hashSecret(code)))?.codeChallenge, null, 'a code without PKCE');
      const fields = codeExchangeFields(c, code, null);
      const unbound = { ...fields, code_verifier: pkcePair().verifier };
      // First only unbound requests: none consumes it.
      for (const r of await Promise.all(Array.from({ length: 8 }, () => tokenRequest(t, unbound)))) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
      assert.equal(await codeUsedAt(t, code), null, 'a request with a verifier consumed a code without a challenge');
      const requests = Array.from({ length: 24 }, (_, i) => (i % 3 === 0 ? unbound : fields));
      const responses = await Promise.all(requests.map((f) => tokenRequest(t, f)));
      const statuses = responses.map((r) => r.status);
      ctx.diagnostic(`round ${round}: ${statuses.join(',')}`);
      assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(','));
      const winner = responses.findIndex((r) => r.status === 200);
      assert.notEqual(winner % 3, 0, 'an unbound request won');
      for (const r of responses) if (r.status !== 200) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
      const tokens = (await responses[winner]!.json()) as Tokens;
      assert.ok(tokens.id_token);
      // The bound losers presented a used code: a reuse, which ends the winner's tokens.
      assert.equal(await accessTokenWorks(t, tokens.access_token), false, 'the winner outlived the reuse');
    }
  });

  test('two hundred racers on one code over HTTP: exactly one 200, the others invalid_grant', { timeout: 120_000 }, async (ctx) => {
    const { c, fields } = await (async () => {
      const cl = await newClient(t);
      const { browser } = await signedInBrowser(t);
      const a = await authorize(t, browser, cl);
      return { c: cl, fields: a.fields, code: a.code };
    })();
    const responses = await Promise.all(Array.from({ length: 200 }, () => tokenRequest(t, fields)));
    const statuses = responses.map((r) => r.status);
    const counts = statuses.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {});
    ctx.diagnostic(`statuses ${JSON.stringify(counts)}`);
    assert.deepEqual(counts, { 200: 1, 400: 199 });
    for (const r of responses) if (r.status !== 200) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
    const tokens = (await responses.find((r) => r.status === 200)!.json()) as Tokens;
    assert.equal(await accessTokenWorks(t, tokens.access_token), false, 'the winner outlived the reuse');
    assert.notEqual((await refresh(c, tokens.refresh_token)).status, 200);
  });

  test('two hundred racers on one refresh token over HTTP: exactly one 200, the others invalid_grant', { timeout: 120_000 }, async (ctx) => {
    const cl = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const { tokens } = await redeemed(t, browser, cl);
    const responses = await Promise.all(Array.from({ length: 200 }, () => refresh(cl, tokens.refresh_token)));
    const statuses = responses.map((r) => r.status);
    const counts = statuses.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {});
    ctx.diagnostic(`statuses ${JSON.stringify(counts)}`);
    assert.deepEqual(counts, { 200: 1, 400: 199 });
    for (const r of responses) if (r.status !== 200) assert.equal((await errorShaped(r, 400)).error, 'invalid_grant');
  });

  // Between a rotation's read and its write (attack128 did these for a redemption).
  for (const [what, end] of [
    ['the member suspended then reactivated', async (userId: number) => {
      await setAccountStatus(t.deps.stores, t.deps.clock, userId, 'suspended');
      await setAccountStatus(t.deps.stores, t.deps.clock, userId, 'active');
    }],
    ['the member deleted', async (userId: number) => {
      const found = (await t.deps.stores.users.findById(userId))!;
      const deleted = await deleteAccount(t.deps, found, { password: PASSWORD, code: '' }, { address: '127.0.0.1', deviceCookie: undefined });
      assert.equal(deleted.ok, true);
    }],
    ['the grant revoked (its family ended)', async (_userId: number, grantId: number) => {
      await revokeGrant(t.deps.stores, grantId, 'revoked_by_client', t.clock.now());
    }],
    ['the grant alone revoked, its tokens left', async (_userId: number, grantId: number) => { await revokeGrantRowOnly(t, grantId); }],
    ...(['suspended', 'banned', 'deleted'] as const).map((status) => [
      `the member's status alone set to ${status}, the grant left`,
      async (userId: number) => { await t.deps.database.db.updateTable('users').set({ status }).where('id', '=', userId).execute(); },
    ] as const),
  ] as const) {
    test(`a rotation with ${what} between its read and its write: refused in RFC 6749 5.2's shape, no token stored`, { timeout: 30_000 }, async (ctx) => {
      const cl = await newClient(t);
      const { browser, user } = await signedInBrowser(t);
      const { grantId, tokens } = await redeemed(t, browser, cl);
      const stored = await tokensUnder(t, grantId);
      const response = await whileSigning(t, () => end(user.id, grantId), () => refresh(cl, tokens.refresh_token));
      const body = await errorShaped(response);
      ctx.diagnostic(`${response.status} ${JSON.stringify(body)}`);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(body.error, 'invalid_grant');
      assert.ok(await tokensUnder(t, grantId) <= stored, 'a token was stored under the ended grant');
      assert.equal(await accessTokenWorks(t, tokens.access_token), false);
    });
  }

  // A redemption, for the changes only the write's condition sees (attack128 covered the others, and these on SQLite from another process only).
  for (const status of ['suspended', 'banned', 'deleted'] as const) {
    test(`a redemption with the member's status alone set to ${status} between its read and its write: refused, the code used, no token`, { timeout: 30_000 }, async (ctx) => {
      const cl = await newClient(t);
      const { browser, user } = await signedInBrowser(t);
      const a = await authorize(t, browser, cl);
      const response = await whileSigning(t, async () => {
        await t.deps.database.db.updateTable('users').set({ status }).where('id', '=', user.id).execute();
      }, () => tokenRequest(t, a.fields));
      const body = await errorShaped(response);
      ctx.diagnostic(`${response.status} ${JSON.stringify(body)}`);
      assert.equal(response.status, 400);
      assert.equal(body.error, 'invalid_grant');
      assert.notEqual(await codeUsedAt(t, a.code), null);
      assert.equal(await tokensUnder(t, a.grantId), 0);
    });
  }

  test('a redemption and a rotation whose grant id names no grant by the write: refused, nothing stored under it', { timeout: 30_000 }, async (ctx) => {
    const { db } = t.deps.database;
    const cl = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const a = await authorize(t, browser, cl);
    const held = await redeemed(t, browser, cl);
    const missing = 987_654_321;
    // The foreign keys set aside for the moment (SQLite: per connection; PostgreSQL: the tables' triggers, in this suite's schema).
    const dangle = async (table: 'authorization_codes' | 'refresh_tokens', column: 'code_hash' | 'token_hash', key: string) => {
      if (database.name === 'sqlite') {
        await sql`pragma foreign_keys = off`.execute(db);
        await sql`update ${sql.table(table)} set grant_id = ${missing} where ${sql.ref(column)} = ${key}`.execute(db);
        await sql`pragma foreign_keys = on`.execute(db);
      } else {
        await sql`alter table ${sql.table(table)} disable trigger all`.execute(db);
        await sql`update ${sql.table(table)} set grant_id = ${missing} where ${sql.ref(column)} = ${key}`.execute(db);
        await sql`alter table ${sql.table(table)} enable trigger all`.execute(db);
      }
    };
    const restore = async (table: 'authorization_codes' | 'refresh_tokens', column: 'code_hash' | 'token_hash', key: string, grantId: number) => {
      await sql`update ${sql.table(table)} set grant_id = ${grantId} where ${sql.ref(column)} = ${key}`.execute(db);
    };
    try {
      const redemption = await whileSigning(t, () => dangle('authorization_codes', 'code_hash', hashSecret(a.code)), () => tokenRequest(t, a.fields));
      const rBody = await errorShaped(redemption);
      const rotation = await whileSigning(t, () => dangle('refresh_tokens', 'token_hash', hashSecret(held.tokens.refresh_token)), () => refresh(cl, held.tokens.refresh_token));
      const tBody = await errorShaped(rotation);
      ctx.diagnostic(`redemption ${redemption.status} ${JSON.stringify(rBody)}; rotation ${rotation.status} ${JSON.stringify(tBody)}`);
      assert.equal(redemption.status, 400);
      assert.equal(rBody.error, 'invalid_grant');
      assert.equal(rotation.status, 400);
      assert.equal(tBody.error, 'invalid_grant');
      assert.equal(await tokensUnder(t, a.grantId), 0, 'the refused redemption stored tokens under the grant it read');
      assert.equal(await tokensUnder(t, held.grantId), 1, 'the refused rotation stored tokens under the grant it read (its access token alone is left there)');
      assert.equal(await tokensUnder(t, missing), 1, 'only the dangling refresh token names the missing grant');
      assert.notEqual(await codeUsedAt(t, a.code), null, 'the code consumed, as one whose grant ended');
    } finally {
      await restore('authorization_codes', 'code_hash', hashSecret(a.code), a.grantId);
      await restore('refresh_tokens', 'token_hash', hashSecret(held.tokens.refresh_token), held.grantId);
    }
  });

  test('a member\'s row changed in other columns than its status between the read and the write: the redemption and the rotation go through', { timeout: 30_000 }, async () => {
    const cl = await newClient(t);
    const { browser, user } = await signedInBrowser(t);
    const a = await authorize(t, browser, cl);
    const held = await redeemed(t, browser, cl);
    const change = async () => {
      await t.deps.database.db.updateTable('users').set((eb) => ({
        username: `${user.username}x`, username_key: `${user.username}x`.toLowerCase(), bio: 'changed', level: eb('level', '+', 1), xp: 7, updated_at: t.clock.now() + 1,
      })).where('id', '=', user.id).execute();
    };
    const redemption = await whileSigning(t, change, () => tokenRequest(t, a.fields));
    assert.equal(redemption.status, 200, await redemption.clone().text());
    assert.equal(await accessTokenWorks(t, ((await redemption.json()) as Tokens).access_token), true);
    const rotation = await whileSigning(t, change, () => refresh(cl, held.tokens.refresh_token));
    assert.equal(rotation.status, 200, await rotation.clone().text());
    assert.equal(await accessTokenWorks(t, ((await rotation.json()) as Tokens).access_token), true);
  });

  test('hostile token requests against a code and a refresh token leave both as they were: RFC 6749 5.2 refusals, then the bound requests go through', { timeout: 30_000 }, async (ctx) => {
    const cl = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const a = await authorize(t, browser, cl);
    const held = await redeemed(t, browser, cl);
    const injected = "' or 1=1 --";
    const hostile: Array<Record<string, string> | Array<[string, string]>> = [
      { ...a.fields, code: `${a.code}${injected}` },
      { ...a.fields, code: a.code.replace(/.$/, "'") },
      [...Object.entries(a.fields), ['code', a.code]],
      [...Object.entries(a.fields).filter(([k]) => k !== 'code'), ['code', a.code], ['code', `${a.code.slice(0, -1)}A`]],
      { ...a.fields, redirect_uri: `${cl.redirectUri}'); update grants set revoked_at = null; --` },
      { ...a.fields, code_verifier: `${'a'.repeat(43)}\u0000` },
      { ...a.fields, code_verifier: 'é'.repeat(43) },
      { ...a.fields, client_id: `${cl.client.clientId}' or '1'='1` },
      { grant_type: 'refresh_token', refresh_token: `${held.tokens.refresh_token}${injected}`, ...clientFields(cl) },
      [['grant_type', 'refresh_token'], ['refresh_token', held.tokens.refresh_token], ['refresh_token', held.tokens.refresh_token], ...Object.entries(clientFields(cl))],
      { grant_type: 'refresh_token', refresh_token: held.tokens.refresh_token, ...clientFields(cl), scope: "openid' or 1=1 --" },
    ];
    const responses = await Promise.all(hostile.map((f) => tokenRequest(t, f)));
    ctx.diagnostic(`statuses ${responses.map((r) => r.status).join(',')}`);
    const seen: string[] = [];
    for (const r of responses) {
      const body = await errorShaped(r);
      seen.push(`${r.status} ${body.error}`);
      assert.ok(r.status === 400 || r.status === 401, `${r.status} ${JSON.stringify(body)}`);
    }
    ctx.diagnostic(seen.join('; '));
    // The client_id injection is not this client (invalid_client); nothing was used or ended.
    assert.equal(await codeUsedAt(t, a.code), null, 'a hostile request consumed the code');
    assert.equal((await t.deps.stores.tokens.findRefresh(hashSecret(held.tokens.refresh_token)))?.usedAt, null, 'a hostile request rotated the token');
    // Fields the endpoint does not know are ignored (RFC 6749 3.2), a grant_id naming another, revoked, grant included: the code's own grant is the one used.
    const elsewhere = await authorize(t, browser, cl);
    assert.equal(await revokeGrantRowOnly(t, elsewhere.grantId), true);
    const right = await tokenRequest(t, { ...a.fields, grant_id: String(elsewhere.grantId), user_id: '1' });
    assert.equal(right.status, 200, await right.clone().text());
    assert.equal(await accessTokenWorks(t, ((await right.json()) as Tokens).access_token), true, 'counted as a reuse');
    assert.equal(await tokensUnder(t, a.grantId), 2, 'the pair stored under the code\'s own grant');
    assert.equal(await tokensUnder(t, elsewhere.grantId), 0);
    const rotated = await refresh(cl, held.tokens.refresh_token);
    assert.equal(rotated.status, 200);
    assert.equal(await accessTokenWorks(t, ((await rotated.json()) as Tokens).access_token), true);
  });
});
