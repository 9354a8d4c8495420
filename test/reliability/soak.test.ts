/**
 * The short soak (issue 7, deliver 3): a few users and apps drive the whole flow against two
 * instances on one database (and one Redis when there is one) for a few seconds. Every invariant
 * holds (no violation), real work was done, and the table sizes are reported.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSoak } from '../../scripts/soak.js';
import { forEachDatabase } from '../support/databases.js';
import { redisUrl } from '../support/redis.js';

forEachDatabase('short soak', (database) => {
  test('a short soak on two instances breaks no invariant, does real work and reports table sizes', async (t) => {
    const report = await runSoak({
      seconds: 4, users: 4, apps: 2, instances: 2,
      env: { DATABASE_URL: database.url, REDIS_URL: redisUrl },
    });
    t.diagnostic(JSON.stringify(report.figures));
    t.diagnostic(JSON.stringify(report.tableSizes));
    assert.deepEqual(report.violations, []);
    const { figures } = report;
    assert.ok(figures.flows! > 0 && figures.refreshes! > 0 && figures.apiCalls! > 0, 'real activity');
    assert.equal(figures.errors, 0);
    assert.equal(figures.codeReplayWinners, figures.codeReplays, 'each raced code was redeemed exactly once');
    for (const sizes of [report.tableSizes.before, report.tableSizes.afterJanitor]) {
      for (const table of ['authorization_codes', 'grants', 'access_tokens', 'refresh_tokens', 'sessions']) {
        assert.equal(typeof sizes[table], 'number', `${table} size reported`);
      }
    }
    assert.ok(report.tableSizes.before.access_tokens! > 0);
  });
});
