/**
 * Bounded tables (issue 7, deliver 5): rows made by the real flow over HTTP, a `TestClock` moved
 * past the audit window, then the janitor. Expired codes and tokens, revoked grants with their
 * tokens, ended sessions and revoked personal tokens are gone; what is still live (or still needed
 * to recognise a replay) stays.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { days } from '../../src/core/time.js';
import { AUDIT_WINDOW_MS, runJanitor } from '../../src/janitor.js';
import {
  type Browser, type TestClient, clientFields, newClient, obtainCode, obtainTokens, pkcePair, signedInBrowser, startOAuthApp, tokenRequest,
} from '../oauth/helpers.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

forEachDatabase('bounded tables', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  async function rows(table: 'authorization_codes' | 'access_tokens' | 'refresh_tokens' | 'grants' | 'sessions' | 'personal_tokens', column: string, value: number | string): Promise<number> {
    const db = t.deps.database.db;
    const row = await db.selectFrom(table).select(db.fn.countAll<number | string>().as('n')).where(column as never, '=', value as never).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async function grantOf(accessToken: string): Promise<number> {
    const { hashSecret } = await import('../../src/core/credentials/formats.js');
    return (await t.deps.stores.tokens.findAccess(hashSecret(accessToken)))!.grantId;
  }

  test('after the janitor, expired and revoked rows past the audit window are gone and live ones stay', async () => {
    const c: TestClient = await newClient(t);
    const { browser, user } = await signedInBrowser(t);
    const revoke = (token: string) => fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, ...clientFields(c) }),
    });

    // Day 0: a revoked grant, a live one, a code never redeemed, an ended session, a revoked personal token.
    const revoked = await obtainTokens(t, browser, c);
    assert.equal((await revoke(revoked.refresh_token)).status, 200);
    const revokedGrant = await grantOf(revoked.access_token);
    const kept = await obtainTokens(t, browser, c);
    const keptGrant = await grantOf(kept.access_token);
    // A second user, so the rotated refresh token below is in its own grant.
    const other: { browser: Browser } = await signedInBrowser(t);
    const rotated = await obtainTokens(t, other.browser, c);
    const rotatedGrant = await grantOf(rotated.access_token);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: rotated.refresh_token, ...clientFields(c) });
    assert.equal(refreshed.status, 200);
    await obtainCode(browser, c, { pkce: pkcePair() });
    const personal = await createPersonalToken(t.deps.stores, t.deps.clock, t.deps.tokenMarks, { userId: user.id, name: 'old', scopes: ['profile:read'], expiresInDays: 7 });
    await t.deps.stores.personalTokens.revoke(personal.record.id, user.id, t.deps.clock.now());
    const sessionsBefore = await rows('sessions', 'user_id', user.id);
    assert.equal(sessionsBefore, 1);
    await t.deps.stores.sessions.endForUser(user.id, t.deps.clock.now());

    // Past the audit window.
    t.clock.advance(AUDIT_WINDOW_MS + days(1));
    const swept = await runJanitor(t.deps);
    assert.ok(swept.authorization_codes! >= 4 && swept.access_tokens! >= 3, JSON.stringify(swept));

    assert.equal(await rows('authorization_codes', 'user_id', user.id), 0, 'expired codes are gone, used or not');
    assert.equal(await rows('grants', 'id', revokedGrant), 0, 'the revoked grant is gone');
    assert.equal(await rows('refresh_tokens', 'grant_id', revokedGrant), 0, 'with its tokens');
    assert.equal(await rows('access_tokens', 'grant_id', keptGrant), 0, 'expired access tokens are gone');
    assert.equal(await rows('refresh_tokens', 'grant_id', keptGrant), 1, 'a live refresh token stays');
    assert.equal(await rows('refresh_tokens', 'grant_id', rotatedGrant), 2, 'a rotated refresh token stays until it expires, to catch its replay');
    assert.equal(await rows('sessions', 'user_id', user.id), 0, 'the ended session is gone');
    assert.equal(await rows('personal_tokens', 'user_id', user.id), 0, 'the revoked personal token is gone');

    // The kept refresh token still works after the sweep, and the rotated one is still caught as reuse.
    const later = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: kept.refresh_token, ...clientFields(c) });
    assert.equal(later.status, 200);
    const replay = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: rotated.refresh_token, ...clientFields(c) });
    assert.equal(replay.status, 400);
    assert.equal((await t.deps.stores.grants.findById(rotatedGrant))!.revokedReason, 'refresh_reuse');

    // Past every lifetime (refresh tokens included) and the audit window again: nothing of day 0 is left.
    t.clock.advance(days(31) + AUDIT_WINDOW_MS + 3_600_000);
    await runJanitor(t.deps);
    for (const grant of [keptGrant, rotatedGrant]) {
      assert.equal(await rows('refresh_tokens', 'grant_id', grant), 0);
      assert.equal(await rows('access_tokens', 'grant_id', grant), 0);
    }
    assert.equal(await rows('grants', 'user_id', user.id), 0, 'idle and revoked grants are gone');
  });
});
