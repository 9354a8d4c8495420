/**
 * attack79: `PostStore.listRecentPublished(limit)` promises the `limit` newest published posts of
 * active authors, for any limit. The run of a member made active again whose flags are not yet
 * cleared kept each member's newest 30 flagged posts whatever the limit (`offset 29`), so a limit
 * above 30 left out their older posts, and the list was not main's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Stores } from '../../src/core/stores.js';
import type { DatabaseHandle } from '../../src/storage/database.js';
import { unique } from '../oauth/helpers.js';
import { forEachDatabase } from '../support/databases.js';
import { storesForSuite } from '../support/stores.js';

const T0 = Date.UTC(2026, 11, 1);
const MINUTE = 60_000;

forEachDatabase('attack79: the home page\'s list for a limit above 30', (database) => {
  let stores: Stores;
  let handle: DatabaseHandle;
  storesForSuite(database, (opened, openedHandle) => { stores = opened; handle = openedHandle; });

  test('a member made active again before any pass: listRecentPublished(50) holds all 45 of their posts, as it did before they were hidden', async () => {
    const member = await stores.users.create({ username: unique('returning'), passwordHash: 'h', bio: '', member: false, level: 1, xp: 0 }, T0);
    const category = await stores.posts.ensureCategory('attack79');
    for (let i = 0; i < 45; i++) {
      await stores.posts.create({ authorId: member.id, categoryId: category.id, title: 't', body: 'b', bodyHtml: '<p>b</p>', excerpt: 'b', status: 'published' }, T0 + i * MINUTE);
    }
    const before = (await stores.posts.listRecentPublished(50)).map((post) => post.id);
    assert.equal(before.length, 45);
    await stores.users.setStatus(member.id, 'suspended', T0 + 1);
    while ((await stores.posts.syncHiddenFlags(500)) > 0);
    await stores.users.setStatus(member.id, 'active', T0 + 2);
    const flagged = await handle.db.selectFrom('posts').select('id').where('author_id', '=', member.id).where('author_hidden', '=', 1).execute();
    assert.equal(flagged.length, 45);
    assert.deepEqual((await stores.posts.listRecentPublished(50)).map((post) => post.id), before);
  });
});
