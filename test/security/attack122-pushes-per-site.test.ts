/**
 * attack122: the per-address limit on pushed authorization requests (RFC 9126) of public apps
 * against a sender holding an IPv6 network, which a tunnel broker hands out free: for an app
 * nobody at the site answers for (one that registered itself, a document's, a member's) its
 * pushes count by the /48, as its registrations do; for the operator's, by the /64.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { registerClient } from '../../src/core/oauth/clients.js';
import { pkcePair } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const QUOTA = 3;
const REDIRECT_URI = 'https://agent.example/cb';

forEachDatabase('attack122 pushed requests per network', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: { TRUST_PROXY: '1', PAR_PER_MINUTE_PER_ADDRESS: String(QUOTA) } }); });
  after(() => t.close());

  function push(clientId: string, address: string): Promise<Response> {
    return fetch(`${t.baseUrl}/api/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
      body: new URLSearchParams({
        response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, scope: 'profile:read', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
      }),
    });
  }

  test('an IPv6 network pushes for an app nobody answers for by its /48: walking its /64s pushes no more than one address; the operator\'s public app counts by the /64', async () => {
    const registration = await fetch(`${t.baseUrl}/api/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '2001:db8:900::1' },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URI], client_name: 'Agent', token_endpoint_auth_method: 'none' }),
    });
    assert.equal(registration.status, 201);
    const { client_id: selfRegistered } = (await registration.json()) as { client_id: string };
    const network = '2001:db8:124';
    for (let i = 1; i <= QUOTA; i++) assert.equal((await push(selfRegistered, `${network}:${i.toString(16)}::1`)).status, 201, `/64 number ${i}`);
    const refused = await push(selfRegistered, `${network}:ffff::1`);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal(((await refused.json()) as { error: string }).error, 'rate_limited');
    // Another network is another sender.
    assert.equal((await push(selfRegistered, '2001:db8:125:1::1')).status, 201);
    // The operator's public app: each /64 is its own customer.
    const { client: operators } = await registerClient(t.deps.stores, t.clock, { name: 'Operator App', type: 'public', redirectUris: [REDIRECT_URI] });
    const other = '2001:db8:126';
    for (let i = 1; i <= QUOTA + 1; i++) assert.equal((await push(operators.clientId, `${other}:${i.toString(16)}::1`)).status, 201, `operator's app, /64 number ${i}`);
  });
});
