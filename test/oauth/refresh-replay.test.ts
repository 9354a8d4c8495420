/**
 * The refresh replay window (INTERFACE section 11): off by default, so a rotated refresh token is
 * invalid the moment its successor is issued (seed section 3 rule 3). Turned on, a rotated token
 * presented again within REFRESH_REPLAY_SECONDS by a confidential client, or with a proof of the
 * DPoP key it is bound to, while its successor is unused, gets the same successor answer again;
 * any other reuse revokes the family (RFC 9700 4.14.2). Races run across two app instances on one
 * database, each with its own connections.
 */
import { sql } from 'kysely';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { REFRESH_REPLAY_MAX_SECONDS, SEALED_ANSWER_KEPT_MS } from '../../src/core/oauth/tokens/replay.js';
import { runJanitor } from '../../src/janitor.js';
import type { TestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';
import { startAppsForSuite } from '../support/instances.js';
import { type TestClient, type Tokens, clientFields, introspect, newClient, obtainTokens, signedInBrowser, startOAuthApp, tokenRequest } from './helpers.js';

const RACERS = 20;
const WINDOW_SECONDS = 20;

const refresh = (on: TestApp, c: TestClient, token: string, extra: Record<string, string> = {}) =>
  tokenRequest(on, { grant_type: 'refresh_token', refresh_token: token, ...clientFields(c), ...extra });

async function refreshed(on: TestApp, c: TestClient, token: string, extra: Record<string, string> = {}): Promise<Tokens> {
  const response = await refresh(on, c, token, extra);
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Tokens;
}

async function isReuse(response: Response): Promise<void> {
  assert.equal(response.status, 400);
  assert.equal(((await response.json()) as { error: string }).error, 'invalid_grant');
}

/** A new confidential client's tokens, for a member signed in on `on` (with `openid` when `scope` has it). */
async function tokensOfNewClient(on: TestApp, options: { scope?: string } = {}) {
  const c = await newClient(on, { type: 'confidential' });
  const { browser } = await signedInBrowser(on);
  const tokens = await obtainTokens(on, browser, c, options.scope ? { scope: options.scope, extra: { nonce: 'n-1' } } : {});
  return { c, tokens };
}

forEachDatabase('the refresh replay window turned on', (database) => {
  let t: TestApp;
  /** A second instance on the same database, reading the same clock. */
  let u: TestApp;
  startAppsForSuite(database, 2, { env: { REFRESH_REPLAY_SECONDS: String(WINDOW_SECONDS) } }, (apps) => { [t, u] = apps; });

  const start = (options: { scope?: string } = {}) => tokensOfNewClient(t, options);

  test('20 parallel refreshes of one token on two instances all get the same successor, and exactly one family stays alive', async () => {
    const { c, tokens } = await start({ scope: 'openid profile:read' });
    const responses = await Promise.all(Array.from({ length: RACERS }, (_, i) => refresh(i % 2 === 0 ? t : u, c, tokens.refresh_token)));
    const bodies = await Promise.all(responses.map(async (r) => ({ status: r.status, body: (await r.json()) as Tokens })));
    assert.deepEqual(bodies.map((b) => b.status), Array(RACERS).fill(200));
    const first = bodies[0]!.body;
    assert.ok(first.id_token, 'an id_token with openid');
    for (const { body } of bodies) {
      assert.equal(body.access_token, first.access_token);
      assert.equal(body.refresh_token, first.refresh_token);
      assert.equal(body.id_token, first.id_token);
      assert.equal(body.scope, first.scope);
    }
    assert.notEqual(first.refresh_token, tokens.refresh_token);
    // One family: the successor works, and refreshing it gives the next pair.
    assert.equal((await introspect(t, c, first.access_token)).active, true);
    const next = await refreshed(u, c, first.refresh_token);
    assert.equal((await introspect(t, c, next.access_token)).active, true);
    assert.equal((await introspect(t, c, next.refresh_token)).active, true);
  });

  test('a replay within the window gets the same answer, its expires_in counted from the first answer', async () => {
    const { c, tokens } = await start();
    const first = await refreshed(t, c, tokens.refresh_token);
    t.clock.advance(5_000);
    const again = await refreshed(u, c, tokens.refresh_token);
    assert.equal(again.access_token, first.access_token);
    assert.equal(again.refresh_token, first.refresh_token);
    assert.equal(again.expires_in, first.expires_in - 5);
    assert.equal((await introspect(t, c, first.refresh_token)).active, true);
  });

  test('a replay after the successor was used revokes the family', async () => {
    const { c, tokens } = await start();
    const first = await refreshed(t, c, tokens.refresh_token);
    const second = await refreshed(t, c, first.refresh_token);
    await isReuse(await refresh(u, c, tokens.refresh_token));
    assert.deepEqual(await introspect(t, c, second.access_token), { active: false });
    assert.deepEqual(await introspect(t, c, second.refresh_token), { active: false });
  });

  test('a replay after the window revokes the family', async () => {
    const { c, tokens } = await start();
    const first = await refreshed(t, c, tokens.refresh_token);
    t.clock.advance(WINDOW_SECONDS * 1000 + 1);
    await isReuse(await refresh(t, c, tokens.refresh_token));
    assert.deepEqual(await introspect(t, c, first.access_token), { active: false });
    assert.deepEqual(await introspect(t, c, first.refresh_token), { active: false });
  });

  test('a rotated token presented by another client revokes the family', async () => {
    const { c, tokens } = await start();
    const first = await refreshed(t, c, tokens.refresh_token);
    const other = await newClient(t, { type: 'confidential' });
    await isReuse(await refresh(t, other, tokens.refresh_token));
    assert.deepEqual(await introspect(t, c, first.refresh_token), { active: false });
  });

  test('a public client\'s bearer refresh token gets no window: presented again at once, it revokes the family', async () => {
    const c = await newClient(t, { type: 'public' });
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c);
    const first = await refreshed(t, c, tokens.refresh_token);
    await isReuse(await refresh(u, c, tokens.refresh_token));
    assert.deepEqual(await introspect(t, c, first.access_token), { active: false });
    assert.deepEqual(await introspect(t, c, first.refresh_token), { active: false });
    assert.equal(await t.deps.stores.tokens.findReplay(hashSecret(tokens.refresh_token)).then((r) => r?.sealed ?? null), null, 'no answer is sealed for it');
  });

  test('a replay that asks for another scope than the rotation did is reuse', async () => {
    const { c, tokens } = await start();
    const first = await refreshed(t, c, tokens.refresh_token, { scope: 'profile:read' });
    assert.equal(first.scope, 'profile:read');
    await isReuse(await refresh(t, c, tokens.refresh_token));
    assert.deepEqual(await introspect(t, c, first.refresh_token), { active: false });
  });

  test('a replay that names another resource than the rotation did is reuse (RFC 8707)', async () => {
    const { c, tokens } = await start();
    const first = await refreshed(t, c, tokens.refresh_token);
    await isReuse(await refresh(t, c, tokens.refresh_token, { resource: `${t.baseUrl}/api/open/v1` }));
    assert.deepEqual(await introspect(t, c, first.refresh_token), { active: false });
  });

  test('the database holds no usable token of a rotation: no successor string is in any column', async () => {
    const { c, tokens } = await start({ scope: 'openid profile:read' });
    const first = await refreshed(t, c, tokens.refresh_token);
    const secrets = [first.access_token, first.refresh_token, first.id_token!, tokens.refresh_token];
    const { db } = t.deps.database;
    // This schema's tables only: introspecting every schema fails when another test drops its own meanwhile.
    const listed = t.deps.database.dialect === 'sqlite'
      ? sql<{ name: string }>`select name from sqlite_master where type = 'table'`
      : sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`;
    const tables = (await listed.execute(db)).rows.map((row) => row.name).filter((name) => !name.startsWith('kysely_') && !name.startsWith('sqlite_'));
    assert.ok(tables.includes('refresh_tokens'));
    let sealed = 0;
    for (const table of tables) {
      const rows = await db.selectFrom(table as 'refresh_tokens').selectAll().execute();
      const text = JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
      for (const secret of secrets) assert.ok(!text.includes(secret), `${table} holds a token`);
      if (table === 'refresh_tokens') sealed = rows.filter((row) => row.replay_sealed !== null).length;
    }
    assert.ok(sealed >= 1, 'the sealed answer is stored');
  });

  test('the sealed answer is erased once the successor is used', async () => {
    const { c, tokens } = await start();
    const first = await refreshed(t, c, tokens.refresh_token);
    const sealedOf = async (token: string) => (await t.deps.stores.tokens.findReplay(hashSecret(token)))!.sealed;
    assert.notEqual(await sealedOf(tokens.refresh_token), null);
    await refreshed(t, c, first.refresh_token);
    assert.equal(await sealedOf(tokens.refresh_token), null);
  });

  test('the janitor erases a sealed answer once the longest window allowed has passed, and keeps one still within it', async () => {
    const old = await start();
    await refreshed(t, old.c, old.tokens.refresh_token);
    t.clock.advance(SEALED_ANSWER_KEPT_MS - 1000);
    const recent = await start();
    await refreshed(t, recent.c, recent.tokens.refresh_token);
    t.clock.advance(1001);
    await runJanitor(t.deps);
    const sealedOf = async (token: string) => (await t.deps.stores.tokens.findReplay(hashSecret(token)))!.sealed;
    assert.equal(await sealedOf(old.tokens.refresh_token), null);
    assert.notEqual(await sealedOf(recent.tokens.refresh_token), null);
  });

  test('a replay in the last seconds of the longest window allowed is honoured though another instance\'s janitor, its clock a few seconds ahead, ran just before', async () => {
    const longest = await startOAuthApp(database, { env: { REFRESH_REPLAY_SECONDS: String(REFRESH_REPLAY_MAX_SECONDS) }, clock: t.clock });
    try {
      const { c, tokens } = await start();
      const first = await refreshed(longest, c, tokens.refresh_token);
      t.clock.advance(REFRESH_REPLAY_MAX_SECONDS * 1000 - 2000);
      // Instances of one deployment disagree on the time by a little; this one is 5 s ahead.
      await runJanitor({ ...longest.deps, clock: new TestClock(t.clock.now() + 5000) });
      const again = await refreshed(longest, c, tokens.refresh_token);
      assert.equal(again.refresh_token, first.refresh_token);
    } finally {
      await longest.close();
    }
  });
});

forEachDatabase('refresh rotation by default', (database) => {
  let t: TestApp;
  /** A second instance on the same database, reading the same clock. */
  let u: TestApp;
  startAppsForSuite(database, 2, {}, (apps) => { [t, u] = apps; });

  /** RACERS refreshes of one token, spread over `instances`: exactly one succeeds, every other is invalid_grant. */
  async function raceOn(instances: TestApp[]): Promise<void> {
    const { c, tokens } = await tokensOfNewClient(t);
    const responses = await Promise.all(Array.from({ length: RACERS }, (_, i) => tokenRequest(instances[i % instances.length]!, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) })));
    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s === 400).length, RACERS - 1);
    for (const r of responses) await r.body?.cancel();
  }

  test('seed section 3 rule 3: a rotated token is invalid at once; presented again it revokes the family', async () => {
    assert.equal(t.deps.settings.refreshReplaySeconds, 0);
    const { c, tokens } = await tokensOfNewClient(t);
    const rotate = () => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
    const first = (await (await rotate()).json()) as Tokens;
    const again = await rotate();
    assert.equal(again.status, 400);
    assert.deepEqual(await introspect(t, c, first.refresh_token), { active: false });
  });

  test('without a window a rotation records no successor and seals no answer: only a replay would read them', async () => {
    const { c, tokens } = await tokensOfNewClient(t);
    const response = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
    assert.equal(response.status, 200);
    const rotated = await t.deps.stores.tokens.findReplay(hashSecret(tokens.refresh_token));
    assert.notEqual(rotated?.token.usedAt, null);
    assert.equal(rotated?.successor, undefined);
    assert.equal(rotated?.sealed, null);
  });

  test('20 racing refreshes of one token on one instance: exactly one succeeds', async () => {
    await raceOn([t]);
  });

  test('20 racing refreshes of one token on two instances: exactly one succeeds', async () => {
    await raceOn([t, u]);
  });
});

forEachDatabase('instances that disagree on the replay window, as during a rollout that turns it on or off', (database) => {
  let windowed: TestApp;
  let strict: TestApp;
  startAppsForSuite(database, 1, { env: { REFRESH_REPLAY_SECONDS: String(WINDOW_SECONDS) } }, ([app]) => { windowed = app; });
  before(async () => { strict = await startOAuthApp(database, { clock: windowed.clock }); });
  after(() => strict.close());

  /** A confidential client's tokens, its refresh token rotated once on `on`: the rotated one and the successor's answer. */
  async function rotatedOn(on: TestApp) {
    const { c, tokens } = await tokensOfNewClient(windowed);
    return { c, rotated: tokens.refresh_token, successor: await refreshed(on, c, tokens.refresh_token) };
  }

  /** `token` presented again on `on` is reuse: invalid_grant, and the successor's family ends. */
  async function replayEndsFamily(on: TestApp, c: TestClient, token: string, successor: Tokens): Promise<void> {
    await isReuse(await refresh(on, c, token));
    assert.deepEqual(await introspect(windowed, c, successor.access_token), { active: false });
    assert.deepEqual(await introspect(windowed, c, successor.refresh_token), { active: false });
  }

  test('a token rotated where the window is on, replayed at once where it is off, is reuse: the instance without the window decides as strict rotation does', async () => {
    const { c, rotated, successor } = await rotatedOn(windowed);
    await replayEndsFamily(strict, c, rotated, successor);
  });

  test('a token rotated where the window is off, replayed at once where it is on, is reuse: no answer was sealed to give again', async () => {
    const { c, rotated, successor } = await rotatedOn(strict);
    await replayEndsFamily(windowed, c, rotated, successor);
  });
});
