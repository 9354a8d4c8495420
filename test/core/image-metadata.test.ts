/**
 * Avatars lose their metadata (`withoutMetadata`, `checkAvatarUpload`): for each format what only
 * describes the image goes, what draws it stays byte for byte, and a damaged structure is refused
 * as the form's error, never a 500. The images are built in test/support/images.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkAvatarUpload } from '../../src/core/avatars.js';
import { InputError } from '../../src/core/errors.js';
import { type ImageType, withoutMetadata } from '../../src/core/image-metadata.js';
import {
  LATITUDE_BYTES, PLAIN_GIF, PLAIN_JPEG, PLAIN_PNG, PLAIN_WEBP, SECRETS, VP8X_ALPHA, VP8X_EXIF, VP8X_XMP, XMP_PACKET,
  chunk, concat, exifSegment, exifTiff, extendedWebp, gifExtension, gifWith, gifXmp, holds, jpegWith, pngWith,
  riffChunk, scanStart, segment,
} from '../support/images.js';

const APP1 = 0xe1;
const APP2 = 0xe2;
const APP13 = 0xed;
const APP14 = 0xee;
const COM = 0xfe;

function strip(bytes: Uint8Array, type: ImageType): Uint8Array {
  const out = withoutMetadata(bytes, type);
  assert.ok(out, 'the structure holds');
  return out;
}

function assertNoSecrets(bytes: Uint8Array): void {
  for (const secret of SECRETS) assert.ok(!holds(bytes, secret), `"${secret}" is gone`);
}

/** The EXIF Orientation the browser reads: the first APP1 EXIF's IFD0 entry 0x0112, or undefined. */
function orientationOf(jpeg: Uint8Array): number | undefined {
  const at = Buffer.from(jpeg).indexOf(Buffer.from('Exif\0\0', 'latin1'));
  if (at < 0) return undefined;
  const tiff = Buffer.from(jpeg.subarray(at + 6));
  const little = tiff.toString('latin1', 0, 2) === 'II';
  const u16 = (i: number) => (little ? tiff.readUInt16LE(i) : tiff.readUInt16BE(i));
  const ifd = little ? tiff.readUInt32LE(4) : tiff.readUInt32BE(4);
  for (let i = 0; i < u16(ifd); i++) {
    const entry = ifd + 2 + 12 * i;
    if (u16(entry) === 0x0112) return u16(entry + 8);
  }
  return undefined;
}

// ---- JPEG -------------------------------------------------------------------------------------

test('JPEG: a GPS EXIF block is dropped, and the image still starts with SOI and JFIF and ends with its scan and EOI', () => {
  const photo = jpegWith(exifSegment());
  const latitude = Buffer.from(LATITUDE_BYTES);
  assert.ok(Buffer.from(photo).includes(latitude) && SECRETS.slice(0, 4).every((s) => holds(photo, s)), 'the photo carries them');
  const out = strip(photo, 'image/jpeg');
  assertNoSecrets(out);
  assert.ok(!holds(out, 'Exif'), 'no EXIF block at all: the original had no orientation to keep');
  assert.ok(!Buffer.from(out).includes(latitude), 'the latitude is gone');
  assert.deepEqual(out, PLAIN_JPEG, 'exactly the image without the block');
  assert.deepEqual([...out.subarray(0, 4)], [0xff, 0xd8, 0xff, 0xe0], 'SOI, then APP0');
  assert.deepEqual([...out.subarray(-2)], [0xff, 0xd9], 'EOI');
  assert.deepEqual(out.subarray(scanStart(out)), photo.subarray(scanStart(photo)), 'from SOS on, untouched');
});

test('JPEG: an Orientation other than 1 is kept alone in a minimal EXIF block, from either byte order', () => {
  for (const little of [false, true]) {
    for (const orientation of [3, 6, 8]) {
      const out = strip(jpegWith(exifSegment({ orientation, little })), 'image/jpeg');
      assert.equal(orientationOf(out), orientation, `orientation ${orientation}, ${little ? 'II' : 'MM'}`);
      assertNoSecrets(out);
      assert.equal(out.length, PLAIN_JPEG.length + 36, 'the block is 36 bytes: a TIFF header and one IFD entry');
      assert.deepEqual(out.subarray(scanStart(out)), PLAIN_JPEG.subarray(scanStart(PLAIN_JPEG)));
    }
  }
  assert.deepEqual(strip(jpegWith(exifSegment({ orientation: 1 })), 'image/jpeg'), PLAIN_JPEG, 'upright needs no block');
  assert.deepEqual(strip(jpegWith(exifSegment({ orientation: 9 })), 'image/jpeg'), PLAIN_JPEG, 'an orientation that does not exist is not kept');
  assert.deepEqual(strip(jpegWith(segment(APP1, 'Exif\0\0MM\0*\xff\xff\xff\xff')), 'image/jpeg'), PLAIN_JPEG,
    'an unreadable EXIF block is dropped like any other');
});

test('JPEG: XMP, IPTC, comments, MPF and other APPn are dropped; ICC_PROFILE, Adobe and the JFIF header are kept', () => {
  const icc = segment(APP2, 'ICC_PROFILE\0\x01\x01colour profile bytes');
  const adobe = segment(APP14, 'Adobe\0\x64\0\0\0\0\x01');
  const photo = jpegWith(
    exifSegment({ orientation: 6 }),
    segment(APP1, `http://ns.adobe.com/xap/1.0/\0${XMP_PACKET}`),
    icc,
    segment(APP2, 'MPF\0II*\0 a second picture follows the first'),
    segment(APP13, 'Photoshop 3.0\x008BIM\x04\x04 Alice Example'),
    segment(0xe3, 'Meta SecretCam'),
    segment(COM, 'a comment'),
    adobe,
  );
  const out = strip(photo, 'image/jpeg');
  assertNoSecrets(out);
  assert.ok(!holds(out, 'MPF') && !holds(out, 'Photoshop') && !holds(out, 'xap/1.0'));
  assert.ok(Buffer.from(out).includes(Buffer.from(icc)), 'the colour profile, whole');
  assert.ok(Buffer.from(out).includes(Buffer.from(adobe)), 'the colour transform, whole');
  assert.equal(orientationOf(out), 6);
  assert.deepEqual(out.subarray(0, 20), PLAIN_JPEG.subarray(0, 20), 'JFIF first, as it was');
});

test('JPEG: a segment under a reserved marker (JPGn, JPG, RES) is dropped like an APPn; the segments that code the picture stay', () => {
  const photo = jpegWith(
    segment(0xf0, 'SecretCam'),
    segment(0xfd, concat(Buffer.from('Exif\0\0', 'latin1'), exifTiff())),
    segment(0xc8, 'SN-4711-0815'),
    segment(0x02, 'Alice Example'),
    segment(0xdd, Uint8Array.of(0, 0)), // DRI: no restart interval
  );
  const out = strip(photo, 'image/jpeg');
  assertNoSecrets(out);
  assert.ok(!Buffer.from(out).includes(Buffer.from(LATITUDE_BYTES)), 'the latitude is gone');
  assert.deepEqual(out, jpegWith(segment(0xdd, Uint8Array.of(0, 0))));
});

test('JPEG: a JFIF thumbnail goes (a picture of the uncropped original), the JFIF header stays', () => {
  const jfifWithThumbnail = segment(0xe0, concat(PLAIN_JPEG.subarray(6, 18), Uint8Array.of(1, 1, 0xaa, 0xbb, 0xcc)));
  const photo = concat(PLAIN_JPEG.subarray(0, 2), jfifWithThumbnail, PLAIN_JPEG.subarray(20));
  assert.deepEqual(strip(photo, 'image/jpeg'), PLAIN_JPEG);
});

test('JPEG: what follows EOI (a second image, a motion photo\'s video) is dropped, and so is metadata between scans', () => {
  const eoi = PLAIN_JPEG.length - 2;
  const between = concat(PLAIN_JPEG.subarray(0, eoi), segment(COM, 'a comment'), PLAIN_JPEG.subarray(scanStart(PLAIN_JPEG)));
  const twoScans = concat(PLAIN_JPEG.subarray(0, eoi), PLAIN_JPEG.subarray(scanStart(PLAIN_JPEG)));
  assert.deepEqual(strip(between, 'image/jpeg'), twoScans);
  const appended = concat(PLAIN_JPEG, jpegWith(exifSegment()));
  assert.deepEqual(strip(appended, 'image/jpeg'), PLAIN_JPEG);
});

test('JPEG: stuffed bytes, restart markers and fill bytes in the scan do not end it', () => {
  const sos = scanStart(PLAIN_JPEG);
  const header = sos + 2 + 12;
  const scan = Uint8Array.of(0x12, 0xff, 0x00, 0x34, 0xff, 0xd0, 0x56, 0xff, 0xd7, 0x78);
  const photo = concat(PLAIN_JPEG.subarray(0, header), scan, Uint8Array.of(0xff, 0xff, 0xff, 0xd9));
  const out = strip(photo, 'image/jpeg');
  assert.deepEqual(out, concat(PLAIN_JPEG.subarray(0, header), scan, Uint8Array.of(0xff, 0xd9)));
});

// ---- PNG --------------------------------------------------------------------------------------

test('PNG: eXIf, tEXt, zTXt, iTXt and tIME chunks are dropped; the chunks that draw stay byte for byte, with their CRC', () => {
  const gamma = chunk('gAMA', Uint8Array.of(0, 0, 0xb1, 0x8f));
  const physical = chunk('pHYs', Uint8Array.of(0, 0, 0x0b, 0x13, 0, 0, 0x0b, 0x13, 1));
  const image = pngWith(
    gamma,
    chunk('eXIf', exifTiff({ orientation: 6 })),
    chunk('tEXt', 'Comment\0a comment'),
    chunk('zTXt', 'Author\0\0x\x9c compressed Alice Example'),
    chunk('iTXt', `XML:com.adobe.xmp\0\0\0\0\0${XMP_PACKET}`),
    chunk('tIME', Uint8Array.of(0x07, 0xe8, 5, 17, 8, 15, 0)),
    physical,
  );
  const out = strip(image, 'image/png');
  assertNoSecrets(out);
  assert.deepEqual(out, pngWith(gamma, physical));
  for (const type of ['eXIf', 'tEXt', 'zTXt', 'iTXt', 'tIME']) assert.ok(!holds(out, type), `no ${type}`);
  assert.deepEqual(strip(PLAIN_PNG, 'image/png'), PLAIN_PNG, 'a PNG without metadata is unchanged');
});

test('PNG: an ancillary chunk not known to draw the picture is dropped, whatever it is named (C2PA caBX, unofficial zxIf, private chunks)', () => {
  // Ancillary chunks (a lower-case first letter) may be left out by any decoder (PNG 3rd edition
  // 5.4), so only those that change how the picture looks are kept: an allow-list, not a deny-list.
  const transparency = chunk('tRNS', Uint8Array.of(0, 0));
  const colour = chunk('sRGB', Uint8Array.of(0));
  const image = pngWith(
    transparency,
    chunk('caBX', concat(Buffer.from('jumb c2pa.assertions stds.exif '), exifTiff())),
    chunk('zxIf', exifTiff()),
    chunk('exIf', exifTiff()),
    chunk('gIFx', 'ImageMagick Alice Example'),
    chunk('prVt', 'a comment'),
    colour,
  );
  const out = strip(image, 'image/png');
  assertNoSecrets(out);
  assert.ok(!Buffer.from(out).includes(Buffer.from(LATITUDE_BYTES)), 'the latitude is gone');
  assert.deepEqual(out, pngWith(transparency, colour));
});

test('PNG: what follows IEND is dropped', () => {
  assert.deepEqual(strip(concat(PLAIN_PNG, Buffer.from('Alice Example')), 'image/png'), PLAIN_PNG);
});

// ---- WebP -------------------------------------------------------------------------------------

test('WebP: EXIF and XMP chunks are dropped, VP8X no longer flags them, and the RIFF size is what is left', () => {
  const image = extendedWebp(VP8X_ALPHA | VP8X_EXIF | VP8X_XMP,
    riffChunk('EXIF', exifTiff({ orientation: 6 })),
    riffChunk('XMP ', `${XMP_PACKET}.`)); // odd length: padded
  const out = strip(image, 'image/webp');
  assertNoSecrets(out);
  assert.deepEqual(out, extendedWebp(VP8X_ALPHA), 'only the alpha flag is left, the canvas as it was');
  const view = Buffer.from(out);
  assert.equal(view.readUInt32LE(4), out.length - 8, 'RIFF size');
  assert.equal(view[20]! & (VP8X_EXIF | VP8X_XMP), 0);
  assert.deepEqual(strip(PLAIN_WEBP, 'image/webp'), PLAIN_WEBP, 'a simple WebP is unchanged');
});

test('WebP: a chunk that does not draw the picture is dropped, whatever its name: EXIF or XMP in another case, or any unknown fourcc', () => {
  // RFC 9649 2.7: readers ignore unknown chunks, so leaving them out changes no picture.
  const image = extendedWebp(VP8X_ALPHA | VP8X_EXIF | VP8X_XMP,
    riffChunk('exif', exifTiff({ orientation: 6 })),
    riffChunk('xmp ', XMP_PACKET),
    riffChunk('XMP\0', XMP_PACKET),
    riffChunk('C2PA', concat(Buffer.from('stds.exif '), exifTiff())),
    riffChunk('ABCD', 'a comment'));
  const out = strip(image, 'image/webp');
  assertNoSecrets(out);
  assert.ok(!Buffer.from(out).includes(Buffer.from(LATITUDE_BYTES)), 'the latitude is gone');
  assert.deepEqual(out, extendedWebp(VP8X_ALPHA));
});

test('WebP: an animation frame keeps its alpha and bitstream; the chunks of other names inside it are dropped, and its size is what is left', () => {
  const frameHeader = new Uint8Array(16); // position, size minus one, duration, flags: all zero
  const bitstream = PLAIN_WEBP.subarray(12); // its VP8L chunk
  const frame = (...inside: Uint8Array[]) => riffChunk('ANMF', concat(frameHeader, ...inside));
  const image = extendedWebp(VP8X_ALPHA | VP8X_EXIF, riffChunk('ANIM', new Uint8Array(6)),
    frame(bitstream, riffChunk('EXIF', exifTiff()), riffChunk('ABCD', 'a comment')));
  const out = strip(image, 'image/webp');
  assertNoSecrets(out);
  assert.ok(!Buffer.from(out).includes(Buffer.from(LATITUDE_BYTES)), 'the latitude is gone');
  assert.deepEqual(out, extendedWebp(VP8X_ALPHA, riffChunk('ANIM', new Uint8Array(6)), frame(bitstream)));
  assert.equal(withoutMetadata(extendedWebp(0, riffChunk('ANMF', new Uint8Array(10))), 'image/webp'), undefined, 'a frame shorter than its header is damaged');
  assert.equal(withoutMetadata(extendedWebp(0, frame(Buffer.from('VP8L\xff\0\0\0', 'latin1'))), 'image/webp'), undefined,
    'a chunk past the end of its frame is damaged');
});

// ---- GIF --------------------------------------------------------------------------------------

test('GIF: comment extensions and XMP application extensions are dropped; the loop extension and the image stay', () => {
  const loop = gifExtension(0xff, 'NETSCAPE2.0', Uint8Array.of(1, 0, 0));
  const image = gifWith(gifExtension(0xfe, 'a comment'), loop, gifXmp(XMP_PACKET), gifExtension(0xfe, 'SecretCam', ' SN-4711-0815'));
  const out = strip(image, 'image/gif');
  assertNoSecrets(out);
  assert.ok(!holds(out, 'XMP DataXMP'));
  assert.deepEqual(out, gifWith(loop));
  assert.deepEqual(strip(PLAIN_GIF, 'image/gif'), PLAIN_GIF, 'a GIF without metadata is unchanged');
});

test('GIF: an application extension is kept only when it is the loop or the colour profile; any other vendor\'s, and unknown extensions, are dropped', () => {
  const loop = gifExtension(0xff, 'ANIMEXTS1.0', Uint8Array.of(1, 0, 0));
  const icc = gifExtension(0xff, 'ICCRGBG1012', 'colour profile bytes');
  const image = gifWith(
    loop,
    gifExtension(0xff, 'ImageMagick', 'gamma=0.45 Alice Example'),
    gifExtension(0xff, 'MGKEXIF0000', concat(Buffer.from('Exif\0\0'), exifTiff())),
    gifExtension(0xff, 'xmp dataXMP', XMP_PACKET),
    gifExtension(0x7f, 'SecretCam'),
    icc,
  );
  const out = strip(image, 'image/gif');
  assertNoSecrets(out);
  assert.ok(!Buffer.from(out).includes(Buffer.from(LATITUDE_BYTES)), 'the latitude is gone');
  assert.deepEqual(out, gifWith(loop, icc));
});

// ---- Damaged structures -----------------------------------------------------------------------

test('a truncated image, or a length past the end, is refused: the form says the file is damaged', () => {
  const photo = jpegWith(exifSegment({ orientation: 6 }));
  const webp = extendedWebp(VP8X_EXIF, riffChunk('EXIF', exifTiff()));
  const gif = gifWith(gifExtension(0xfe, 'a comment'));
  const lengthPastEnd = (bytes: Uint8Array, at: number, value: number[]) => { const c = bytes.slice(); c.set(value, at); return c; };
  const damaged: Array<[string, Uint8Array]> = [
    ['JPEG cut inside the EXIF block', photo.subarray(0, 40)],
    ['JPEG cut inside its scan', photo.subarray(0, photo.length - 3)],
    ['JPEG without EOI', photo.subarray(0, photo.length - 2)],
    ['JPEG with a segment length past the end', lengthPastEnd(photo, 22, [0xff, 0xff])],
    ['JPEG with a segment length below 2', lengthPastEnd(photo, 22, [0x00, 0x01])],
    ['JPEG with no marker where one must be', lengthPastEnd(photo, 20, [0x00])],
    ['JPEG that ends before any scan', concat(PLAIN_JPEG.subarray(0, 20), Uint8Array.of(0xff, 0xd9))],
    ['PNG cut inside a chunk', PLAIN_PNG.subarray(0, 40)],
    ['PNG without IEND', PLAIN_PNG.subarray(0, PLAIN_PNG.length - 12)],
    ['PNG with a chunk length past the end', lengthPastEnd(PLAIN_PNG, 8, [0x7f, 0, 0, 0])],
    ['PNG with a chunk type that is no name', lengthPastEnd(PLAIN_PNG, 12, [0, 1, 2, 3])],
    ['WebP whose RIFF size is past the end', lengthPastEnd(webp, 4, [0xff, 0xff, 0, 0])],
    ['WebP cut inside a chunk', webp.subarray(0, webp.length - 4)],
    ['WebP with a chunk size past the RIFF size', lengthPastEnd(webp, 16, [0xff, 0, 0, 0])],
    ['GIF cut inside an extension', gif.subarray(0, 25)],
    ['GIF without its trailer', gif.subarray(0, gif.length - 1)],
    ['GIF with a block that is no block', lengthPastEnd(gif, 19, [0x99])],
  ];
  for (const [what, bytes] of damaged) {
    const type = what.startsWith('JPEG') ? 'image/jpeg' : what.startsWith('PNG') ? 'image/png' : what.startsWith('WebP') ? 'image/webp' : 'image/gif';
    assert.equal(withoutMetadata(bytes, type), undefined, what);
    assert.throws(() => checkAvatarUpload(bytes), (error: unknown) => {
      assert.ok(error instanceof InputError, what);
      assert.deepEqual(error.problems, [{ field: 'avatar', message: 'the image file is damaged' }], what);
      return true;
    });
  }
});

test('an upload is stored without its metadata, with the type its bytes show', () => {
  assert.deepEqual(checkAvatarUpload(jpegWith(exifSegment())), { contentType: 'image/jpeg', image: PLAIN_JPEG });
  assert.deepEqual(checkAvatarUpload(pngWith(chunk('tEXt', 'Comment\0a comment'))), { contentType: 'image/png', image: PLAIN_PNG });
});
