/**
 * attack99 F1: the refresh token grant answers every refused token in one set of words ("invalid,
 * expired or revoked": nothing more is revealed). The token endpoint reads a refresh token's DPoP
 * key before it claims the request's proof, and leaves a proof of another key unclaimed; were it
 * to do so for any stored bound token, one proof sent twice would tell apart what the words do
 * not: the second send for a stored token (another client's, a revoked one) refused in the
 * grant's words again, for an unknown token as "used already". So it reads the key only of a
 * token the requesting client may refresh now (`boundKey` in refresh-token.ts).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { generateToken } from '../../src/core/credentials/formats.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type DpopKey, dpopKey, dpopProof } from '../support/dpop.js';
import {
  type TestClient, type Tokens, clientFields, codeExchangeFields, newClient, obtainCode, pkcePair, signedInBrowser, startOAuthApp, tokenRequest,
} from '../oauth/helpers.js';

forEachDatabase('attack99 F1: a proof sent twice tells a stored bound refresh token from an unknown one', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  const tokenUrl = () => `${t.baseUrl}/api/oauth/token`;

  async function nonceFor(key: DpopKey, c: TestClient): Promise<string> {
    const asked = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: generateToken('refresh'), ...clientFields(c) }, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now() }) });
    return asked.headers.get('dpop-nonce')!;
  }

  async function boundTokens(c: TestClient, key: DpopKey, nonce: string): Promise<Tokens> {
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const code = await obtainCode(browser, c, { pkce });
    const response = await tokenRequest(t, codeExchangeFields(c, code, pkce), { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Tokens;
  }

  /** The thief's one proof, sent twice with `token` under the thief's own client: the second answer. */
  async function secondAnswer(thief: DpopKey, thiefClient: TestClient, token: string, nonce: string): Promise<{ first: string; second: string }> {
    const proof = await dpopProof(thief, { htu: tokenUrl(), nowMs: t.clock.now(), nonce });
    const fields = { grant_type: 'refresh_token', refresh_token: token, ...clientFields(thiefClient) };
    const first = (await (await tokenRequest(t, fields, { dpop: proof })).json()) as { error_description: string };
    const second = (await (await tokenRequest(t, fields, { dpop: proof })).json()) as { error_description: string };
    return { first: first.error_description, second: second.error_description };
  }

  test('another (confidential) client\'s live bound refresh token, presented without its secret, answers as an unknown token does', async () => {
    const victim = await newClient(t, { type: 'confidential' });
    const thiefClient = await newClient(t, { type: 'public' });
    const key = await dpopKey();
    const thief = await dpopKey();
    const nonce = await nonceFor(key, thiefClient);
    const tokens = await boundTokens(victim, key, nonce);

    const unknown = await secondAnswer(thief, thiefClient, generateToken('refresh'), nonce);
    const stored = await secondAnswer(thief, thiefClient, tokens.refresh_token, nonce);
    assert.equal(stored.first, unknown.first, 'the first answers already differ');
    assert.equal(stored.second, unknown.second, 'the second send of one proof tells a stored bound token from an unknown one');
  });

  test('a revoked bound refresh token answers as an unknown token does', async () => {
    const c = await newClient(t, { type: 'public' });
    const key = await dpopKey();
    const thief = await dpopKey();
    const nonce = await nonceFor(key, c);
    const tokens = await boundTokens(c, key, nonce);
    const revoked = await fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: tokens.refresh_token, ...clientFields(c) }).toString(),
    });
    assert.equal(revoked.status, 200);

    const unknown = await secondAnswer(thief, c, generateToken('refresh'), nonce);
    const stored = await secondAnswer(thief, c, tokens.refresh_token, nonce);
    assert.equal(stored.first, unknown.first, 'the first answers already differ');
    assert.equal(stored.second, unknown.second, 'the second send of one proof tells a revoked bound token from an unknown one');
  });
});
