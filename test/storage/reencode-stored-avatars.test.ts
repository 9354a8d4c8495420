/**
 * The data step after the migrations (src/storage/reencode-stored-avatars.ts) removes a stored
 * avatar only when the file is at fault: a library that answers `busy` (its decoding child could
 * not be started) says nothing of the file, which is left as it was for the next start. On SQLite
 * and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ImageReencoder } from '../../src/core/community/avatars.js';
import type { DatabaseHandle } from '../../src/storage/database.js';
import { reencodeStoredAvatars } from '../../src/storage/reencode-stored-avatars.js';
import { unique } from '../oauth/helpers.js';
import { forEachDatabase } from '../support/databases.js';
import { PLAIN_PNG } from '../support/images.js';
import { storesForSuite } from '../support/stores.js';

const T0 = Date.UTC(2026, 10, 25, 0, 0, 0);

forEachDatabase('stored avatars encoded anew', (database) => {
  let handle: DatabaseHandle;
  storesForSuite(database, (_stores, opened) => { handle = opened; });

  test('an avatar the library could not take (busy: no decoding child could be started) is kept, unchecked, for the next start', async () => {
    const { db } = handle;
    const username = unique('busy').slice(0, 20).toLowerCase();
    const { id } = await db.insertInto('users').values({
      username, username_key: username, password_hash: 'x', status: 'active', bio: '', member: 0, level: 1, xp: 0, created_at: T0, updated_at: T0,
    }).returning('id').executeTakeFirstOrThrow();
    // Written by an older release during a rolling upgrade: not yet checked.
    await db.insertInto('avatars').values({ user_id: id, content_type: 'image/png', image: PLAIN_PNG, updated_at: T0, metadata_checked: null }).execute();
    const busy: ImageReencoder = { reencode: async () => 'busy' };

    const counts = await reencodeStoredAvatars(db, busy, T0 + 1);

    assert.equal(counts.removed, 0, JSON.stringify(counts));
    const row = await db.selectFrom('avatars').select(['image', 'metadata_checked']).where('user_id', '=', id).executeTakeFirst();
    assert.deepEqual(row && { image: new Uint8Array(row.image), checked: row.metadata_checked }, { image: new Uint8Array(PLAIN_PNG), checked: null });
    const user = await db.selectFrom('users').select('updated_at').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(user.updated_at, T0, 'its address on pages stays');
  });
});
