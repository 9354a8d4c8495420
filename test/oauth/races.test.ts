/**
 * Races (INTERFACE section 2): 20 parallel redemptions of one code, and 20 parallel refreshes of
 * one refresh token (the replay window is off by default), each give exactly one success; the
 * losers are reuse, so once the race settles the winner's tokens are dead too. With the window
 * turned on, the refresh race is test/oauth/refresh-replay.test.ts: every racer gets the same
 * answer. A refresh refused mid-rotation among others leaves its token as it was and theirs
 * rotated. A revocation racing a rotation of the same grant takes
 * their rows in the same order (src/core/oauth/tokens/revocation.ts), so neither deadlocks.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LAST_USED_RESOLUTION_MS } from '../../src/core/time.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Tokens, clientFields, freshCode, introspect, newClient, obtainTokens, signedInBrowser, startOAuthApp, tokenRequest } from './helpers.js';

const RACERS = 20;

forEachDatabase('races', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  /** Sends the same token request RACERS times at once: exactly one wins, every loser is invalid_grant. */
  async function raceForOneWinner(fields: Record<string, string>): Promise<Tokens> {
    const responses = await Promise.all(Array.from({ length: RACERS }, () => tokenRequest(t, fields)));
    const bodies = await Promise.all(responses.map(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> })));
    const winners = bodies.filter((b) => b.status === 200);
    assert.equal(winners.length, 1);
    assert.ok(bodies.filter((b) => b.status !== 200).every((b) => b.status === 400 && b.body.error === 'invalid_grant'));
    return winners[0]!.body as unknown as Tokens;
  }

  test('20 parallel redemptions of one code: exactly one succeeds, then its tokens are revoked', async () => {
    const { c, fields } = await freshCode(t);
    const won = await raceForOneWinner(fields);
    assert.deepEqual(await introspect(t, c, won.access_token), { active: false });
    assert.deepEqual(await introspect(t, c, won.refresh_token), { active: false });
  });

  test('20 parallel refreshes of one refresh token: exactly one succeeds, then its tokens are revoked', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c);
    const won = await raceForOneWinner({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
    assert.deepEqual(await introspect(t, c, won.access_token), { active: false });
    assert.deepEqual(await introspect(t, c, won.refresh_token), { active: false });
    assert.deepEqual(await introspect(t, c, tokens.access_token), { active: false });
  });

  test('a refresh refused mid-rotation leaves its token usable, and the refreshes beside it succeed', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const chains: Tokens[] = [];
    for (let i = 0; i < RACERS; i++) chains.push(await obtainTokens(t, browser, c, { scope: 'openid profile:read' }));
    const rotate = (tokens: Tokens, scope?: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c), ...(scope ? { scope } : {}) });
    // A first round opens a connection per chain, so the second reaches the server at once: on
    // SQLite their writes commit in groups (src/storage/sqlite-group-commit.ts).
    const rotated = await Promise.all(chains.map(async (tokens) => (await rotate(tokens)).json() as Promise<Tokens>));
    const refused = 2;
    // Wider than granted: refused once the token was read, before anything is written (RFC 6749 6).
    const responses = await Promise.all(rotated.map((tokens, i) => rotate(tokens, i === refused ? 'openid profile:read posts:read' : undefined)));
    const bodies = await Promise.all(responses.map(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> })));
    assert.deepEqual(bodies.map((b) => b.status), rotated.map((_, i) => (i === refused ? 400 : 200)));
    assert.equal(bodies[refused]!.body.error, 'invalid_scope');
    for (const [i, b] of bodies.entries()) {
      if (i !== refused) assert.equal((await introspect(t, c, b.body.access_token!)).active, true);
    }
    assert.equal((await rotate(rotated[refused]!)).status, 200);
  });

  test('a revocation racing a rotation of the same grant never deadlocks or fails, and leaves no live token', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const revoke = (token: string) => fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, ...clientFields(c) }).toString(),
    });
    // Rounds rather than one race: which of the two takes the refresh token's row first varies.
    for (let round = 0; round < 15; round++) {
      const tokens = await obtainTokens(t, browser, c);
      // A minute on, the rotation also writes the grant's "last used": then it holds the refresh
      // token's row and wants the grant's, the order a revocation must take them in too.
      t.clock.advance(LAST_USED_RESOLUTION_MS);
      const [rotated, revoked] = await Promise.all([
        tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) }),
        revoke(tokens.refresh_token),
      ]);
      assert.equal(revoked.status, 200, `round ${round}: revocation answered ${revoked.status}`);
      assert.ok(rotated.status === 200 || rotated.status === 400, `round ${round}: rotation answered ${rotated.status}`);
      const live = [tokens.access_token, tokens.refresh_token];
      if (rotated.status === 200) {
        const next = (await rotated.json()) as Tokens;
        live.push(next.access_token, next.refresh_token);
        const again = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: next.refresh_token, ...clientFields(c) });
        assert.equal(again.status, 400, `round ${round}: the rotated refresh token outlived the revocation`);
      }
      for (const token of live) assert.deepEqual(await introspect(t, c, token), { active: false }, `round ${round}`);
    }
  });
});
