/**
 * A revocation whose transaction is run again is counted once. `inTransaction` runs a transaction
 * again when PostgreSQL aborts it for a statement a newer release's migration made stale (or as a
 * deadlock's victim); whatever the first attempt did outside the database is not rolled back with
 * it, so `tokens_revoked_total` must be counted after the commit, not inside the transaction.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { clientFields, newClient, obtainTokens, signedInBrowser, startOAuthApp } from './helpers.js';

/** The PostgreSQL pool's size (`openDatabase`): every connection the app can have. */
const POOL_SIZE = 10;

forEachDatabase('a revocation run again', (database) => {
  let t: TestApp;
  let newer: DatabaseHandle;
  before(async () => {
    t = await startOAuthApp(database);
    newer = openDatabase(database.target);
  });
  after(async () => {
    await newer.close();
    await t.close();
  });

  const revokedByClient = async () =>
    (await t.deps.metrics.registry.getSingleMetric('tokens_revoked_total')!.get()).values
      .find((v) => v.labels.reason === 'revoked_by_client')?.value ?? 0;

  test('a refresh token revoked while a newer release adds a column to grants is counted once', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c);

    // Every pooled connection prepares the grant's `select *`, as a serving instance has it: each
    // transaction holds its connection until all of them have read.
    const holders = database.name === 'postgres' ? POOL_SIZE : 1;
    let arrived = 0;
    let release!: () => void;
    const allThere = new Promise<void>((resolve) => { release = resolve; });
    await Promise.all(Array.from({ length: holders }, () => t.deps.stores.transaction(async (tx) => {
      await tx.grants.findById(1);
      if (++arrived === holders) release();
      await allThere;
    })));

    await sql`alter table grants add column later_release text`.execute(newer.db);

    const before = await revokedByClient();
    const response = await fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, ...clientFields(c) }).toString(),
    });
    assert.equal(response.status, 200);
    assert.equal(await revokedByClient(), before + 1);
  });
});
