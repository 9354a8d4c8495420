/**
 * Small images with metadata in them, built byte by byte around real images that carry none
 * (ImageMagick and cwebp wrote them, with `-strip`): a JPEG with an EXIF block holding a GPS
 * position, a camera serial and an orientation, and PNG, WebP and GIF files with their kinds of
 * metadata. Each piece is what a phone or an editor writes, small enough to read in a test.
 */
import { crc32 } from 'node:zlib';

/** An 8×8 baseline JPEG: SOI, APP0 JFIF, two DQT, SOF0, four DHT, SOS, its scan, EOI. */
export const PLAIN_JPEG = hex('ffd8ffe000104a46494600010100000100010000ffdb004300140e0f120f0d14121012171514181e32211e1c1c1e3d2c2e243249404c4b47404645505a736250556d5645466488656d777b8182814e608d978c7d96737e817cffdb0043011517171e1a1e3b21213b7c5346537c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7cffc00011080008000803012200021101031101ffc40014000100000000000000000000000000000000ffc40014100100000000000000000000000000000000ffc4001501010100000000000000000000000000000205ffc40014110100000000000000000000000000000000ffda000c03010002110311003f0000294fffd9');
/** A 1×1 PNG: signature, IHDR, IDAT, IEND. */
export const PLAIN_PNG = hex('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a7a3b9e10000000049454e44ae426082');
/** A 1×1 lossless WebP: RIFF, WEBP, VP8L. */
export const PLAIN_WEBP = hex('524946461c000000574542505650384c0f0000002f000000000710fd8ffe0722a2ff0100');
/** A 1×1 GIF89a: header, screen with a global colour table, graphic control extension, image, trailer. */
export const PLAIN_GIF = hex('47494638396101000100f00000ff000000000021f90400000000002c00000000010001000002024401003b');

/** Text that only metadata holds: none of it may be in a stored avatar. */
export const SECRETS = ['Harbour Lane 12', 'SecretCam', 'SN-4711-0815', '2024:05:17 08:15:00', 'Alice Example', 'a comment'];

/** Whether `text` appears anywhere in `bytes`. */
export function holds(bytes: Uint8Array, text: string): boolean {
  return Buffer.from(bytes).includes(Buffer.from(text, 'latin1'));
}

// ---- EXIF -------------------------------------------------------------------------------------

interface Entry { tag: number; type: number; count: number; value: (little: boolean) => Uint8Array }

const ascii = (tag: number, text: string): Entry => ({ tag, type: 2, count: text.length + 1, value: () => Buffer.from(`${text}\0`, 'latin1') });
const short = (tag: number, n: number): Entry => ({ tag, type: 3, count: 1, value: (little) => numbers(2, [n], little) });
const rationals = (tag: number, pairs: number[]): Entry => ({ tag, type: 5, count: pairs.length / 2, value: (little) => numbers(4, pairs, little) });
const undefinedBytes = (tag: number, text: string): Entry => ({ tag, type: 7, count: text.length, value: () => Buffer.from(text, 'latin1') });

/** The latitude 59° 54′ 48.3″ as GPSLatitude's three rationals: the bytes that give a home away. */
export const LATITUDE = [59, 1, 54, 1, 483, 10];
/** LATITUDE as a big-endian EXIF block (the default of `exifTiff`) holds it. */
export const LATITUDE_BYTES = numbers(4, LATITUDE, false);

/**
 * A TIFF structure as EXIF holds it: IFD0 with the camera's make, its serial, a time, maybe an
 * Orientation, and a pointer to a GPS IFD with a latitude and a place name.
 */
export function exifTiff(options: { orientation?: number; little?: boolean } = {}): Uint8Array {
  const little = options.little ?? false;
  const gps = [ascii(0x0001, 'N'), rationals(0x0002, LATITUDE), undefinedBytes(0x001c, 'ASCII\0\0\0Harbour Lane 12')];
  const ifd0 = [ascii(0x010f, 'SecretCam'), ...(options.orientation === undefined ? [] : [short(0x0112, options.orientation)]),
    ascii(0x0132, '2024:05:17 08:15:00'), ascii(0xa431, 'SN-4711-0815')];
  const ifdSize = (entries: Entry[]) => 2 + 12 * entries.length + 4;
  const gpsAt = 8 + ifdSize(ifd0) + 12; // IFD0 gets one more entry: the GPS pointer
  const dataAt = gpsAt + ifdSize(gps);
  const out = new Uint8Array(dataAt + 256);
  const view = new DataView(out.buffer);
  out.set(Buffer.from(little ? 'II' : 'MM'), 0);
  view.setUint16(2, 42, little);
  view.setUint32(4, 8, little);
  let data = dataAt;
  const writeIfd = (at: number, entries: Entry[]) => {
    view.setUint16(at, entries.length, little);
    entries.forEach((entry, i) => {
      const place = at + 2 + 12 * i;
      const value = entry.value(little);
      view.setUint16(place, entry.tag, little);
      view.setUint16(place + 2, entry.type, little);
      view.setUint32(place + 4, entry.count, little);
      if (value.length <= 4) {
        out.set(value, place + 8);
      } else {
        view.setUint32(place + 8, data, little);
        out.set(value, data);
        data += value.length + (value.length & 1);
      }
    });
    view.setUint32(at + 2 + 12 * entries.length, 0, little);
  };
  const pointer: Entry = { tag: 0x8825, type: 4, count: 1, value: (l) => numbers(4, [gpsAt], l) };
  writeIfd(8, [...ifd0, pointer].sort((a, b) => a.tag - b.tag));
  writeIfd(gpsAt, gps);
  return out.subarray(0, data);
}

function numbers(width: 2 | 4, values: number[], little: boolean): Uint8Array {
  const out = new Uint8Array(width * values.length);
  const view = new DataView(out.buffer);
  values.forEach((n, i) => (width === 2 ? view.setUint16(i * width, n, little) : view.setUint32(i * width, n, little)));
  return out;
}

// ---- JPEG -------------------------------------------------------------------------------------

/** A JPEG marker segment: 0xFF, the code, the length (itself and the data), the data. */
export function segment(code: number, data: Uint8Array | string): Uint8Array {
  const body = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  return concat(Uint8Array.of(0xff, code, (body.length + 2) >> 8, (body.length + 2) & 0xff), body);
}

/** APP1 EXIF, as a phone writes it right after SOI. */
export function exifSegment(options: { orientation?: number; little?: boolean } = {}): Uint8Array {
  return segment(0xe1, concat(Buffer.from('Exif\0\0', 'latin1'), exifTiff(options)));
}

/** PLAIN_JPEG with these segments after its APP0 JFIF. */
export function jpegWith(...segments: Uint8Array[]): Uint8Array {
  return concat(PLAIN_JPEG.subarray(0, 20), ...segments, PLAIN_JPEG.subarray(20));
}

/** Where the first scan's header starts (SOS): from there on nothing may change. */
export function scanStart(jpeg: Uint8Array): number {
  return Buffer.from(jpeg).indexOf(Buffer.from([0xff, 0xda]));
}

// ---- PNG --------------------------------------------------------------------------------------

/** A PNG chunk with its length and CRC. */
export function chunk(type: string, data: Uint8Array | string): Uint8Array {
  const body = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  const typed = concat(Buffer.from(type, 'latin1'), body);
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  out.set(typed, 4);
  view.setUint32(8 + body.length, crc32(typed));
  return out;
}

/** PLAIN_PNG with these chunks between IHDR and IDAT. */
export function pngWith(...chunks: Uint8Array[]): Uint8Array {
  return concat(PLAIN_PNG.subarray(0, 33), ...chunks, PLAIN_PNG.subarray(33));
}

// ---- WebP -------------------------------------------------------------------------------------

/** VP8X flags (RFC 9649 2.7). */
export const VP8X_ALPHA = 0x10;
export const VP8X_EXIF = 0x08;
export const VP8X_XMP = 0x04;

/** A RIFF chunk, padded to an even length. */
export function riffChunk(fourcc: string, data: Uint8Array | string): Uint8Array {
  const body = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  const out = new Uint8Array(8 + body.length + (body.length & 1));
  out.set(Buffer.from(fourcc, 'latin1'), 0);
  new DataView(out.buffer).setUint32(4, body.length, true);
  out.set(body, 8);
  return out;
}

/** The extended WebP of PLAIN_WEBP: VP8X with these flags on a 1×1 canvas, then the image, then these chunks. */
export function extendedWebp(flags: number, ...after: Uint8Array[]): Uint8Array {
  const vp8x = riffChunk('VP8X', Uint8Array.of(flags, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  const chunks = concat(vp8x, PLAIN_WEBP.subarray(12), ...after);
  const header = concat(Buffer.from('RIFF'), new Uint8Array(4), Buffer.from('WEBP'));
  new DataView(header.buffer).setUint32(4, 4 + chunks.length, true);
  return concat(header, chunks);
}

// ---- GIF --------------------------------------------------------------------------------------

/** An extension block: introducer, label, the data in sub-blocks of at most 255 bytes, terminator. */
export function gifExtension(label: number, ...blocks: Array<Uint8Array | string>): Uint8Array {
  const parts = blocks.map((b) => (typeof b === 'string' ? Buffer.from(b, 'latin1') : b))
    .map((b) => concat(Uint8Array.of(b.length), b));
  return concat(Uint8Array.of(0x21, label), ...parts, Uint8Array.of(0));
}

/** XMP in a GIF (XMP specification part 3): the packet as raw bytes after the identifier, then the 258-byte magic trailer. */
export function gifXmp(packet: string): Uint8Array {
  const trailer = Uint8Array.from({ length: 258 }, (_, i) => (i === 0 ? 1 : i === 257 ? 0 : 256 - i));
  return concat(Uint8Array.of(0x21, 0xff, 11), Buffer.from(`XMP DataXMP${packet}`, 'latin1'), trailer);
}

/** PLAIN_GIF with these blocks after its global colour table. */
export function gifWith(...blocks: Uint8Array[]): Uint8Array {
  return concat(PLAIN_GIF.subarray(0, 19), ...blocks, PLAIN_GIF.subarray(19));
}

export const XMP_PACKET = '<x:xmpmeta xmlns:x="adobe:ns:meta/"><dc:creator>Alice Example</dc:creator></x:xmpmeta>';

// ---------------------------------------------------------------------------------------------

function hex(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'hex'));
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}
