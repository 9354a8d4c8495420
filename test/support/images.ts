/**
 * Images for the avatar tests: small valid ones (sharp wrote them, with no metadata) and the
 * pieces a phone, an editor or an attacker adds around them, built byte by byte so a test reads
 * what the file holds: an EXIF block with a GPS position, a camera serial and an orientation,
 * PNG chunks (text, an invented critical one), a GIF comment, a PNG header declaring any size.
 */
import { crc32 } from 'node:zlib';

/** An 8×8 baseline JPEG: SOI, APP0 JFIF, two DQT, SOF0, four DHT, SOS, its scan, EOI. */
export const PLAIN_JPEG = hex('ffd8ffe000104a46494600010100000100010000ffdb004300140e0f120f0d14121012171514181e32211e1c1c1e3d2c2e243249404c4b47404645505a736250556d5645466488656d777b8182814e608d978c7d96737e817cffdb0043011517171e1a1e3b21213b7c5346537c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7cffc00011080008000803012200021101031101ffc40014000100000000000000000000000000000000ffc40014100100000000000000000000000000000000ffc4001501010100000000000000000000000000000205ffc40014110100000000000000000000000000000000ffda000c03010002110311003f0000294fffd9');
/** A 1×1 red PNG: signature, IHDR, pHYs, IDAT, IEND. */
export const PLAIN_PNG = hex('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000970485973000003e8000003e801b57b526b0000000d49444154089963f8cfc0f01f00050001ffabce36890000000049454e44ae426082');
/** A 1×1 GIF89a: header, screen with a global colour table, graphic control extension, image, trailer. */
export const PLAIN_GIF = hex('47494638396101000100f00000ff000000000021f90400000000002c00000000010001000002024401003b');

/** Text that only metadata holds: none of it may be in a stored avatar. */
export const SECRETS = ['Harbour Lane 12', 'SecretCam', 'SN-4711-0815', '2024:05:17 08:15:00', 'a comment'];

/** Whether `text` appears anywhere in `bytes`. */
export function holds(bytes: Uint8Array, text: string): boolean {
  return Buffer.from(bytes).includes(Buffer.from(text, 'latin1'));
}

// ---- EXIF -------------------------------------------------------------------------------------

interface Entry { tag: number; type: number; count: number; value: Uint8Array }

const ascii = (tag: number, text: string): Entry => ({ tag, type: 2, count: text.length + 1, value: Buffer.from(`${text}\0`, 'latin1') });
const short = (tag: number, n: number): Entry => ({ tag, type: 3, count: 1, value: numbers(2, [n]) });
const rationals = (tag: number, pairs: number[]): Entry => ({ tag, type: 5, count: pairs.length / 2, value: numbers(4, pairs) });
const undefinedBytes = (tag: number, text: string): Entry => ({ tag, type: 7, count: text.length, value: Buffer.from(text, 'latin1') });

/** The latitude 59° 54′ 48.3″ as GPSLatitude's three rationals: the bytes that give a home away. */
const LATITUDE = [59, 1, 54, 1, 483, 10];
/** LATITUDE as the EXIF block holds it. */
export const LATITUDE_BYTES = numbers(4, LATITUDE);

/**
 * A big-endian TIFF structure as EXIF holds it: IFD0 with the camera's make, its serial, a time,
 * maybe an Orientation, and a pointer to a GPS IFD with a latitude and a place name.
 */
function exifTiff(orientation: number | undefined): Uint8Array {
  const gps = [ascii(0x0001, 'N'), rationals(0x0002, LATITUDE), undefinedBytes(0x001c, 'ASCII\0\0\0Harbour Lane 12')];
  const ifd0 = [ascii(0x010f, 'SecretCam'), ...(orientation === undefined ? [] : [short(0x0112, orientation)]),
    ascii(0x0132, '2024:05:17 08:15:00'), ascii(0xa431, 'SN-4711-0815')];
  const ifdSize = (entries: Entry[]) => 2 + 12 * entries.length + 4;
  const gpsAt = 8 + ifdSize(ifd0) + 12; // IFD0 gets one more entry: the GPS pointer
  const out = new Uint8Array(gpsAt + ifdSize(gps) + 256);
  const view = new DataView(out.buffer);
  out.set(Buffer.from('MM'), 0);
  view.setUint16(2, 42);
  view.setUint32(4, 8);
  let data = gpsAt + ifdSize(gps);
  const writeIfd = (at: number, entries: Entry[]) => {
    view.setUint16(at, entries.length);
    entries.forEach((entry, i) => {
      const place = at + 2 + 12 * i;
      view.setUint16(place, entry.tag);
      view.setUint16(place + 2, entry.type);
      view.setUint32(place + 4, entry.count);
      if (entry.value.length <= 4) {
        out.set(entry.value, place + 8);
      } else {
        view.setUint32(place + 8, data);
        out.set(entry.value, data);
        data += entry.value.length + (entry.value.length & 1);
      }
    });
    view.setUint32(at + 2 + 12 * entries.length, 0);
  };
  const pointer: Entry = { tag: 0x8825, type: 4, count: 1, value: numbers(4, [gpsAt]) };
  writeIfd(8, [...ifd0, pointer].sort((a, b) => a.tag - b.tag));
  writeIfd(gpsAt, gps);
  return out.subarray(0, data);
}

function numbers(width: 2 | 4, values: number[]): Uint8Array {
  const out = new Uint8Array(width * values.length);
  const view = new DataView(out.buffer);
  values.forEach((n, i) => (width === 2 ? view.setUint16(i * width, n) : view.setUint32(i * width, n)));
  return out;
}

// ---- JPEG -------------------------------------------------------------------------------------

/** A JPEG marker segment: 0xFF, the code, the length (itself and the data), the data. */
function segment(code: number, data: Uint8Array): Uint8Array {
  return concat(Uint8Array.of(0xff, code, (data.length + 2) >> 8, (data.length + 2) & 0xff), data);
}

/** APP1 EXIF, as a phone writes it right after SOI. */
export function exifSegment(options: { orientation?: number } = {}): Uint8Array {
  return segment(0xe1, concat(Buffer.from('Exif\0\0', 'latin1'), exifTiff(options.orientation)));
}

/** `jpeg` with these segments right after its SOI, where a phone writes its EXIF. */
export function jpegWith(jpeg: Uint8Array, ...segments: Uint8Array[]): Uint8Array {
  return concat(jpeg.subarray(0, 2), ...segments, jpeg.subarray(2));
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

/** `png` with these chunks right after its IHDR. */
export function pngWith(png: Uint8Array, ...chunks: Uint8Array[]): Uint8Array {
  return concat(png.subarray(0, 33), ...chunks, png.subarray(33));
}

/** The types of a PNG's chunks, in order. */
export function pngChunkTypes(png: Uint8Array): string[] {
  const types: string[] = [];
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  for (let at = 8; at + 8 <= png.length; at += 12 + view.getUint32(at)) types.push(Buffer.from(png.subarray(at + 4, at + 8)).toString('latin1'));
  return types;
}

/** PLAIN_PNG with an IHDR that declares `width` × `height`: a few dozen bytes that claim any size. */
export function pngDeclaring(width: number, height: number): Uint8Array {
  const header = new Uint8Array(13);
  header.set(PLAIN_PNG.subarray(16, 29));
  new DataView(header.buffer).setUint32(0, width);
  new DataView(header.buffer).setUint32(4, height);
  return concat(PLAIN_PNG.subarray(0, 8), chunk('IHDR', header), PLAIN_PNG.subarray(33));
}

// ---- GIF --------------------------------------------------------------------------------------

/** A comment extension: introducer, label 0xFE, the text in one sub-block, terminator. */
export function gifComment(text: string): Uint8Array {
  return concat(Uint8Array.of(0x21, 0xfe, text.length), Buffer.from(text, 'latin1'), Uint8Array.of(0));
}

/** PLAIN_GIF with these blocks after its global colour table. */
export function gifWith(...blocks: Uint8Array[]): Uint8Array {
  return concat(PLAIN_GIF.subarray(0, 19), ...blocks, PLAIN_GIF.subarray(19));
}

// ---------------------------------------------------------------------------------------------

function hex(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'hex'));
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}
