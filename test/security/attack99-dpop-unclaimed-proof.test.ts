/**
 * attack99: since 0ed1c025 the token endpoint reads the key of the grant a request presents (the
 * refresh token's, the code's `dpop_jkt`) before it claims the request's DPoP proof, and leaves a
 * proof of another key unclaimed, relying on the grant to refuse it. What must hold:
 *
 * - a proof that leads to tokens was claimed exactly once: no door where the grant's key was read
 *   as another one than the proof's gives tokens (a live, rotated, revoked, expired token; another
 *   client's; a used, expired, mismatched code; empty and repeated parameters; a token of the
 *   wrong kind), and a proof left unclaimed there gives tokens once elsewhere, never twice;
 * - the refusals leave the code or refresh token usable for its rightful holder (reuse detection
 *   aside, which ends a rotated token's family as before: INTERFACE section 2);
 * - the same proof at racing requests, some refused for their key, gives tokens once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { generateToken } from '../../src/core/credentials/formats.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { redisUrl } from '../support/redis.js';
import { type DpopKey, dpopKey, dpopProof } from '../support/dpop.js';
import {
  type TestClient, type Tokens, clientFields, codeExchangeFields, freshCode, introspect, newClient, obtainCode, pkcePair, signedInBrowser,
  startOAuthApp, tokenRequest,
} from '../oauth/helpers.js';

forEachDatabase('attack99: a proof of another key than the grant\'s is left unclaimed, and never gives tokens', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database, { env: { REFRESH_REPLAY_SECONDS: '20' } }); });
  after(() => t.close());

  const tokenUrl = () => `${t.baseUrl}/api/oauth/token`;
  let nonce = '';

  async function freshNonce(key: DpopKey): Promise<string> {
    const asked = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'x' }, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now() }) });
    const given = asked.headers.get('dpop-nonce');
    if (given) return given;
    // Client authentication comes first: ask with a real client.
    const c = await newClient(t, { type: 'public' });
    const again = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: generateToken('refresh'), ...clientFields(c) }, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now() }) });
    return again.headers.get('dpop-nonce')!;
  }

  const proofOf = async (key: DpopKey) => dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce });

  /** A code redeemed with a proof of `key` (`key` null: Bearer). */
  async function tokensFor(c: TestClient, key: DpopKey | null, dpopJkt?: string): Promise<{ tokens: Tokens; code: string; fields: Record<string, string> }> {
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const code = await obtainCode(browser, c, { pkce, ...(dpopJkt ? { extra: { dpop_jkt: dpopJkt } } : {}) });
    const fields = codeExchangeFields(c, code, pkce);
    const response = await tokenRequest(t, fields, key ? { dpop: await proofOf(key) } : {});
    assert.equal(response.status, 200, await response.clone().text());
    return { tokens: (await response.json()) as Tokens, code, fields };
  }

  /** A thief's own fresh, unbound code: the place where an unclaimed proof can still give tokens, once. */
  async function ownCodeFields(): Promise<Record<string, string>> {
    const { fields } = await freshCode(t, { type: 'public' });
    return fields;
  }

  type Seen = { status: number; error?: string; description?: string; tokens?: Tokens };
  async function send(fields: Record<string, string> | Array<[string, string]>, proof: string | undefined): Promise<Seen> {
    const response = await tokenRequest(t, fields, proof === undefined ? {} : { dpop: proof });
    const body = (await response.json()) as { error?: string; error_description?: string };
    if (response.status === 200) return { status: 200, tokens: body as unknown as Tokens };
    return { status: response.status, ...(body.error ? { error: body.error, description: body.error_description } : {}) };
  }

  /**
   * The thief's proof sent twice to `door`, then to the thief's own code: it must never give tokens
   * at the door, and gives them at the thief's own code only when the door left it unclaimed, once.
   */
  async function tryDoor(door: string, thief: DpopKey, fields: Record<string, string> | Array<[string, string]>): Promise<{ first: Seen; second: Seen; claimed: boolean }> {
    const proof = await proofOf(thief);
    const first = await send(fields, proof);
    const second = await send(fields, proof);
    assert.notEqual(first.status, 200, `${door}: tokens for a proof of another key`);
    assert.notEqual(second.status, 200, `${door}: tokens for a proof of another key, sent again`);
    const own = await ownCodeFields();
    const elsewhere = await send(own, proof);
    const claimed = elsewhere.status !== 200;
    if (claimed) assert.match(elsewhere.description ?? '', /used already/, `${door}: ${JSON.stringify(elsewhere)}`);
    // Once it gave tokens, it never gives them again, at the door or anywhere.
    const afterwards = await send(await ownCodeFields(), proof);
    assert.notEqual(afterwards.status, 200, `${door}: a proof gave tokens twice`);
    assert.match(afterwards.description ?? '', /used already/);
    const doorAgain = await send(fields, proof);
    assert.notEqual(doorAgain.status, 200, `${door}: tokens for a used proof`);
    return { first, second, claimed };
  }

  before(async () => {
    nonce = await freshNonce(await dpopKey());
  });

  test('refresh token doors: a proof of another key never gives tokens, gives them once elsewhere when left unclaimed; the token stays the holder\'s', async () => {
    const key = await dpopKey();
    const thief = await dpopKey();
    const pub = await newClient(t, { type: 'public' });
    const conf = await newClient(t, { type: 'confidential' });
    const thiefClient = await newClient(t, { type: 'public' });
    const refreshFields = (c: TestClient, token: string) => ({ grant_type: 'refresh_token', refresh_token: token, ...clientFields(c) });

    // A live bound token of a public client, presented by its client and by another.
    const live = (await tokensFor(pub, key)).tokens;
    const a = await tryDoor('R1 live bound, own client', thief, refreshFields(pub, live.refresh_token));
    assert.match(a.first.description ?? '', /another key than the one this refresh token is bound to/);
    assert.equal(a.claimed, false);
    const b = await tryDoor('R2 live bound, another client', thief, refreshFields(thiefClient, live.refresh_token));
    assert.equal(b.first.error, 'invalid_grant');
    // A confidential client's live bound token, presented by the thief's public client.
    const confTokens = (await tokensFor(conf, key)).tokens;
    await tryDoor('R3 confidential client\'s live bound, thief\'s client', thief, refreshFields(thiefClient, confTokens.refresh_token));
    // Empty and repeated values: an empty one is omitted (RFC 6749 3.1).
    await tryDoor('R4 refresh_token= then the bound token', thief, [
      ['grant_type', 'refresh_token'], ['refresh_token', ''], ['refresh_token', live.refresh_token], ['client_id', pub.client.clientId],
    ]);
    await tryDoor('R5 the bound token then refresh_token=', thief, [
      ['grant_type', 'refresh_token'], ['refresh_token', live.refresh_token], ['refresh_token', ''], ['client_id', pub.client.clientId],
    ]);
    await tryDoor('R6 refresh_token twice', thief, [
      ['grant_type', 'refresh_token'], ['refresh_token', live.refresh_token], ['refresh_token', live.refresh_token], ['client_id', pub.client.clientId],
    ]);
    await tryDoor('R7 refresh_token missing', thief, { grant_type: 'refresh_token', ...clientFields(pub) });
    await tryDoor('R8 unknown refresh token', thief, refreshFields(pub, generateToken('refresh')));
    await tryDoor('R9 access token as refresh token', thief, refreshFields(pub, live.access_token));
    await tryDoor('R10 the bound refresh token as a code', thief, { grant_type: 'authorization_code', code: live.refresh_token, redirect_uri: pub.redirectUri, ...clientFields(pub) });

    // Every refusal left it the holder's.
    const rightful = await send(refreshFields(pub, live.refresh_token), await proofOf(key));
    assert.equal(rightful.status, 200, JSON.stringify(rightful));
    const confRightful = await send(refreshFields(conf, confTokens.refresh_token), await proofOf(key));
    assert.equal(confRightful.status, 200, JSON.stringify(confRightful));
  });

  test('revoked and rotated bound refresh tokens: a proof of another key gives nothing; reuse detection is as before', async () => {
    const key = await dpopKey();
    const thief = await dpopKey();
    const pub = await newClient(t, { type: 'public' });
    const refreshFields = (token: string) => ({ grant_type: 'refresh_token', refresh_token: token, ...clientFields(pub) });

    // Revoked (RFC 7009).
    const revoked = (await tokensFor(pub, key)).tokens;
    const r = await fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: revoked.refresh_token, ...clientFields(pub) }).toString(),
    });
    assert.equal(r.status, 200);
    await tryDoor('R11 revoked bound', thief, refreshFields(revoked.refresh_token));

    // Rotated, within the replay window: another key is no replay, so reuse, which ends the family
    // (INTERFACE section 2), as it did before the commit.
    const rotated = (await tokensFor(pub, key)).tokens;
    const next = await send(refreshFields(rotated.refresh_token), await proofOf(key));
    assert.equal(next.status, 200);
    await tryDoor('R12 rotated bound, in the window', thief, refreshFields(rotated.refresh_token));
    const holder = await send(refreshFields(rotated.refresh_token), await proofOf(key));
    assert.equal(holder.status, 400, 'the family ended: the holder\'s replay in the window gives nothing');
  });

  test('a bearer refresh token refreshed with a proof claims it: the successors are bound to it, and the proof gives nothing again', async () => {
    const pub = await newClient(t, { type: 'public' });
    const key = await dpopKey();
    const bearer = (await tokensFor(pub, null)).tokens;
    assert.equal(bearer.token_type, 'Bearer');
    const proof = await proofOf(key);
    const first = await send({ grant_type: 'refresh_token', refresh_token: bearer.refresh_token, ...clientFields(pub) }, proof);
    assert.equal(first.status, 200);
    const again = await send(await ownCodeFields(), proof);
    assert.match(again.description ?? '', /used already/);
  });

  test('code doors: a bound code gives nothing to a proof of another key, used or not, of its client or another; it stays its holder\'s; a used one is not counted as reuse', async () => {
    const key = await dpopKey();
    const thief = await dpopKey();
    const thiefClient = await newClient(t, { type: 'public' });

    const { fields, c } = await freshCode(t, {}, { extra: { dpop_jkt: key.jkt } });
    const { client_secret: _, ...withoutSecret } = fields as Record<string, string>;
    const a = await tryDoor('C1 bound code', thief, fields);
    assert.match(a.first.description ?? '', /another key than the dpop_jkt/);
    assert.equal(a.claimed, false);
    await tryDoor('C2 bound code, another client', thief, { ...withoutSecret, ...clientFields(thiefClient) });
    await tryDoor('C3 bound code, another redirect_uri', thief, { ...fields, redirect_uri: 'https://app.example/other' });
    await tryDoor('C4 bound code, wrong verifier', thief, { ...fields, code_verifier: pkcePair().verifier });
    await tryDoor('C5 bound code, no verifier', thief, Object.fromEntries(Object.entries(fields).filter(([k]) => k !== 'code_verifier')));
    await tryDoor('C6 code= then the bound code', thief, [['code', ''], ...Object.entries(fields)]);
    await tryDoor('C7 code missing', thief, Object.fromEntries(Object.entries(fields).filter(([k]) => k !== 'code')));
    await tryDoor('C8 unknown code', thief, { ...fields, code: 'A'.repeat(43) });
    await tryDoor('C9 bound code with grant_type=refresh_token', thief, { ...fields, grant_type: 'refresh_token', refresh_token: fields.code! });

    const redeemed = await send(fields, await proofOf(key));
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed));
    await tryDoor('C10 used bound code', thief, fields);
    await tryDoor('C11 used bound code, another client', thief, { ...withoutSecret, ...clientFields(thiefClient) });
    // Not counted as reuse: the first redemption's tokens live on.
    assert.equal((await introspect(t, c, redeemed.tokens!.refresh_token)).active, true, 'a proof of another key ended the grant');
  });

  async function race(): Promise<void> {
    const key = await dpopKey();
    const thief = await dpopKey();
    const pub = await newClient(t, { type: 'public' });
    const victims = await Promise.all([0, 1, 2].map(() => tokensFor(pub, key)));
    const { fields: boundCode } = await freshCode(t, {}, { extra: { dpop_jkt: key.jkt } });
    const owns = await Promise.all([0, 1, 2, 3].map(() => ownCodeFields()));
    const proof = await proofOf(thief);
    const requests = [
      ...victims.map(({ tokens }) => ({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(pub) })),
      boundCode,
      ...owns,
    ];
    for (let round = 0; round < 3; round++) {
      const seen = await Promise.all(requests.map((fields) => send(fields, proof)));
      const issued = seen.filter((s) => s.status === 200).length;
      assert.ok(issued <= (round === 0 ? 1 : 0), `round ${round}: ${issued} token answers for one proof: ${JSON.stringify(seen)}`);
      if (round === 0) assert.equal(issued, 1, JSON.stringify(seen));
    }
    // The victims' tokens and code are still theirs.
    for (const { tokens } of victims) {
      assert.equal((await send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(pub) }, await proofOf(key))).status, 200);
    }
    assert.equal((await send(boundCode, await proofOf(key))).status, 200);
  }

  test('the same proof at racing requests, most refused for their key: tokens once (replay store: the database)', race);

  test('the same proof at racing requests, most refused for their key: tokens once (replay store: Redis)', { skip: redisUrl ? false : 'TEST_REDIS_URL is not set' }, async () => {
    const saved = t;
    const savedNonce = nonce;
    t = await startOAuthApp(database, { env: { REDIS_URL: redisUrl!, REFRESH_REPLAY_SECONDS: '20' } });
    try {
      nonce = await freshNonce(await dpopKey());
      await race();
    } finally {
      await t.close();
      t = saved;
      nonce = savedNonce;
    }
  });

  test('expired bound code and refresh token: nothing for a proof of another key (last: the clock moves)', async () => {
    const key = await dpopKey();
    const thief = await dpopKey();
    const pub = await newClient(t, { type: 'public' });
    const { fields } = await freshCode(t, {}, { extra: { dpop_jkt: key.jkt } });
    const tokens = (await tokensFor(pub, key)).tokens;
    t.clock.advance(10 * 60 * 1000);
    nonce = await freshNonce(key);
    await tryDoor('C12 expired bound code', thief, fields);
    t.clock.advance(31 * 24 * 3600 * 1000);
    nonce = await freshNonce(key);
    await tryDoor('R13 expired bound refresh token', thief, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(pub) });
  });
});
