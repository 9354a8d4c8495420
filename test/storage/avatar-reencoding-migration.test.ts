/**
 * Migration 2026-11-24-0020-avatar-reencoding and the data step after the migrations: every avatar
 * stored so far, even one the previous release's parser had checked, is decoded and encoded anew
 * at the next start, as an upload now is; one an upload would now refuse (it declares 50,000 ×
 * 50,000 pixels, or does not decode) is no longer served, without failing the start; the pages'
 * address of a changed or removed avatar moves; and an avatar an older release writes during a
 * rolling upgrade is encoded anew at the start after. On SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import sharp from 'sharp';
import { sharpReencoder } from '../../src/images/sharp-reencoder.js';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { MIGRATION_NAMES, migrateTo, migrateToLatest } from '../../src/storage/migrate.js';
import { reencodeStoredAvatars } from '../../src/storage/reencode-stored-avatars.js';
import type { Database } from '../../src/storage/schema.js';
import { createStores } from '../../src/storage/stores.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { SECRETS, concat, exifSegment, gifComment, gifWith, holds, jpegWith, pngDeclaring } from '../support/images.js';

const T0 = Date.UTC(2026, 10, 23, 0, 0, 0);
const BEFORE = '2026-11-24-0010-ended-token-indexes';
const MIGRATION = '2026-11-24-0020-avatar-reencoding';

const picture = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#3366aa' } });

forEachDatabase('avatar re-encoding migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<Database>;
  const ids: Record<string, number> = {};
  let uploads: Record<string, { type: string; image: Uint8Array; checked: boolean }>;

  const userVersion = async (id: number) => (await db.selectFrom('users').select('updated_at').where('id', '=', id).executeTakeFirstOrThrow()).updated_at;
  const stored = async (id: number) => {
    const row = await db.selectFrom('avatars').select(['content_type', 'image']).where('user_id', '=', id).executeTakeFirst();
    return row && { type: row.content_type, image: new Uint8Array(row.image) };
  };
  const newUser = async (username: string) => (await db.insertInto('users').values({
    username, username_key: username, password_hash: 'x', status: 'active', bio: '', member: 0, level: 1, xp: 0, created_at: T0, updated_at: T0,
  }).returning('id').executeTakeFirstOrThrow()).id;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    // What the previous release stored: what its parser passed (and marked checked), and a phone
    // photo an even older instance wrote during its rolling upgrade (not checked).
    uploads = {
      polyglot: { type: 'image/jpeg', image: concat(await picture(8, 8).jpeg().toBuffer(), Buffer.from('<script>alert(1)</script>')), checked: true },
      bomb: { type: 'image/png', image: pngDeclaring(50_000, 50_000), checked: true },
      large: { type: 'image/png', image: await picture(2000, 1500).png().toBuffer(), checked: true },
      commented: { type: 'image/gif', image: gifWith(gifComment('a comment')), checked: true },
      photo: { type: 'image/jpeg', image: jpegWith(await picture(40, 20).jpeg().toBuffer(), exifSegment({ orientation: 6 })), checked: false },
    };
    await migrateTo(db, BEFORE);
    for (const [name, { type, image, checked }] of Object.entries(uploads)) {
      ids[name] = await newUser(name);
      await db.insertInto('avatars').values({ user_id: ids[name]!, content_type: type, image, updated_at: T0, metadata_checked: checked ? T0 : null }).execute();
    }
  });
  after(() => handle.close());

  test('every avatar stored before is encoded anew at the next start, even one the parser had passed', async () => {
    const started = Date.now();
    // This migration, and those made after it.
    assert.deepEqual(await migrateToLatest(db), { applied: MIGRATION_NAMES.filter((name) => name >= MIGRATION) });

    const polyglot = (await stored(ids.polyglot!))!;
    assert.ok(!holds(polyglot.image, 'script'), 'what followed the JPEG is gone');
    const photo = (await stored(ids.photo!))!;
    for (const secret of SECRETS) assert.ok(!holds(photo.image, secret), `"${secret}" is gone from the stored photo`);
    const photoMetadata = await sharp(photo.image).metadata();
    assert.equal(photoMetadata.exif, undefined);
    assert.deepEqual([photoMetadata.width, photoMetadata.height], [20, 40], 'turned upright');
    const large = (await stored(ids.large!))!;
    const largeMetadata = await sharp(large.image).metadata();
    assert.deepEqual([largeMetadata.width, largeMetadata.height], [512, 384]);
    const commented = (await stored(ids.commented!))!;
    assert.equal(commented.type, 'image/gif');
    assert.ok(!holds(commented.image, 'a comment'));

    for (const name of ['polyglot', 'photo', 'large', 'commented']) {
      assert.ok(await userVersion(ids[name]!) >= started, `${name}: a changed avatar gets a new address on pages`);
    }
    const rows = await db.selectFrom('avatars').select(['metadata_checked', 'updated_at']).execute();
    assert.ok(rows.every((r) => r.metadata_checked === r.updated_at), 'every avatar left is checked');
    assert.deepEqual(await reencodeStoredAvatars(db, sharpReencoder, Date.now()), { reencoded: 0, unchanged: 0, removed: 0 }, 'the next start finds nothing to do');

    // The same database served over HTTP: the photo as it is stored now.
    const t: TestApp = await startTestApp(database);
    try {
      const served = new Uint8Array(await (await fetch(`${t.baseUrl}/avatars/${ids.photo}`)).arrayBuffer());
      assert.deepEqual(served, photo.image);
    } finally {
      await t.close();
    }
  });

  test('a stored avatar an upload would now refuse (50,000 × 50,000 pixels declared) is no longer served: its user gets the default avatar at a new address', async () => {
    assert.equal(await stored(ids.bomb!), undefined, 'removed by the start the test before ran, not left as it was');
    assert.ok(await userVersion(ids.bomb!) > T0, 'pages no longer point at the address under which it was cached');
    const t: TestApp = await startTestApp(database);
    try {
      const response = await fetch(`${t.baseUrl}/avatars/${ids.bomb}`);
      assert.match(response.headers.get('content-type') ?? '', /^image\/svg\+xml/, 'the default avatar');
    } finally {
      await t.close();
    }
  });

  test('an avatar an older release stores during the upgrade is encoded anew at the next start; one this release stores is passed by', async () => {
    // An instance of the previous release replaces an avatar: it moves updated_at, not metadata_checked.
    await db.updateTable('avatars').set({ content_type: 'image/jpeg', image: uploads.photo!.image, updated_at: T0 + 5 }).where('user_id', '=', ids.large!).execute();
    // This release stores what the core had encoded anew, and marks it checked: the data step never reads it.
    const stores = createStores(db, handle.queries);
    const uploader = await newUser('uploader');
    const asGiven = uploads.polyglot!.image;
    await stores.users.setAvatar(uploader, 'image/jpeg', asGiven, T0 + 6);

    assert.deepEqual(await migrateToLatest(db), { applied: [] });
    const replaced = (await stored(ids.large!))!;
    assert.ok(!holds(replaced.image, 'Harbour Lane 12') && !holds(replaced.image, 'SecretCam'));
    assert.equal((await sharp(replaced.image).metadata()).exif, undefined);
    assert.deepEqual((await stored(uploader))!.image, asGiven, 'stored as given, never read again');
  });
});
