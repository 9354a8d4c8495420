/**
 * The overview's new members (INTERFACE section 14), counted by the database a site day at a time,
 * on both databases: a day in UTC+8 runs from 16:00:00Z the day before, to the millisecond.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { DEFAULT_SITE_TIME_ZONE } from '../../src/core/site-time.js';
import { overview } from '../../src/core/staff/figures.js';
import type { Stores } from '../../src/core/stores.js';
import { forEachDatabase } from '../support/databases.js';
import { storesForSuite } from '../support/stores.js';

forEachDatabase('the overview\'s new members', (database) => {
  let stores: Stores;
  storesForSuite(database, (s) => { stores = s; });

  const joinAt = (iso: string) => stores.users.create({ username: `j${randomBytes(4).toString('hex')}`, passwordHash: 'x', bio: '', member: false, level: 1, xp: 0 }, Date.parse(iso));

  test('each account counts in the range its creation falls in, a range holding its start and not its end', async () => {
    const bounds = ['2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z', '2030-01-03T00:00:00Z', '2030-01-04T00:00:00Z'].map(Date.parse);
    for (const at of ['2029-12-31T23:59:59.999Z', '2030-01-01T00:00:00Z', '2030-01-01T23:59:59.999Z', '2030-01-03T00:00:00Z', '2030-01-03T12:00:00Z', '2030-01-04T00:00:00Z']) await joinAt(at);
    assert.deepEqual(await stores.memberDirectory.countJoined(bounds), [2, 0, 2]);
    assert.deepEqual(await stores.memberDirectory.countJoined(bounds.slice(2)), [2]);
    assert.deepEqual(await stores.memberDirectory.countJoined(bounds.slice(3)), []);
  });

  test('a member who joined at 15:59:59Z counts on that day in UTC+8, one who joined at 16:00:00Z on the next', async () => {
    await joinAt('2031-03-09T15:59:59.999Z');
    await joinAt('2031-03-09T16:00:00Z');
    await joinAt('2031-03-09T16:00:00Z');
    // Today in UTC+8 is 2031-03-12: its first instant counts, tomorrow's does not.
    await joinAt('2031-03-11T16:00:00Z');
    await joinAt('2031-03-12T16:00:00Z');
    // Fourteen days back, today included: 2031-02-27 is the first, so its eve is left out.
    await joinAt('2031-02-26T15:59:59.999Z');
    await joinAt('2031-02-26T16:00:00Z');
    const figures = await overview(stores, Date.parse('2031-03-12T04:00:00Z'), DEFAULT_SITE_TIME_ZONE);
    const on = (day: string) => figures.counts.new_members[figures.days.indexOf(day)];
    assert.equal(figures.days[0], '2031-02-27');
    assert.equal(figures.days.at(-1), '2031-03-12');
    assert.equal(on('2031-02-27'), 1);
    assert.equal(on('2031-03-09'), 1);
    assert.equal(on('2031-03-10'), 2);
    assert.equal(on('2031-03-12'), 1);
    assert.equal(figures.counts.new_members.reduce((sum, n) => sum + n, 0), 5);
  });
});
