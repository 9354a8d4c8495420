/**
 * attack122: the hourly limit on dynamic registrations (RFC 7591; INTERFACE section 13) against a
 * sender holding an IPv6 network: a tunnel broker hands anyone a /48 for free.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const QUOTA = 3;

forEachDatabase('attack122 registrations per network', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: { TRUST_PROXY: '1', REGISTRATIONS_PER_HOUR_PER_ADDRESS: String(QUOTA) } }); });
  after(() => t.close());

  function register(address: string): Promise<Response> {
    return fetch(`${t.baseUrl}/api/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({ redirect_uris: ['https://agent.example/cb'], client_name: 'Agent' }),
    });
  }

  // F4: registrations counted per IPv6 /64, so one /48 (65,536 /64s) registered 65,536 times the
  // limit an hour: 1.3 million rows an hour at the default 20, kept 30 days by the janitor.
  test('an IPv6 network registers apps by its /48: walking its /64s registers no more than one address', async () => {
    const network = '2001:db8:122';
    const before = (await t.deps.stores.clients.listAll()).length;
    for (let i = 1; i <= QUOTA; i++) assert.equal((await register(`${network}:${i.toString(16)}::1`)).status, 201);
    const refused = await register(`${network}:ffff::1`);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal((await t.deps.stores.clients.listAll()).length, before + QUOTA);
    // Another network is another sender.
    assert.equal((await register('2001:db8:123:1::1')).status, 201);
  });
});
