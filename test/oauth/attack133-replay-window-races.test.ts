/**
 * attack133: the opt-in refresh replay window (docs/oauth.md, "The refresh replay window") under
 * races, over HTTP on two instances sharing one database, with REFRESH_REPLAY_SECONDS=30.
 *
 * 1. A refresh that qualifies for the window (confidential client) raced against the end of its
 *    grant (RFC 7009 revocation of the refresh token, the member withdrawing the app, staff
 *    suspending the account, the app deactivated): once the revocation has returned, no token the
 *    racing refresh issued may work.
 * 2. Replays within the window: the same answer or a refusal, never two live families; after the
 *    window, reuse ends the family (RFC 9700 4.14.2).
 * 3. A presenter that does not qualify (another DPoP key, no proof, no client authentication)
 *    gets no tokens.
 * 4. A password change or "sign out everywhere" racing a refresh: grants stay (docs/site.md), so the
 *    refresh must still give one working family.
 *
 * Each race test counts the rounds that went wrong and fails naming them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setAccountStatus, setPassword } from '../../src/core/accounts/accounts.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { revokeApplicationAccess } from '../../src/core/oauth/applications.js';
import { deactivateClient } from '../../src/core/oauth/clients.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase, onPostgres, outsideConnection, racingGrantRevocation } from '../support/databases.js';
import { type DpopKey, dpopKey, dpopProof } from '../support/dpop.js';
import { startAppsForSuite } from '../support/instances.js';
import {
  type Browser, type TestClient, type Tokens, clientFields, codeExchangeFields, introspect, newClient, obtainCode, obtainTokens,
  pkcePair, signedInBrowser, tokenRequest, whileSigning,
} from './helpers.js';

const WINDOW_SECONDS = 30;
const ROUNDS = Number(process.env.ATTACK133_ROUNDS ?? 40);
const SCOPE = 'openid profile:read';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const refresh = (on: TestApp, c: TestClient, token: string, extra: Record<string, string> = {}) =>
  tokenRequest(on, { grant_type: 'refresh_token', refresh_token: token, ...clientFields(c), ...extra });

async function revokeOverHttp(on: TestApp, c: TestClient, token: string, hint?: string): Promise<Response> {
  return fetch(`${on.baseUrl}/api/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, ...(hint ? { token_type_hint: hint } : {}), ...clientFields(c) }).toString(),
  });
}

/** A new client address for each check (TRUST_PROXY=1): 401s of dead tokens from one address are rate limited (429), which would hide the answer. */
let addressCount = 0;
const nextAddress = () => { addressCount++; return `10.${(addressCount >> 16) & 255}.${(addressCount >> 8) & 255}.${addressCount & 255}`; };

const meStatus = async (on: TestApp, accessToken: string, dpop?: string) =>
  (await fetch(`${on.baseUrl}/api/open/v1/me`, { headers: { authorization: `${dpop ? 'DPoP' : 'Bearer'} ${accessToken}`, 'x-forwarded-for': nextAddress(), ...(dpop ? { dpop } : {}) } })).status;

/** What still works of `tokens` (bearer, confidential client `c`), checked on `on`; empty when nothing does. */
async function whatStillWorks(on: TestApp, c: TestClient, tokens: Tokens): Promise<string[]> {
  const alive: string[] = [];
  const me = await meStatus(on, tokens.access_token);
  if (me !== 401) alive.push(`/me with the new access token answered ${me}`);
  const userinfo = (await fetch(`${on.baseUrl}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}`, 'x-forwarded-for': nextAddress() } })).status;
  if (userinfo !== 401) alive.push(`UserInfo with the new access token answered ${userinfo}`);
  if ((await introspect(on, c, tokens.access_token)).active !== false) alive.push('introspection says the new access token is active');
  if ((await introspect(on, c, tokens.refresh_token)).active !== false) alive.push('introspection says the new refresh token is active');
  const next = await refresh(on, c, tokens.refresh_token);
  if (next.status === 200) alive.push('the new refresh token refreshed (200)');
  else {
    const body = (await next.json()) as { error?: string };
    if (body.error !== 'invalid_grant') alive.push(`the new refresh token answered ${next.status} ${body.error}`);
  }
  return alive;
}

interface RaceOutcome { round: number; refreshStatus: number; faults: string[] }

function summarize(name: string, outcomes: RaceOutcome[]): string {
  const won = outcomes.filter((o) => o.refreshStatus === 200).length;
  const bad = outcomes.filter((o) => o.faults.length > 0);
  const line = `${name}: ${outcomes.length} rounds, refresh answered 200 in ${won}, tokens outlived the revocation in ${bad.length}`;
  console.log(`# ${line}${bad.length ? `: ${bad.slice(0, 5).map((b) => `round ${b.round} [${b.faults.join('; ')}]`).join(' | ')}` : ''}`);
  return line;
}

forEachDatabase('attack133 replay window races', (database) => {
  let t: TestApp;
  let u: TestApp;
  startAppsForSuite(database, 2, { env: { REFRESH_REPLAY_SECONDS: String(WINDOW_SECONDS), TRUST_PROXY: '1' } }, (apps) => { [t, u] = apps; });

  /**
   * A refresh on `t` and `revoke()` (through `u`) fired together, ROUNDS times, each round on a
   * grant of its own; after both returned, whatever the refresh issued must be dead, and the old
   * token replayed within the window must give nothing that works.
   */
  async function raceRevocation(name: string, setup: (round: number) => Promise<{ c: TestClient; tokens: Tokens; revoke: () => Promise<unknown> }>) {
    const outcomes: RaceOutcome[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const { c, tokens, revoke } = await setup(round);
      const delay = round % 4; // 0 to 3 ms head start for the refresh, to spread the interleavings
      const [response] = await Promise.all([
        refresh(round % 2 === 0 ? t : u, c, tokens.refresh_token),
        (async () => { await sleep(delay); await revoke(); })(),
      ]);
      const faults: string[] = [];
      if (response.status === 200) {
        const issued = (await response.json()) as Tokens;
        faults.push(...await whatStillWorks(t, c, issued));
      } else {
        await response.arrayBuffer();
      }
      // A replay of the old token, after the revocation, within the window.
      const replay = await refresh(u, c, tokens.refresh_token);
      if (replay.status === 200) {
        const replayed = (await replay.json()) as Tokens;
        const alive = await whatStillWorks(t, c, replayed);
        if (alive.length) faults.push(`a replay after the revocation gave working tokens: ${alive.join(', ')}`);
      } else await replay.arrayBuffer();
      outcomes.push({ round, refreshStatus: response.status, faults });
    }
    const line = summarize(name, outcomes);
    assert.equal(outcomes.filter((o) => o.faults.length > 0).length, 0, line);
  }

  /** One member signed in on `t`; a new grant for `c` each call (consent re-given when asked). */
  async function member() {
    const { browser, user } = await signedInBrowser(t);
    return { browser, user, grantFor: (c: TestClient) => obtainTokens(t, browser, c, { scope: SCOPE, extra: { nonce: 'n' } }) };
  }

  test('rule 1a: after RFC 7009 revocation of the refresh token returns, no token of a racing refresh works', { timeout: 600_000 }, async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { grantFor } = await member();
    await raceRevocation('revoke endpoint (refresh token)', async () => {
      const tokens = await grantFor(c);
      return { c, tokens, revoke: async () => { const r = await revokeOverHttp(u, c, tokens.refresh_token, 'refresh_token'); assert.equal(r.status, 200); await r.arrayBuffer(); } };
    });
  });

  test('rule 1b: after the member withdraws the app, no token of a racing refresh works', { timeout: 600_000 }, async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { browser, grantFor } = await member();
    await raceRevocation('member revokes the app (POST /settings/applications/revoke)', async () => {
      const tokens = await grantFor(c);
      const page = await (await browser.fetch('/settings/applications')).text();
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
      return {
        c, tokens,
        revoke: async () => {
          const r = await browser.postForm('/settings/applications/revoke', { _csrf: csrf, client_id: c.client.clientId });
          assert.equal(r.status, 303, await r.text());
        },
      };
    });
  });

  test('rule 1c: after staff suspend the account, no token of a racing refresh works', { timeout: 600_000 }, async () => {
    const c = await newClient(t, { type: 'confidential' });
    await raceRevocation('staff suspend the account', async () => {
      const { user, grantFor } = await member();
      const tokens = await grantFor(c);
      return { c, tokens, revoke: () => setAccountStatus(u.deps.stores, u.deps.clock, user.id, 'suspended') };
    });
  });

  test('rule 1d: after the app is deactivated, no token of a racing refresh works, even once the app is active again', { timeout: 600_000 }, async () => {
    const { grantFor } = await member();
    await raceRevocation('app deactivated', async () => {
      const c = await newClient(t, { type: 'confidential' });
      const tokens = await grantFor(c);
      return {
        c, tokens,
        // Deactivated, then active again at once: a deactivated client cannot authenticate, so only
        // reactivation shows whether its tokens came through the race alive.
        revoke: async () => {
          await deactivateClient(u.deps.stores, u.deps.clock, c.client.clientId);
          await u.deps.stores.clients.setStatus(c.client.clientId, 'active', u.deps.clock.now());
        },
      };
    });
  });

  test('rule 2a: the same token refreshed twice at once on two instances gives the same successor each time, one live family', { timeout: 600_000 }, async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { grantFor } = await member();
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const tokens = await grantFor(c);
      const responses = await Promise.all([refresh(t, c, tokens.refresh_token), refresh(u, c, tokens.refresh_token), refresh(t, c, tokens.refresh_token), refresh(u, c, tokens.refresh_token)]);
      const bodies = await Promise.all(responses.map(async (r) => ({ status: r.status, body: (await r.json()) as Tokens & { error?: string } })));
      const ok = bodies.filter((b) => b.status === 200);
      if (ok.length !== bodies.length) wrong.push(`round ${round}: statuses ${bodies.map((b) => `${b.status}${b.body.error ? ` ${b.body.error}` : ''}`).join(',')}`);
      const distinct = new Set(ok.map((b) => `${b.body.access_token}|${b.body.refresh_token}|${b.body.id_token}`));
      if (distinct.size > 1) wrong.push(`round ${round}: ${distinct.size} different answers`);
      if (ok.length) {
        const successor = ok[0]!.body;
        if ((await meStatus(t, successor.access_token)) !== 200) wrong.push(`round ${round}: the successor's access token does not work`);
        const next = await refresh(u, c, successor.refresh_token);
        if (next.status !== 200) wrong.push(`round ${round}: the successor did not refresh (${next.status})`);
        await next.arrayBuffer();
      }
    }
    console.log(`# rule 2a: ${ROUNDS} rounds of 4 racers, ${wrong.length} wrong`);
    assert.deepEqual(wrong, []);
  });

  test('rule 2b: a replay racing the successor\'s own refresh gives only strings already issued, and never leaves two live refresh tokens in the family', { timeout: 600_000 }, async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { grantFor } = await member();
    const wrong: string[] = [];
    let replayedOk = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const tokens = await grantFor(c);
      const firstResponse = await refresh(t, c, tokens.refresh_token);
      const first = (await firstResponse.json()) as Tokens;
      const grantId = (await t.deps.stores.tokens.findRefresh(hashSecret(tokens.refresh_token)))!.grantId;
      const [replay, next] = await Promise.all([refresh(u, c, tokens.refresh_token), refresh(t, c, first.refresh_token)]);
      const replayBody = (await replay.json()) as Tokens & { error?: string };
      const nextBody = (await next.json()) as Tokens & { error?: string };
      if (replay.status === 200) {
        replayedOk++;
        if (replayBody.refresh_token !== first.refresh_token || replayBody.access_token !== first.access_token) wrong.push(`round ${round}: the replay minted new tokens`);
      }
      const live = await t.deps.database.db.selectFrom('refresh_tokens').select('id')
        .where('grant_id', '=', grantId).where('used_at', 'is', null).where('revoked_at', 'is', null).execute();
      const grant = await t.deps.stores.grants.findById(grantId);
      if (grant!.revokedAt === null && live.length !== 1) wrong.push(`round ${round}: ${live.length} live refresh tokens in a live grant`);
      // If the family lives, only the successor's successor may work.
      if (next.status === 200 && grant!.revokedAt === null && (await meStatus(t, nextBody.access_token)) !== 200) wrong.push(`round ${round}: live grant, but its newest access token fails`);
    }
    console.log(`# rule 2b: ${ROUNDS} rounds, replay answered 200 in ${replayedOk}, ${wrong.length} wrong`);
    assert.deepEqual(wrong, []);
  });

  test('rule 2c: a replay after the window is reuse: invalid_grant, and the successor family ends', async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { grantFor } = await member();
    const tokens = await grantFor(c);
    const first = (await (await refresh(t, c, tokens.refresh_token)).json()) as Tokens;
    t.clock.advance(WINDOW_SECONDS * 1000 + 1000);
    const late = await refresh(u, c, tokens.refresh_token);
    assert.equal(late.status, 400);
    assert.equal(((await late.json()) as { error: string }).error, 'invalid_grant');
    assert.deepEqual(await whatStillWorks(t, c, first), []);
  });

  test('rule 3a: a confidential client\'s replay without client authentication, or with a wrong secret, gets no tokens', async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { grantFor } = await member();
    const tokens = await grantFor(c);
    const first = (await (await refresh(t, c, tokens.refresh_token)).json()) as Tokens;
    const bare = await tokenRequest(u, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: c.client.clientId });
    const bareBody = (await bare.json()) as Record<string, unknown>;
    assert.notEqual(bare.status, 200);
    assert.equal(bareBody.access_token, undefined);
    const wrongSecret = await tokenRequest(u, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: c.client.clientId, client_secret: `${c.secret}x` });
    assert.notEqual(wrongSecret.status, 200);
    assert.equal(((await wrongSecret.json()) as Record<string, unknown>).access_token, undefined);
    const other = await newClient(t, { type: 'confidential' });
    const byOther = await refresh(u, other, tokens.refresh_token);
    assert.equal(byOther.status, 400);
    assert.equal(((await byOther.json()) as { error: string }).error, 'invalid_grant');
    // Another client's presentation is reuse (docs): the family ends.
    assert.deepEqual(await whatStillWorks(t, c, first), []);
  });

  /** DPoP: a public client's code redeemed with a proof of `key`, on `t`. */
  async function dpopTokens(c: TestClient, browser: Browser, key: DpopKey): Promise<{ tokens: Tokens; nonce: string }> {
    const pkce = pkcePair();
    const code = await obtainCode(browser, c, { pkce, scope: SCOPE, extra: { nonce: 'n' } });
    const fields = codeExchangeFields(c, code, pkce);
    const url = `${t.baseUrl}/api/oauth/token`;
    const asked = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: url, nowMs: t.clock.now() }) });
    const nonce = asked.headers.get('dpop-nonce')!;
    await asked.arrayBuffer();
    const response = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: url, nowMs: t.clock.now(), nonce }) });
    assert.equal(response.status, 200, await response.clone().text());
    return { tokens: (await response.json()) as Tokens, nonce };
  }

  const dpopRefresh = async (on: TestApp, c: TestClient, token: string, key: DpopKey | undefined, nonce: string) =>
    tokenRequest(on, { grant_type: 'refresh_token', refresh_token: token, ...clientFields(c) },
      key ? { dpop: await dpopProof(key, { htu: `${on.baseUrl}/api/oauth/token`, nowMs: on.clock.now(), nonce }) } : {});

  async function dpopAlive(c: TestClient, tokens: Tokens, key: DpopKey, nonce: string): Promise<string[]> {
    const alive: string[] = [];
    const me = await meStatus(t, tokens.access_token, await dpopProof(key, { htm: 'GET', htu: `${t.baseUrl}/api/open/v1/me`, nowMs: t.clock.now(), accessToken: tokens.access_token }));
    if (me !== 401) alive.push(`/me answered ${me}`);
    const next = await dpopRefresh(t, c, tokens.refresh_token, key, nonce);
    if (next.status === 200) alive.push('the refresh token refreshed');
    await next.arrayBuffer();
    return alive;
  }

  test('rule 3b: a DPoP-bound token replayed with another key or no proof, racing its rightful replays, never gets tokens and ends the family', { timeout: 600_000 }, async () => {
    const c = await newClient(t, { type: 'public' });
    const { browser } = await signedInBrowser(t);
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const key = await dpopKey();
      const thief = await dpopKey();
      const { tokens, nonce } = await dpopTokens(c, browser, key);
      const first = await dpopRefresh(t, c, tokens.refresh_token, key, nonce);
      assert.equal(first.status, 200, await first.clone().text());
      const successor = (await first.json()) as Tokens;
      const [rightful, withOtherKey, withoutProof] = await Promise.all([
        dpopRefresh(u, c, tokens.refresh_token, key, nonce),
        dpopRefresh(u, c, tokens.refresh_token, thief, nonce),
        dpopRefresh(t, c, tokens.refresh_token, undefined, nonce),
      ]);
      for (const [label, r] of [['another key', withOtherKey], ['no proof', withoutProof]] as const) {
        const body = (await r.json()) as { error?: string; access_token?: string };
        if (r.status === 200 || body.access_token) wrong.push(`round ${round}: replay with ${label} got tokens`);
        else if (body.error !== 'invalid_grant') wrong.push(`round ${round}: replay with ${label} answered ${r.status} ${body.error}`);
      }
      const rightfulBody = (await rightful.json()) as Tokens;
      if (rightful.status === 200 && rightfulBody.refresh_token !== successor.refresh_token) wrong.push(`round ${round}: the rightful replay got another successor`);
      const alive = await dpopAlive(c, successor, key, nonce);
      if (alive.length) wrong.push(`round ${round}: after a wrong-key replay (reuse) the family lives: ${alive.join(', ')}`);
    }
    console.log(`# rule 3b: ${ROUNDS} rounds, ${wrong.length} wrong`);
    assert.deepEqual(wrong, []);
  });

  test('rule 4: a password change or the end of every session racing a refresh leaves one working family (grants stay, docs/site.md)', { timeout: 600_000 }, async () => {
    const c = await newClient(t, { type: 'confidential' });
    const wrong: string[] = [];
    for (let round = 0; round < Math.min(ROUNDS, 20); round++) {
      const { user, grantFor } = await member();
      const tokens = await grantFor(c);
      const meanwhile = round % 2 === 0
        ? () => setPassword(u.deps.stores, u.deps.clock, user, `a brand new passphrase ${round}`)
        : () => u.deps.stores.sessions.endForUser(user.id, u.deps.clock.now());
      const [response] = await Promise.all([refresh(t, c, tokens.refresh_token), meanwhile()]);
      if (response.status !== 200) { wrong.push(`round ${round}: refresh answered ${response.status} ${await response.text()}`); continue; }
      const issued = (await response.json()) as Tokens;
      const replayed = await refresh(u, c, tokens.refresh_token);
      const replayBody = (await replayed.json()) as Tokens;
      if (replayed.status !== 200 || replayBody.refresh_token !== issued.refresh_token) wrong.push(`round ${round}: the replay within the window answered ${replayed.status}`);
      if ((await meStatus(t, issued.access_token)) !== 200) wrong.push(`round ${round}: the new access token fails`);
    }
    console.log(`# rule 4: ${wrong.length} wrong`);
    assert.deepEqual(wrong, []);
  });
});

onPostgres('attack133 revocation inside the rotation transaction', (database) => {
  let t: TestApp;
  let u: TestApp;
  startAppsForSuite(database, 2, { env: { REFRESH_REPLAY_SECONDS: String(WINDOW_SECONDS), TRUST_PROXY: '1' } }, (apps) => { [t, u] = apps; });

  /**
   * The end of the grant committed exactly between the rotation's read of its grant and its commit:
   * while the id_token is signed inside rotateInTransaction.
   */
  async function revokedMidRotation(end: (ctx: { c: TestClient; user: { id: number }; tokens: Tokens }) => Promise<unknown>, wait = true) {
    const c = await newClient(t, { type: 'confidential' });
    const { browser, user } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { scope: SCOPE, extra: { nonce: 'n' } });
    let pending: Promise<unknown> | undefined;
    const response = await whileSigning(t, async () => {
      pending = end({ c, user, tokens });
      // A revocation that waits on the rotation's row lock cannot finish inside it: give it time to get there.
      if (wait) await pending; else await sleep(300);
    }, () => refresh(t, c, tokens.refresh_token));
    await pending;
    const status = response.status;
    const body = (await response.json()) as Tokens & { error?: string };
    const alive = status === 200 ? await whatStillWorks(u, c, body) : [];
    const replay = await refresh(u, c, tokens.refresh_token);
    const replayBody = (await replay.json()) as Tokens;
    const replayAlive = replay.status === 200 ? await whatStillWorks(u, c, replayBody) : [];
    return { status, error: body.error, alive, replayStatus: replay.status, replayAlive };
  }

  for (const [name, end, wait] of [
    ['the member withdraws the app', ({ c, user }) => revokeApplicationAccess(u.deps.stores, u.deps.clock, user.id, c.client.clientId), true],
    ['staff suspend the account', ({ user }) => setAccountStatus(u.deps.stores, u.deps.clock, user.id, 'suspended'), true],
    // Active again at once (nothing that ended comes back, docs): a deactivated client cannot authenticate to show what survived.
    ['the app is deactivated', async ({ c }) => {
      await deactivateClient(u.deps.stores, u.deps.clock, c.client.clientId);
      await u.deps.stores.clients.setStatus(c.client.clientId, 'active', u.deps.clock.now());
    }, true],
    ['the refresh token is revoked (RFC 7009)', async ({ c, tokens }) => (await revokeOverHttp(u, c, tokens.refresh_token)).arrayBuffer(), false],
  ] as Array<[string, (ctx: { c: TestClient; user: { id: number }; tokens: Tokens }) => Promise<unknown>, boolean]>) {
    test(`rule 1 (deterministic): ${name} while the windowed rotation signs its id_token: nothing it issues works afterwards`, { timeout: 60_000 }, async () => {
      const outcome = await revokedMidRotation(end, wait);
      console.log(`# ${name}: refresh ${outcome.status} ${outcome.error ?? ''}; replay ${outcome.replayStatus}; alive [${outcome.alive.join('; ')}] replay alive [${outcome.replayAlive.join('; ')}]`);
      assert.deepEqual(outcome.alive, []);
      assert.deepEqual(outcome.replayAlive, []);
    });

    if (wait) test(`rule 1 (deterministic, answer): ${name} while the windowed rotation signs its id_token: the refresh is refused, as without a window`, { timeout: 60_000 }, async () => {
      const outcome = await revokedMidRotation(end, wait);
      assert.equal(outcome.status, 400, `the refresh answered ${outcome.status}: tokens handed out under a grant that had already ended`);
      assert.equal(outcome.error, 'invalid_grant');
    });
  }
});

onPostgres('attack133 the same revocation, window off (control)', (database) => {
  let t: TestApp;
  startAppsForSuite(database, 1, { env: { REFRESH_REPLAY_SECONDS: '0' } }, (apps) => { [t] = apps; });

  test('control: without a window, a grant withdrawn while the rotation signs its id_token refuses the refresh (invalid_grant)', { timeout: 60_000 }, async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { browser, user } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { scope: SCOPE, extra: { nonce: 'n' } });
    const response = await whileSigning(t, async () => { await revokeApplicationAccess(t.deps.stores, t.deps.clock, user.id, c.client.clientId); },
      () => refresh(t, c, tokens.refresh_token));
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_grant');
  });
});

onPostgres('attack133 windowed rotation against held grant revocations and deletions', (database) => {
  let t: TestApp;
  startAppsForSuite(database, 1, { env: { REFRESH_REPLAY_SECONDS: String(WINDOW_SECONDS), TRUST_PROXY: '1' } }, (apps) => { [t] = apps; });
  const monitor = outsideConnection(database);

  async function windowedTokens() {
    const c = await newClient(t, { type: 'confidential' });
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { scope: SCOPE, extra: { nonce: 'n' } });
    const grantId = (await t.deps.stores.tokens.findRefresh(hashSecret(tokens.refresh_token)))!.grantId;
    return { c, tokens, grantId };
  }

  test('rule 1 (held revocation): a windowed refresh whose transaction waits on a grant revocation issues nothing that works, and records no use of the revoked grant', { timeout: 60_000 }, async () => {
    const { c, tokens, grantId } = await windowedTokens();
    t.clock.advance(120_000);
    const usedBefore = await monitor().query<{ last_used_at: string }>('select last_used_at from grants where id = $1', [grantId]);
    const answer = await racingGrantRevocation(monitor(), grantId, 'consent_withdrawn', t.clock.now(), () => refresh(t, c, tokens.refresh_token));
    const body = (await answer.json()) as Tokens & { error?: string };
    console.log(`# held revocation: refresh ${answer.status} ${body.error ?? ''}`);
    if (answer.status === 200) assert.deepEqual(await whatStillWorks(t, c, body), []);
    const usedAfter = await monitor().query<{ last_used_at: string }>('select last_used_at from grants where id = $1', [grantId]);
    assert.equal(usedAfter.rows[0]!.last_used_at, usedBefore.rows[0]!.last_used_at);
  });

  test('rule 1 (deletion): a windowed refresh against the deletion of its account\'s grant is refused invalid_grant, not failed', { timeout: 60_000 }, async () => {
    const { c, tokens, grantId } = await windowedTokens();
    t.clock.advance(120_000);
    const response = await racingGrantRevocation(monitor(), grantId, 'account_unusable', t.clock.now(), () => refresh(t, c, tokens.refresh_token),
      () => monitor().query('delete from grants where id = $1', [grantId]));
    const text = await response.text();
    console.log(`# deletion: refresh ${response.status} ${text.slice(0, 200)}`);
    assert.equal(response.status, 400, text);
    assert.equal((JSON.parse(text) as { error: string }).error, 'invalid_grant');
  });
});
