/**
 * Migration 2026-11-23-0090-avatar-metadata and its data step: avatars stored before the rule lose
 * their metadata at the next start, as an upload now does; a damaged one, whose metadata cannot be
 * taken out, is no longer served, without failing the start; the pages' address of a cleaned or
 * removed avatar moves; and an avatar an older release writes during a rolling upgrade is cleaned
 * at the start after. On SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { MIGRATION_NAMES, migrateTo, migrateToLatest } from '../../src/storage/migrate.js';
import type { Database } from '../../src/storage/schema.js';
import { createStores } from '../../src/storage/stores.js';
import { stripStoredAvatarMetadata } from '../../src/storage/strip-avatar-metadata.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  PLAIN_GIF, PLAIN_JPEG, PLAIN_PNG, SECRETS, chunk, exifSegment, gifExtension, gifWith, holds, jpegWith, pngWith,
} from '../support/images.js';

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);
const BEFORE = '2026-11-23-0080-published-post-counts';
const MIGRATION = '2026-11-23-0090-avatar-metadata';

/** What members uploaded before the rule: a phone photo, a clean PNG, a GIF with a comment, a phone photo cut short. */
const PHOTO = jpegWith(exifSegment({ orientation: 6 }));
/** Without its EOI: browsers show it, the walk refuses it, and its EXIF is whole. */
const DAMAGED = PHOTO.subarray(0, PHOTO.length - 2);
const UPLOADS = { photo: PHOTO, plain: PLAIN_PNG, commented: gifWith(gifExtension(0xfe, 'a comment')), damaged: DAMAGED };

forEachDatabase('avatar metadata migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<Database>;
  const ids: Record<string, number> = {};

  const userVersion = async (id: number) => (await db.selectFrom('users').select('updated_at').where('id', '=', id).executeTakeFirstOrThrow()).updated_at;
  const stored = async (id: number) => new Uint8Array((await db.selectFrom('avatars').select('image').where('user_id', '=', id).executeTakeFirstOrThrow()).image);
  const newUser = async (username: string) => (await db.insertInto('users').values({
    username, username_key: username, password_hash: 'x', status: 'active', bio: '', member: 0, level: 1, xp: 0, created_at: T0, updated_at: T0,
  }).returning('id').executeTakeFirstOrThrow()).id;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    // The database as the release before this migration left it, with the avatars it stored as uploaded.
    await migrateTo(db, BEFORE);
    for (const [name, image] of Object.entries(UPLOADS)) {
      ids[name] = await newUser(name);
      await db.insertInto('avatars').values({ user_id: ids[name]!, content_type: name === 'commented' ? 'image/gif' : name === 'plain' ? 'image/png' : 'image/jpeg', image, updated_at: T0 }).execute();
    }
  });
  after(() => handle.close());

  test('avatars stored before the rule lose their metadata at the next start; a damaged one does not fail the start', async () => {
    const started = Date.now();
    const outcome = await migrateToLatest(db);
    assert.deepEqual(outcome, { applied: MIGRATION_NAMES.filter((name) => name > BEFORE) });
    assert.ok(outcome.applied.includes(MIGRATION));

    const photo = await stored(ids.photo!);
    for (const secret of SECRETS) assert.ok(!holds(photo, secret), `"${secret}" is gone from the stored photo`);
    assert.deepEqual([...photo.subarray(0, 2)], [0xff, 0xd8]);
    assert.deepEqual([...photo.subarray(-2)], [0xff, 0xd9]);
    assert.equal(photo.length, PLAIN_JPEG.length + 36, 'the picture and its orientation alone');
    assert.deepEqual(await stored(ids.commented!), PLAIN_GIF);
    assert.deepEqual(await stored(ids.plain!), PLAIN_PNG, 'an image without metadata is unchanged');

    assert.ok(await userVersion(ids.photo!) >= started, 'a cleaned avatar gets a new address on pages');
    assert.ok(await userVersion(ids.commented!) >= started);
    assert.equal(await userVersion(ids.plain!), T0, 'an unchanged one keeps its address');
    const rows = await db.selectFrom('avatars').select(['metadata_checked', 'updated_at']).execute();
    assert.ok(rows.every((r) => r.metadata_checked === r.updated_at), 'every avatar left is checked');
    assert.deepEqual(await stripStoredAvatarMetadata(db, Date.now()), { stripped: 0, unchanged: 0, damaged: 0 }, 'the next start finds nothing to do');

    // The same database served over HTTP: the photo comes without its metadata.
    const t: TestApp = await startTestApp(database);
    try {
      const served = new Uint8Array(await (await fetch(`${t.baseUrl}/avatars/${ids.photo}`)).arrayBuffer());
      assert.deepEqual(served, photo);
    } finally {
      await t.close();
    }
  });

  test('a stored avatar whose metadata cannot be taken out is no longer served: its user gets the default avatar at a new address', async () => {
    assert.ok(holds(DAMAGED, 'Harbour Lane 12') && holds(DAMAGED, 'SN-4711-0815'), 'the damaged photo carries them');
    const row = await db.selectFrom('avatars').select('user_id').where('user_id', '=', ids.damaged!).executeTakeFirst();
    assert.equal(row, undefined, 'removed by the start the test before ran, not left as it was');
    assert.ok(await userVersion(ids.damaged!) > T0, 'pages no longer point at the address under which it was cached');
    const t: TestApp = await startTestApp(database);
    try {
      const response = await fetch(`${t.baseUrl}/avatars/${ids.damaged}`);
      assert.match(response.headers.get('content-type') ?? '', /^image\/svg\+xml/, 'the default avatar');
      const served = new Uint8Array(await response.arrayBuffer());
      for (const secret of SECRETS) assert.ok(!holds(served, secret), `"${secret}" is not served`);
    } finally {
      await t.close();
    }
  });

  test('an avatar an older release stores during the upgrade is cleaned at the next start; one this release stores is passed by', async () => {
    // An instance of the previous release replaces an avatar: it knows nothing of metadata_checked.
    await db.updateTable('avatars').set({ content_type: 'image/jpeg', image: PHOTO, updated_at: T0 + 5 }).where('user_id', '=', ids.plain!).execute();
    // This release stores what the core cleaned, and marks it checked: the data step never reads it.
    const stores = createStores(db, handle.queries);
    const uploader = await newUser('uploader');
    const asGiven = pngWith(chunk('tEXt', 'Comment\0a comment'));
    await stores.users.setAvatar(uploader, 'image/png', asGiven, T0 + 6);

    assert.deepEqual(await migrateToLatest(db), { applied: [] });
    const replaced = await stored(ids.plain!);
    assert.ok(!holds(replaced, 'Harbour Lane 12') && !holds(replaced, 'SecretCam'));
    assert.equal(replaced.length, PLAIN_JPEG.length + 36);
    assert.deepEqual(await stored(uploader), asGiven, 'stored as given, never read again');
  });
});
