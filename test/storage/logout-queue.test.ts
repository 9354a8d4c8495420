/**
 * The back-channel logout queue under load (issue 17 item 5, hardened after an attack): a claim
 * is shared fairly between apps, and thousands of deliveries are queued at once. Each suite has
 * a database of its own, so nothing else is due in it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import type { Stores } from '../../src/core/stores.js';
import type { Database } from '../../src/storage/schema.js';
import { unique } from '../oauth/helpers.js';
import { forEachDatabase } from '../support/databases.js';
import { storesForSuite } from '../support/stores.js';

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);
const LEASE = 60_000;

forEachDatabase('logout delivery queue', (database) => {
  let stores: Stores;
  let db: Kysely<Database>;
  storesForSuite(database, (opened, handle) => { stores = opened; db = handle.db; });

  async function queue(count: number, at: number): Promise<Set<string>> {
    const user = await stores.users.create({ username: unique('user'), passwordHash: 'hash', bio: '', member: false, level: 1, xp: 0 }, T0);
    const client = await stores.clients.create({
      clientId: unique('client'), name: 'App', description: '', homepageUrl: '', ownerId: null, type: 'public',
      redirectUris: ['https://app.example/cb'], allowedScopes: ['openid'], secretHash: null, idTokenAlg: 'RS256',
      postLogoutRedirectUris: [], backchannelLogoutUri: 'https://app.example/bc',
    }, T0);
    // Each jti is the batch's random prefix and the row's number: 6,000 jtis of `unique`'s 32 random
    // bits alone collide in about one run in 240, and the jti is a unique key.
    const batch = unique('jti');
    const rows = Array.from({ length: count }, (_, i) => ({ clientId: client.clientId, userId: user.id, sid: unique('sid'), jti: `${batch}-${i}`, cause: 'signed_out' }));
    await stores.logoutDeliveries.insert(rows, at);
    return new Set(rows.map((r) => r.jti));
  }

  test('one claim takes at most a quarter of its rows from any one app, so an app with a backlog cannot starve the others', async () => {
    const flood = await queue(100, T0);
    const polite = await queue(3, T0 + 1);
    const claimed = await stores.logoutDeliveries.claim('fair', T0 + 2, T0 + 2 + LEASE, 20);
    assert.equal(claimed.filter((d) => flood.has(d.jti)).length, 5, 'the flooding app: a quarter of 20');
    assert.equal(claimed.filter((d) => polite.has(d.jti)).length, 3, 'every row of the other app, though queued later');
  });

  test("thousands of logout deliveries are queued at once (past a statement's parameter limit)", async () => {
    const at = T0 + 10 * LEASE;
    const jtis = await queue(6000, at);
    const stored = await db.selectFrom('logout_deliveries').select('jti').where('created_at', '=', at).execute();
    assert.equal(stored.filter((r) => jtis.has(r.jti)).length, 6000);
  });
});
