/**
 * Leaked credentials (INTERFACE section 11, issue 19 item 6): POST /api/credentials/revoke and the
 * signed secret-scanning alert endpoint, over real HTTP on each database.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { generateToken } from '../../src/core/credentials/formats.js';
import { LEAK_REPORTS_PER_ADDRESS } from '../../src/core/credentials/leaked-credentials.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase, temporarySqlitePath } from '../support/databases.js';
import { clientFields, newClient, newUser, obtainTokens, signedInBrowser, tokenRequest } from '../oauth/helpers.js';

/** A P-256 key pair as a secret scanner holds it; the operator configures the public half. */
const scanner = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const KEY_ID = 'test-scanner-key';
const keysFile = join(temporarySqlitePath(), '..', 'secret-scanning-keys.json');
writeFileSync(keysFile, JSON.stringify({
  public_keys: [{ key_identifier: KEY_ID, key: scanner.publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }],
}));

forEachDatabase('leaked credentials', (database) => {
  let t: TestApp;
  // TRUST_PROXY=1: each test reports from an address of its own (X-Forwarded-For), so the limit per address is the test's alone.
  // The replay window turned on, for what a report does to a rotated token inside it.
  before(async () => { t = await startTestApp(database, { env: { SECRET_SCANNING_KEYS: keysFile, TRUST_PROXY: '1', REFRESH_REPLAY_SECONDS: '20' } }); });
  after(() => t.close());

  const address = () => `198.51.100.${randomBytes(1)[0]! % 250 + 1}`;
  const report = (credentials: unknown, from = address(), contentType = 'application/json') => fetch(`${t.baseUrl}/api/credentials/revoke`, {
    method: 'POST', headers: { 'content-type': contentType, 'x-forwarded-for': from },
    body: typeof credentials === 'string' ? credentials : JSON.stringify({ credentials }),
  });
  const me = (token: string) => fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token}` } });
  const events = async (userId: number) => (await t.deps.stores.securityEvents.listForUser(userId, 0, 100)).items;

  /** The one answer every well-formed report gets (T54). */
  async function assertAccepted(response: Response): Promise<void> {
    assert.equal(response.status, 202);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(await response.text(), '{}');
  }

  async function appTokens() {
    const owner = await newUser(t);
    const c = await newClient(t, { ownerId: owner.id });
    const { browser, user } = await signedInBrowser(t);
    return { c, owner, user, browser, tokens: await obtainTokens(t, browser, c) };
  }

  test('a reported access token stops working at the API and its user is told', async () => {
    const { user, browser, tokens } = await appTokens();
    assert.equal((await me(tokens.access_token)).status, 200);
    await assertAccepted(await report([tokens.access_token]));
    assert.equal((await me(tokens.access_token)).status, 401);
    const [event] = await events(user.id);
    assert.equal(event?.kind, 'access_token.revoked_as_leaked');
    assert.equal(event?.detail.app, 'Test App');
    assert.equal(event?.address, '', "the reporter's address is not shown to the owner");
    const page = await (await browser.fetch('/settings/security')).text();
    assert.match(page, /Access token of an app revoked after a leak report “Test App”/);
  });

  test('a reported refresh token is refused at the token endpoint, and its grant ends', async () => {
    const { c, user, tokens } = await appTokens();
    await assertAccepted(await report([tokens.refresh_token]));
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
    assert.equal(refreshed.status, 400);
    assert.equal(((await refreshed.json()) as { error: string }).error, 'invalid_grant');
    assert.equal((await me(tokens.access_token)).status, 401, "the grant's access token ends with it");
    assert.equal((await events(user.id))[0]?.kind, 'refresh_token.revoked_as_leaked');
  });

  test('a rotated refresh token within the replay window is live: reported, it gets no replay and its family ends', async () => {
    const { c, user, tokens } = await appTokens();
    const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) };
    const rotated = await tokenRequest(t, refresh);
    assert.equal(rotated.status, 200);
    const successor = (await rotated.json()) as { access_token: string; refresh_token: string };
    await assertAccepted(await report([tokens.refresh_token]));
    const replayed = await tokenRequest(t, refresh);
    assert.equal(replayed.status, 400, 'the reported token yields no successor');
    assert.equal(((await replayed.json()) as { error: string }).error, 'invalid_grant');
    assert.equal((await me(successor.access_token)).status, 401, 'the successors it could have given end with the family');
    const next = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: successor.refresh_token, ...clientFields(c) });
    assert.equal(next.status, 400);
    assert.equal((await events(user.id))[0]?.kind, 'refresh_token.revoked_as_leaked');
  });

  test('a report may also be the bare JSON list of strings', async () => {
    const user = await newUser(t);
    const { token } = await createPersonalToken(t.deps.stores, t.deps.clock, t.deps.tokenMarks, { userId: user.id, name: 'bare', scopes: ['profile:read'], expiresInDays: 30 });
    await assertAccepted(await report(JSON.stringify([token])));
    assert.equal((await me(token)).status, 401);
  });

  test('a reported personal token is refused and its owner told by its label, never the token', async () => {
    const user = await newUser(t);
    const { token } = await createPersonalToken(t.deps.stores, t.deps.clock, t.deps.tokenMarks, { userId: user.id, name: 'ci deploy', scopes: ['profile:read'], expiresInDays: 30 });
    assert.equal((await me(token)).status, 200);
    await assertAccepted(await report([token]));
    assert.equal((await me(token)).status, 401);
    const [event] = await events(user.id);
    assert.equal(event?.kind, 'personal_token.revoked_as_leaked');
    assert.equal(event?.detail.name, 'ci deploy');
    assert.ok(!JSON.stringify(event).includes(token), 'the event holds no secret');
    assert.ok(!JSON.stringify(t.audit).includes(token), 'no audit line holds it either');
  });

  test("a reported client secret deactivates the app and its owner's security log shows it", async () => {
    const { c, owner, tokens } = await appTokens();
    await assertAccepted(await report([c.secret]));
    const client = await t.deps.stores.clients.findById(c.client.clientId);
    assert.equal(client?.status, 'deactivated');
    const refused = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
    assert.equal(refused.status, 401);
    assert.equal((await me(tokens.access_token)).status, 401, "the app's tokens end with it");
    const [event] = await events(owner.id);
    assert.equal(event?.kind, 'client_secret.revoked_as_leaked');
    assert.equal(event?.detail.client_id, c.client.clientId);
  });

  test('reports racing over the same credentials revoke each once and tell its owner once', async () => {
    const user = await newUser(t);
    const created = await Promise.all([1, 2, 3].map((n) =>
      createPersonalToken(t.deps.stores, t.deps.clock, t.deps.tokenMarks, { userId: user.id, name: `token ${n}`, scopes: ['profile:read'], expiresInDays: 30 })));
    const tokens = created.map((c) => c.token);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => report(i % 2 === 0 ? tokens : [...tokens].reverse())));
    for (const answer of answers) await assertAccepted(answer);
    const told = (await events(user.id)).filter((e) => e.kind === 'personal_token.revoked_as_leaked');
    assert.deepEqual(told.map((e) => e.detail.name).sort(), ['token 1', 'token 2', 'token 3']);
  });

  test('strings that name nothing get the same answer as live credentials', async () => {
    const { tokens } = await appTokens();
    const live = await report([tokens.access_token]);
    const dead = await report([tokens.access_token, generateToken('access'), generateToken('clientSecret'), 'svco_not-a-token', 'hello']);
    for (const response of [live, dead]) await assertAccepted(response);
  });

  test('a report of 1,000 strings of 256 characters, the largest, is accepted', async () => {
    await assertAccepted(await report(Array.from({ length: 1000 }, () => randomBytes(192).toString('base64'))));
  });

  test('a report of more than 1,000 strings is invalid_request', async () => {
    const response = await report(Array.from({ length: 1001 }, () => generateToken('personal')));
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_request');
  });

  test('a report that is not a JSON list of bounded strings is invalid_request', async () => {
    for (const [body, type] of [
      ['{"credentials": "svco_x"}', 'application/json'], ['{"credentials": [1]}', 'application/json'],
      [JSON.stringify({ credentials: ['x'.repeat(257)] }), 'application/json'], ['{"credentials": [', 'application/json'],
      ['credentials=svco_x', 'application/x-www-form-urlencoded'],
    ] as const) {
      const response = await report(body, address(), type);
      assert.equal(response.status, 400, body);
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_request');
    }
  });

  test('reports are limited per address: past the limit, 429 with Retry-After', async () => {
    const from = '203.0.113.9';
    for (let i = 0; i < LEAK_REPORTS_PER_ADDRESS; i++) assert.equal((await report(['noise'], from)).status, 202);
    const refused = await report(['noise'], from);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal(((await refused.json()) as { error: string }).error, 'rate_limited');
    assert.equal((await report(['noise'], '203.0.113.10')).status, 202, 'another address is not limited');
  });

  const alert = (body: string, headers: Record<string, string>) => fetch(`${t.baseUrl}/api/credentials/secret-scanning`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body,
  });
  const signed = (body: string) => ({
    'github-public-key-identifier': KEY_ID,
    'github-public-key-signature': sign('sha256', Buffer.from(body), { key: scanner.privateKey, dsaEncoding: 'der' }).toString('base64'),
  });

  test('a signed secret-scanning alert revokes what it names and labels each token as GitHub expects', async () => {
    const { user, tokens } = await appTokens();
    const url = 'https://github.com/octocat/Hello-World/blob/main/.env';
    const body = JSON.stringify([
      { token: tokens.access_token, type: 'svc_access_token', url, source: 'content' },
      { token: generateToken('personal'), type: 'svc_personal_token', url, source: 'commit' },
    ]);
    const response = await alert(body, signed(body));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), [
      { token_raw: tokens.access_token, token_type: 'svc_access_token', label: 'true_positive' },
      { token_raw: JSON.parse(body)[1].token, token_type: 'svc_personal_token', label: 'false_positive' },
    ]);
    assert.equal((await me(tokens.access_token)).status, 401);
    assert.equal((await events(user.id))[0]?.detail.where, url);
  });

  test('a rotated refresh token past the replay window is no live credential: nothing is revoked and no one told, though a scanner hears it was real', async () => {
    const { c, user, tokens } = await appTokens();
    const rotated = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
    const successor = (await rotated.json()) as { access_token: string };
    t.clock.advance((t.deps.settings.refreshReplaySeconds + 1) * 1000);
    const body = JSON.stringify([{ token: tokens.refresh_token, type: 'svc_refresh_token', url: '', source: 'content' }]);
    const response = await alert(body, signed(body));
    assert.deepEqual(((await response.json()) as Array<{ label: string }>).map((m) => m.label), ['true_positive']);
    assert.equal((await me(successor.access_token)).status, 200, 'the family lives on');
    assert.deepEqual((await events(user.id)).filter((e) => e.kind.endsWith('revoked_as_leaked')), []);
  });

  test('an alert whose signature does not verify is refused and revokes nothing', async () => {
    const { tokens } = await appTokens();
    const body = JSON.stringify([{ token: tokens.access_token, type: 't', url: '', source: 'content' }]);
    const other = JSON.stringify([{ token: generateToken('access'), type: 't', url: '', source: 'content' }]);
    assert.equal((await alert(body, signed(other))).status, 401, 'a signature of another body');
    assert.equal((await alert(body, { ...signed(body), 'github-public-key-identifier': 'unknown' })).status, 401, 'an unknown key');
    assert.equal((await alert(body, { ...signed(body), 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' })).status, 401, 'garbage');
    assert.equal((await alert(body, { 'github-public-key-identifier': KEY_ID })).status, 400, 'no signature');
    assert.equal((await me(tokens.access_token)).status, 200);
  });

  test('the developer documentation at /docs shows how to report a leaked credential', async () => {
    const page = await (await fetch(`${t.baseUrl}/docs`)).text();
    assert.match(page, /id="leaked"/);
    assert.ok(page.includes(`${t.baseUrl}/api/credentials/revoke`));
  });

  test('without SECRET_SCANNING_KEYS the alert endpoint does not exist', async () => {
    const plain = await startTestApp(database);
    try {
      const body = '[]';
      const response = await fetch(`${plain.baseUrl}/api/credentials/secret-scanning`, { method: 'POST', headers: { 'content-type': 'application/json', ...signed(body) }, body });
      assert.equal(response.status, 404);
    } finally {
      await plain.close();
    }
  });
});
