/**
 * Several instances (issue 7, deliver 1): two app instances with nothing in memory in common, on
 * one database and one Redis, behind one BASE_URL. Every step of the code flow may land on
 * either: the session, the CSRF cookie, the consent, the code, the tokens and the revocation all
 * live in the database, so the flow works step by step across them and a revocation on one is
 * seen by the other on the very next request.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { CookieJar, browse, formFields, pkcePair, tokenRequest } from '../support/browser-flow.js';
import { forEachDatabase } from '../support/databases.js';
import { type Instances, startInstances } from '../support/instances.js';
import { redisUrl } from '../support/redis.js';

const PASSWORD = 'correct horse battery';

forEachDatabase('two instances', (database) => {
  let cluster: Instances;
  before(async () => {
    cluster = await startInstances(database.url, 2, redisUrl ? { REDIS_URL: redisUrl } : {});
  });
  after(() => cluster.close());

  test('sign in on A, consent on B, redeem on A, refresh on B, revoke on A: B answers 401 at once', async () => {
    const [a, b] = cluster.list as [typeof cluster.list[0], typeof cluster.list[0]];
    const { deps } = a;
    const user = await createAccount(deps.stores, deps.clock, { username: `multi${Date.now()}`, password: PASSWORD });
    const redirectUri = 'https://app.example/callback';
    const { client, secret } = await registerClient(deps.stores, deps.clock, { name: 'Two-instance app', type: 'confidential', redirectUris: [redirectUri] });
    const auth = { client_id: client.clientId, client_secret: secret! };
    const jar = new CookieJar();

    // Sign in on A, with the form B served (its CSRF cookie must hold on A).
    const loginPage = await browse(jar, `${b.base}/login`);
    const signedIn = await browse(jar, `${a.base}/login`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...formFields(await loginPage.text(), '/login'), username: user.username, password: PASSWORD }),
    });
    assert.equal(signedIn.status, 303);

    // The authorization request on A shows the consent page; the consent is posted to B.
    const pkce = pkcePair();
    const query = new URLSearchParams({
      response_type: 'code', client_id: client.clientId, redirect_uri: redirectUri, scope: 'profile:read posts:read',
      state: 'xyz', code_challenge: pkce.challenge, code_challenge_method: 'S256',
    });
    const consentPage = await browse(jar, `${a.base}/oauth/authorize?${query}`);
    assert.equal(consentPage.status, 200, 'A shows the consent page: the session lives in the database');
    const consented = await browse(jar, `${b.base}/oauth/authorize`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...formFields(await consentPage.text(), '/oauth/authorize'), decision: 'approve' }),
    });
    assert.equal(consented.status, 302);
    const back = new URL(consented.headers.get('location')!);
    assert.equal(back.searchParams.get('state'), 'xyz');
    assert.equal(back.searchParams.get('iss'), cluster.issuer, 'both instances speak as one issuer');
    const code = back.searchParams.get('code')!;
    assert.ok(code);

    // Redeem on A; a replay of the code on B is refused (single use across instances).
    const redeemed = await tokenRequest(a.base, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: pkce.verifier, ...auth });
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));

    // Refresh on B: a new pair; the old refresh token no longer works on A.
    const refreshed = await tokenRequest(b.base, { grant_type: 'refresh_token', refresh_token: redeemed.body.refresh_token, ...auth });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.notEqual(refreshed.body.refresh_token, redeemed.body.refresh_token);
    const api = (base: string) => fetch(`${base}/api/open/v1/me`, { headers: { authorization: `Bearer ${refreshed.body.access_token}` } });
    assert.equal((await api(a.base)).status, 200);
    assert.equal((await api(b.base)).status, 200);

    // Revoke on A; B refuses the access token on the very next request.
    const revoked = await fetch(`${a.base}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshed.body.refresh_token, ...auth }),
    });
    assert.equal(revoked.status, 200);
    const after = await api(b.base);
    assert.equal(after.status, 401);
    assert.equal((await after.json()).error, 'invalid_token');
    const again = await tokenRequest(b.base, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, ...auth });
    assert.equal(again.status, 400);
    assert.equal(again.body.error, 'invalid_grant');
  });

  test('a code redeemed on one instance is reuse on the other, and ends the tokens the first one issued', async () => {
    const [a, b] = cluster.list as [typeof cluster.list[0], typeof cluster.list[0]];
    const { deps } = a;
    const user = await createAccount(deps.stores, deps.clock, { username: `multi${Date.now()}r`, password: PASSWORD });
    const redirectUri = 'https://app.example/callback';
    const { client } = await registerClient(deps.stores, deps.clock, { name: 'Public app', type: 'public', redirectUris: [redirectUri] });
    const jar = new CookieJar();
    const loginPage = await browse(jar, `${a.base}/login`);
    await browse(jar, `${a.base}/login`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...formFields(await loginPage.text(), '/login'), username: user.username, password: PASSWORD }),
    });
    const pkce = pkcePair();
    const query = new URLSearchParams({
      response_type: 'code', client_id: client.clientId, redirect_uri: redirectUri, scope: 'profile:read',
      state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256',
    });
    const page = await browse(jar, `${b.base}/oauth/authorize?${query}`);
    const consented = await browse(jar, `${b.base}/oauth/authorize`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...formFields(await page.text(), '/oauth/authorize'), decision: 'approve' }),
    });
    const code = new URL(consented.headers.get('location')!).searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: pkce.verifier, client_id: client.clientId };
    const first = await tokenRequest(a.base, form);
    assert.equal(first.status, 200);
    const second = await tokenRequest(b.base, form);
    assert.equal(second.status, 400);
    assert.equal(second.body.error, 'invalid_grant');
    const api = await fetch(`${a.base}/api/open/v1/`, { headers: { authorization: `Bearer ${first.body.access_token}` } });
    assert.equal(api.status, 401, 'seed section 3 rule 2: reuse ends the first redemption\'s tokens');
  });
});
