/**
 * Avatar uploads (issue 30 item 4) over real HTTP on each database: every image is decoded and
 * encoded anew, so nothing of the file but its pixels is stored (no text chunk, ICC profile,
 * EXIF, nor what a polyglot hides); it is stored at most 512 × 512; and what does not decode, or
 * declares more pixels than the limit, is the form's error, never a 500.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import sharp from 'sharp';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  LATITUDE_BYTES, PLAIN_PNG, SECRETS, chunk, concat, exifSegment, holds, jpegWith, pngChunkTypes, pngDeclaring, pngWith,
} from '../support/images.js';
import { type Visitor, signedInMember } from './visitor.js';
import { AVATAR_UPLOADS_PER_HOUR } from '../../src/core/community/avatars.js';

const PASSWORD = 'correct horse battery staple';

/** A `width` × `height` image of two colours (left and right), so turning it shows. */
function twoColours(width: number, height: number) {
  const left = { r: 200, g: 30, b: 30 };
  return sharp({ create: { width, height, channels: 3, background: left } })
    .composite([{ input: { create: { width: Math.ceil(width / 2), height, channels: 3, background: { r: 30, g: 30, b: 200 } } }, left: Math.floor(width / 2), top: 0 }]);
}

forEachDatabase('avatar uploads', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  const member = () => signedInMember(t, `uploader${++counter}`, PASSWORD);

  async function upload(visitor: Visitor, bytes: Uint8Array, type: string) {
    const form = new FormData();
    form.append('_csrf', await visitor.csrf());
    form.append('avatar', new Blob([Buffer.from(bytes)], { type }), 'avatar');
    return visitor.request('/settings/profile/avatar', { method: 'POST', body: form });
  }

  async function served(userId: number) {
    const response = await fetch(`${t.baseUrl}/avatars/${userId}`);
    return { type: response.headers.get('content-type'), image: new Uint8Array(await response.arrayBuffer()) };
  }

  test('a PNG is stored encoded anew: its text chunks, unknown ancillary chunks and ICC profile are gone', async () => {
    const { user, visitor } = await member();
    const withProfile = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#3366aa' } }).withIccProfile('p3').png().toBuffer();
    const png = pngWith(withProfile, chunk('tEXt', 'Comment\0a comment'), chunk('zxCv', 'SecretCam'));
    assert.ok(pngChunkTypes(png).includes('iCCP') && pngChunkTypes(png).includes('tEXt'), 'the upload carries them');

    assert.equal((await upload(visitor, png, 'image/png')).status, 303);
    const { type, image } = await served(user.id);
    assert.equal(type, 'image/png');
    const chunks = pngChunkTypes(image);
    for (const gone of ['iCCP', 'tEXt', 'zxCv']) assert.ok(!chunks.includes(gone), `no ${gone} chunk in ${chunks.join(' ')}`);
    for (const secret of SECRETS) assert.ok(!holds(image, secret), `"${secret}" is gone`);
    const metadata = await sharp(image).metadata();
    assert.equal(metadata.icc, undefined);
    assert.deepEqual([metadata.width, metadata.height], [4, 4]);
  });

  test('a PNG with an invented critical chunk is refused, as a PNG decoder must (PNG spec 5.4), and nothing is stored', async () => {
    const { user, visitor } = await member();
    const refused = await upload(visitor, pngWith(PLAIN_PNG, chunk('EVIL', '<script>alert(1)</script>')), 'image/png');
    assert.equal(refused.status, 400);
    assert.match(refused.text, /The image file is damaged or not a complete PNG, JPEG, WebP or GIF image\./);
    assert.match(refused.text, /id="avatar"[^>]*aria-invalid="true"/);
    assert.equal(await t.deps.stores.users.findAvatar(user.id), undefined);
  });

  test('a JPEG photo is stored without its EXIF (GPS position, camera serial, times), turned upright', async () => {
    const { user, visitor } = await member();
    // 40 wide and 20 high as stored; Orientation 6 says it is shown turned a quarter clockwise.
    const photo = jpegWith(await twoColours(40, 20).jpeg().toBuffer(), exifSegment({ orientation: 6 }));
    assert.ok(Buffer.from(photo).includes(Buffer.from(LATITUDE_BYTES)) && holds(photo, 'Harbour Lane 12'), 'the photo carries a GPS position');

    assert.equal((await upload(visitor, photo, 'image/jpeg')).status, 303);
    const { type, image } = await served(user.id);
    assert.equal(type, 'image/jpeg');
    assert.ok(!Buffer.from(image).includes(Buffer.from(LATITUDE_BYTES)), 'the latitude is gone');
    for (const secret of SECRETS) assert.ok(!holds(image, secret), `"${secret}" is gone`);
    const metadata = await sharp(image).metadata();
    assert.equal(metadata.exif, undefined, 'no EXIF block at all');
    assert.deepEqual([metadata.width, metadata.height], [20, 40], 'the pixels turned as the orientation said');
  });

  test('a second file hidden in a JPEG\'s scan data (a polyglot) is not stored', async () => {
    const { user, visitor } = await member();
    const hidden = '<html><script>alert(document.cookie)</script></html>';
    const jpeg = await twoColours(8, 8).jpeg().toBuffer();
    // Inside the entropy-coded scan, right before EOI: decoders skip it, a container walk keeps it.
    const polyglot = concat(jpeg.subarray(0, -2), Buffer.from(hidden), jpeg.subarray(-2));
    assert.equal((await upload(visitor, polyglot, 'image/jpeg')).status, 303);
    const { image } = await served(user.id);
    assert.ok(!holds(image, 'script'), 'the second file is gone');
    assert.deepEqual([...image.subarray(-2)], [0xff, 0xd9], 'the stored JPEG ends at its EOI');
  });

  test('a small file declaring 50,000 × 50,000 pixels is refused with a message, and nothing is stored', async () => {
    const { user, visitor } = await member();
    const bomb = pngDeclaring(50_000, 50_000);
    assert.ok(bomb.length < 100);
    const refused = await upload(visitor, bomb, 'image/png');
    assert.equal(refused.status, 400);
    assert.match(refused.text, /The image must be at most 24 megapixels\./);
    assert.equal(await t.deps.stores.users.findAvatar(user.id), undefined);
  });

  test('a strip within the pixel limit but longer than 8,192 pixels is refused before it is decoded', async () => {
    const { user, visitor } = await member();
    const strip = pngDeclaring(1, 23_999_999);
    const refused = await upload(visitor, strip, 'image/png');
    assert.equal(refused.status, 400);
    assert.match(refused.text, /No side of the image may be longer than 8,192 pixels\./);
    assert.equal(await t.deps.stores.users.findAvatar(user.id), undefined);
  });

  test('a large image is stored at most 512 × 512, keeping its proportions', async () => {
    const { user, visitor } = await member();
    for (const [bytes, type, size] of [
      [await twoColours(2000, 1500).png().toBuffer(), 'image/png', [512, 384]],
      [await twoColours(300, 1200).jpeg().toBuffer(), 'image/jpeg', [128, 512]],
      [await twoColours(1024, 1024).webp().toBuffer(), 'image/webp', [512, 512]],
    ] as const) {
      assert.equal((await upload(visitor, bytes, type)).status, 303);
      const { image } = await served(user.id);
      const metadata = await sharp(image).metadata();
      assert.deepEqual([metadata.width, metadata.height], size, type);
    }
  });

  test('bytes that do not decode are refused with a message whatever type they claim, and the avatar before stays', async () => {
    const { user, visitor } = await member();
    assert.equal((await upload(visitor, PLAIN_PNG, 'image/png')).status, 303);
    const before = await served(user.id);
    const jpeg = await twoColours(16, 16).jpeg().toBuffer();
    for (const [bytes, type] of [
      [concat(PLAIN_PNG.subarray(0, 8), Buffer.alloc(200, 0xab)), 'image/png'],
      [concat(Uint8Array.of(0xff, 0xd8, 0xff), Buffer.from('not a picture at all')), 'image/jpeg'],
      [jpeg.subarray(0, jpeg.length - 40), 'image/jpeg'],
      [concat(Buffer.from('RIFF\0\0\0\0WEBP'), Buffer.alloc(64, 7)), 'image/webp'],
    ] as const) {
      const refused = await upload(visitor, bytes, type);
      assert.equal(refused.status, 400, `${type}: the form's error, not a 500`);
      assert.match(refused.text, /The image file is damaged or not a complete PNG, JPEG, WebP or GIF image\./);
    }
    assert.deepEqual(await served(user.id), before);
  });

  test('a member may upload AVATAR_UPLOADS_PER_HOUR images an hour, refused ones too; the next is refused with Retry-After, decoded by no one, and others still upload', async () => {
    const { user, visitor } = await member();
    assert.equal((await upload(visitor, PLAIN_PNG, 'image/png')).status, 303);
    const before = await served(user.id);
    for (let i = 1; i < AVATAR_UPLOADS_PER_HOUR; i++) {
      assert.equal((await upload(visitor, Buffer.from('not a picture'), 'image/png')).status, 400, `upload ${i + 1}`);
    }
    const refused = await upload(visitor, PLAIN_PNG, 'image/png');
    assert.equal(refused.status, 429);
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.match(refused.text, /Too many images uploaded this hour\. Try again in (\d+ minutes?|1 hour)\./);
    assert.match(refused.text, /id="avatar"[^>]*aria-invalid="true"/);
    assert.deepEqual(await served(user.id), before);
    const other = await member();
    assert.equal((await upload(other.visitor, PLAIN_PNG, 'image/png')).status, 303);
  });
});
