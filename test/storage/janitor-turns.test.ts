/**
 * The janitor's sweep leaves the event loop to requests between its batches. On SQLite a
 * statement runs synchronously and Kysely's promises resolve at once, so a sweep that never
 * waited for a turn held the server from its first batch to its last: 100,000 expired access
 * tokens made every request wait 9 s.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Stores } from '../../src/core/stores.js';
import type { DatabaseHandle } from '../../src/storage/database.js';
import { forEachDatabase } from '../support/databases.js';
import { purgeOptions, storesForSuite } from '../support/stores.js';

const EXPIRED_PROOFS = 12;
const BATCH = 2;

forEachDatabase('janitor turns', (database) => {
  let stores: Stores;
  let handle: DatabaseHandle;
  storesForSuite(database, (s, h) => { stores = s; handle = h; });

  test('a sweep of many batches lets the event loop turn between them', async () => {
    await handle.db.insertInto('dpop_proofs')
      .values(Array.from({ length: EXPIRED_PROOFS }, (_, i) => ({ key: `expired-${i}`, expires_at: 1 })))
      .execute();

    let turns = 0;
    let sweeping = true;
    const count = () => {
      if (!sweeping) return;
      turns++;
      setImmediate(count);
    };
    setImmediate(count);
    const deleted = await stores.housekeeping.purge(1_000, purgeOptions({ auditWindowMs: 0, batchSize: BATCH, grantLifetimeMs: 0, deliveryMaxAgeMs: 0, mailMaxAgeMs: 0, securityLogWindowMs: 86_400_000 }));
    sweeping = false;

    assert.equal(deleted.dpop_proofs, EXPIRED_PROOFS);
    assert.ok(turns >= EXPIRED_PROOFS / BATCH, `the event loop turned ${turns} times during the sweep`);
  });
});
