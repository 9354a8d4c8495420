/**
 * Metadata taken out of an image by walking its container, never by decoding it: what draws the
 * picture (compressed data, tables, colour profile, animation) is copied byte for byte, and what
 * only describes it is dropped: EXIF (GPS position, camera serial, times), XMP, IPTC, comments,
 * text chunks and embedded second images. One function per format, in one table.
 *
 * Each walk stops at the format's end marker and drops whatever follows it: phones append a
 * second image there (JPEG MPF, CIPA DC-007) or a motion photo's video, each with its own EXIF.
 */

export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** The image as it is without its metadata, or `undefined` when its structure is damaged (cut short, a length past the end). */
export function withoutMetadata(bytes: Uint8Array, type: ImageType): Uint8Array | undefined {
  try {
    return STRIPPERS[type](bytes);
  } catch (error) {
    if (error instanceof Damaged) return undefined;
    throw error;
  }
}

const STRIPPERS: Record<ImageType, (bytes: Uint8Array) => Uint8Array> = {
  'image/jpeg': jpeg,
  'image/png': png,
  'image/webp': webp,
  'image/gif': gif,
};

/** Thrown inside a walk when the structure does not hold; `withoutMetadata` answers `undefined`. */
class Damaged extends Error {}

// ---- JPEG (ITU T.81 annex B; JFIF 1.02; EXIF 2.32 section 4.5) ----------------------------------

const SOI = 0xd8;
const EOI = 0xd9;
const SOS = 0xda;
const APP0 = 0xe0;
const APP1 = 0xe1;
const APP2 = 0xe2;
const APP14 = 0xee;
const APP15 = 0xef;
/** EXIF 2.32 4.6.4: Orientation, one SHORT in IFD0; 1 is upright. */
const ORIENTATION_TAG = 0x0112;

/**
 * Keeps APP0 JFIF (without its thumbnail), APP2 ICC_PROFILE and APP14 Adobe, which change how
 * the picture looks, and the segments of T.81 that code it (frames, tables, restart interval,
 * scans); drops every other APPn (APP1 EXIF and XMP, APP2 MPF, APP13 IPTC), COM, and the
 * reserved JPGn and RES markers, before the first scan and between scans. An EXIF Orientation
 * other than 1 comes back alone in a minimal APP1, so the avatar is not shown sideways.
 */
function jpeg(bytes: Uint8Array): Uint8Array {
  if (bytes[0] !== 0xff || bytes[1] !== SOI) throw new Damaged();
  const out: Uint8Array[] = [bytes.subarray(0, 2)];
  let at = 2;
  let scanned = false;
  let exifSeen = false;
  for (;;) {
    // A marker is 0xFF, maybe more 0xFF as fill, then its code (T.81 B.1.1.2).
    if (bytes[at] !== 0xff) throw new Damaged();
    while (bytes[at] === 0xff) at++;
    const code = byteAt(bytes, at);
    at += 1;
    if (code === EOI) {
      if (!scanned) throw new Damaged();
      out.push(Uint8Array.of(0xff, EOI));
      return concat(out);
    }
    if (code === 0x00 || code === SOI || (code >= 0xd0 && code <= 0xd7)) throw new Damaged();
    if (code === 0x01) { // TEM: a marker with no length
      out.push(Uint8Array.of(0xff, code));
      continue;
    }
    const length = u16be(bytes, at);
    const end = at + length;
    if (length < 2) throw new Damaged();
    need(bytes, end);
    const data = bytes.subarray(at + 2, end);
    const segment = keptSegment(code, data, bytes.subarray(at - 2, end));
    if (segment) out.push(segment);
    if (code === APP1 && !exifSeen && ascii(data, 0, 'Exif\0')) {
      exifSeen = true;
      const orientation = exifOrientation(data.subarray(6));
      if (orientation !== 1) out.push(orientationSegment(orientation));
    }
    at = end;
    if (code === SOS) {
      scanned = true;
      const scanEnd = entropyCodedEnd(bytes, at);
      out.push(bytes.subarray(at, scanEnd));
      at = scanEnd;
    }
  }
}

/** The segment as it is kept (`segment` is its marker, length and data), or `undefined` when dropped. */
function keptSegment(code: number, data: Uint8Array, segment: Uint8Array): Uint8Array | undefined {
  if (code < APP0 || code > APP15) return codesPicture(code) ? segment : undefined;
  if (code === APP0 && ascii(data, 0, 'JFIF\0')) {
    // JFIF 1.02: 14 bytes, then an optional thumbnail of the whole picture, which cropping leaves behind.
    if (data.length <= 14) return segment;
    return concat([Uint8Array.of(0xff, APP0, 0x00, 16), data.subarray(0, 12), Uint8Array.of(0, 0)]);
  }
  if (code === APP2 && ascii(data, 0, 'ICC_PROFILE\0')) return segment;
  if (code === APP14 && ascii(data, 0, 'Adobe')) return segment;
  return undefined;
}

/**
 * Whether a segment that is not APPn is one of T.81's that code the picture (Table B.1): SOF0-15
 * (0xC0-0xCF, with DHT 0xC4 and DAC 0xCC among them) but the reserved JPG (0xC8), and SOS, DQT,
 * DNL, DRI, DHP, EXP (0xDA-0xDF). Not COM, and not the reserved JPGn (0xF0-0xFD) and RES (0x02-0xBF),
 * which no decoder needs and anything could be written into.
 */
function codesPicture(code: number): boolean {
  return (code >= 0xc0 && code <= 0xcf && code !== 0xc8) || (code >= SOS && code <= 0xdf);
}

/**
 * Where the entropy-coded data that follows a scan header ends: at the first marker, that is 0xFF
 * followed by anything but 0x00 (a stuffed 0xFF) or a restart marker (T.81 B.1.1.5, F.1.2.3).
 */
function entropyCodedEnd(bytes: Uint8Array, from: number): number {
  let at = from;
  for (;;) {
    at = bytes.indexOf(0xff, at);
    if (at < 0 || at + 1 >= bytes.length) throw new Damaged();
    const next = bytes[at + 1]!;
    if (next !== 0x00 && (next < 0xd0 || next > 0xd7)) return at;
    at += 2;
  }
}

/** IFD0's Orientation in an EXIF block (a TIFF structure), or 1 when it has none or it cannot be read. */
function exifOrientation(tiff: Uint8Array): number {
  const little = ascii(tiff, 0, 'II*\0');
  if (!little && !ascii(tiff, 0, 'MM\0*')) return 1;
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const u16 = (at: number) => (at + 2 <= tiff.length ? view.getUint16(at, little) : undefined);
  const ifd = tiff.length >= 8 ? view.getUint32(4, little) : 0;
  const count = u16(ifd) ?? 0;
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + 12 * i;
    if (entry + 12 > tiff.length) return 1;
    if (u16(entry) !== ORIENTATION_TAG) continue;
    const value = u16(entry + 8) ?? 1;
    return u16(entry + 2) === 3 && value >= 1 && value <= 8 ? value : 1;
  }
  return 1;
}

/** An APP1 EXIF segment holding only Orientation: a big-endian TIFF header and IFD0 of one entry. */
function orientationSegment(orientation: number): Uint8Array {
  return Uint8Array.of(
    0xff, APP1, 0x00, 34, // length: itself, the identifier, the TIFF below
    0x45, 0x78, 0x69, 0x66, 0x00, 0x00, // "Exif\0\0"
    0x4d, 0x4d, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x08, // "MM", 42, IFD0 at offset 8
    0x00, 0x01, // one entry
    0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, orientation, 0x00, 0x00, // Orientation, SHORT, 1 value
    0x00, 0x00, 0x00, 0x00, // no next IFD
  );
}

// ---- PNG (PNG 3rd edition 5.3, 5.4, 11.3) ------------------------------------------------------

/**
 * The ancillary chunks that change how the picture looks: transparency, colour space and
 * profile, significant bits, background, pixel size, HDR, and APNG's animation. Every other
 * ancillary chunk goes, whatever its name: besides EXIF, text and time (eXIf, tEXt, zTXt, iTXt,
 * tIME), tools write metadata under names no list can foresee (C2PA's caBX, the unofficial zxIf,
 * ImageMagick's gIFx, private chunks), and any decoder may leave an ancillary chunk out (5.4).
 */
const PNG_KEPT_ANCILLARY = new Set([
  'tRNS', 'gAMA', 'cHRM', 'sRGB', 'iCCP', 'cICP', 'mDCV', 'cLLI', 'mDCv', 'cLLi', 'sBIT', 'bKGD', 'pHYs', 'acTL', 'fcTL', 'fdAT',
]);

/** Whether a chunk is kept: every critical one (upper-case first letter, 5.4), and the ancillary ones above. */
function pngKept(type: string): boolean {
  return (type.charCodeAt(0) & 0x20) === 0 || PNG_KEPT_ANCILLARY.has(type);
}

/** Every chunk up to IEND that draws the picture, each copied whole with its CRC. */
function png(bytes: Uint8Array): Uint8Array {
  if (!ascii(bytes, 0, '\x89PNG\r\n\x1a\n')) throw new Damaged();
  const out: Uint8Array[] = [bytes.subarray(0, 8)];
  let at = 8;
  for (;;) {
    const length = u32be(bytes, at);
    need(bytes, at + 8);
    const type = latin1(bytes, at + 4, 4);
    if (length > 0x7fffffff || !/^[A-Za-z]{4}$/.test(type)) throw new Damaged();
    const end = at + 12 + length;
    need(bytes, end);
    if (pngKept(type)) out.push(bytes.subarray(at, end));
    at = end;
    if (type === 'IEND') return concat(out);
  }
}

// ---- WebP (RFC 9649 2.5, 2.7) -------------------------------------------------------------------

/** VP8X flags (RFC 9649 2.7): an EXIF chunk is present, an XMP chunk is present. */
const VP8X_EXIF = 0x08;
const VP8X_XMP = 0x04;
/**
 * The chunks that draw the picture (RFC 9649 2.5-2.7): the bitstreams, alpha, animation, colour
 * profile. Every other chunk goes, whatever its fourcc: EXIF and XMP, the same written in another
 * case or with a NUL, and chunks of names no list foresees; readers ignore unknown chunks (2.7).
 */
const WEBP_KEPT = new Set(['VP8 ', 'VP8L', 'VP8X', 'ALPH', 'ANIM', 'ANMF', 'ICCP']);

/** Every chunk that draws the picture; VP8X no longer announces EXIF or XMP, and the RIFF size is what is left. */
function webp(bytes: Uint8Array): Uint8Array {
  if (!ascii(bytes, 0, 'RIFF') || !ascii(bytes, 8, 'WEBP')) throw new Damaged();
  const riffEnd = 8 + u32le(bytes, 4);
  if (riffEnd < 12) throw new Damaged();
  need(bytes, riffEnd);
  const chunks: Uint8Array[] = [];
  let at = 12;
  while (at < riffEnd) {
    if (at + 8 > riffEnd) throw new Damaged();
    const fourcc = latin1(bytes, at, 4);
    const size = u32le(bytes, at + 4);
    const end = at + 8 + size + (size & 1); // an odd size is followed by one byte of padding
    if (end > riffEnd) throw new Damaged();
    if (fourcc === 'VP8X') {
      if (size < 1) throw new Damaged();
      const flagged = bytes.slice(at, end);
      flagged[8] = flagged[8]! & ~(VP8X_EXIF | VP8X_XMP);
      chunks.push(flagged);
    } else if (fourcc === 'ANMF') {
      chunks.push(animationFrame(bytes.subarray(at, at + 8 + size)));
    } else if (WEBP_KEPT.has(fourcc)) {
      chunks.push(bytes.subarray(at, end));
    }
    at = end;
  }
  const header = new Uint8Array(12);
  header.set(bytes.subarray(0, 12));
  new DataView(header.buffer).setUint32(4, 4 + chunks.reduce((sum, c) => sum + c.length, 0), true);
  return concat([header, ...chunks]);
}

/** A frame's own chunks (RFC 9649 2.7.1.1): alpha and bitstream; its "unknown chunks" go as they do at the top. */
const WEBP_FRAME_KEPT = new Set(['ALPH', 'VP8 ', 'VP8L']);
/** The ANMF header's bytes before the frame's chunks: position, size, duration, flags. */
const ANMF_HEADER = 16;

/** An ANMF chunk (`chunk`: fourcc, size, payload, without padding) with only the frame's kept chunks, its size recomputed. */
function animationFrame(chunk: Uint8Array): Uint8Array {
  if (chunk.length < 8 + ANMF_HEADER) throw new Damaged();
  const kept: Uint8Array[] = [chunk.slice(0, 8 + ANMF_HEADER)];
  let at = 8 + ANMF_HEADER;
  while (at < chunk.length) {
    if (at + 8 > chunk.length) throw new Damaged();
    const size = u32le(chunk, at + 4);
    const end = at + 8 + size + (size & 1);
    if (end > chunk.length) throw new Damaged();
    if (WEBP_FRAME_KEPT.has(latin1(chunk, at, 4))) kept.push(chunk.subarray(at, end));
    at = end;
  }
  // Every part has an even length (chunks with their padding), so the frame needs none.
  const frame = concat(kept);
  new DataView(frame.buffer).setUint32(4, frame.length - 8, true);
  return frame;
}

// ---- GIF (GIF89a sections 17-27) -----------------------------------------------------------------

const GIF_IMAGE = 0x2c;
const GIF_EXTENSION = 0x21;
const GIF_TRAILER = 0x3b;
const GIF_APPLICATION = 0xff;
const GIF_GRAPHIC_CONTROL = 0xf9;
const GIF_PLAIN_TEXT = 0x01;
/**
 * The application extensions that change how the picture shows: the loop count (Netscape's and
 * its twin) and the colour profile. Every other one goes, whatever its identifier: XMP (XMP
 * specification part 3), ImageMagick's IPTC, Photoshop and generic profile blocks, any vendor's.
 */
const GIF_KEPT_APPLICATIONS = ['NETSCAPE2.0', 'ANIMEXTS1.0', 'ICCRGBG1012'];

/** Whether the extension at `at` is kept: graphic control, plain text, and the applications above; never comments or unknown labels. */
function gifKept(bytes: Uint8Array, at: number): boolean {
  const label = bytes[at + 1];
  if (label === GIF_GRAPHIC_CONTROL || label === GIF_PLAIN_TEXT) return true;
  return label === GIF_APPLICATION && bytes[at + 2] === 11 && GIF_KEPT_APPLICATIONS.some((id) => ascii(bytes, at + 3, id));
}

/** Every block up to the trailer but comments, unknown extensions and metadata application extensions. */
function gif(bytes: Uint8Array): Uint8Array {
  if (!ascii(bytes, 0, 'GIF87a') && !ascii(bytes, 0, 'GIF89a')) throw new Damaged();
  // Header and logical screen descriptor, then the global colour table if its flag is set.
  let at = 13 + colourTableSize(byteAt(bytes, 10));
  need(bytes, at);
  const out: Uint8Array[] = [bytes.subarray(0, at)];
  for (;;) {
    const introducer = byteAt(bytes, at);
    if (introducer === GIF_TRAILER) {
      out.push(bytes.subarray(at, at + 1));
      return concat(out);
    }
    if (introducer === GIF_IMAGE) {
      // Descriptor (10 bytes), local colour table, LZW minimum code size, data sub-blocks.
      const end = afterSubBlocks(bytes, at + 10 + colourTableSize(byteAt(bytes, at + 9)) + 1);
      out.push(bytes.subarray(at, end));
      at = end;
    } else if (introducer === GIF_EXTENSION) {
      const end = afterSubBlocks(bytes, at + 2); // after the label
      if (gifKept(bytes, at)) out.push(bytes.subarray(at, end));
      at = end;
    } else {
      throw new Damaged();
    }
  }
}

/** The bytes of a colour table from a descriptor's packed field: none unless its top bit is set. */
function colourTableSize(packed: number): number {
  return packed & 0x80 ? 3 << ((packed & 0x07) + 1) : 0;
}

/** Where a run of data sub-blocks ends: after the block of size 0. */
function afterSubBlocks(bytes: Uint8Array, from: number): number {
  let at = from;
  for (;;) {
    const size = byteAt(bytes, at);
    at += 1 + size;
    if (size === 0) return at;
  }
}

// ---- Reading bytes ------------------------------------------------------------------------------

function need(bytes: Uint8Array, end: number): void {
  if (end > bytes.length) throw new Damaged();
}

function byteAt(bytes: Uint8Array, at: number): number {
  need(bytes, at + 1);
  return bytes[at]!;
}

function u16be(bytes: Uint8Array, at: number): number {
  need(bytes, at + 2);
  return (bytes[at]! << 8) | bytes[at + 1]!;
}

function u32be(bytes: Uint8Array, at: number): number {
  need(bytes, at + 4);
  return bytes[at]! * 0x1000000 + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!);
}

function u32le(bytes: Uint8Array, at: number): number {
  need(bytes, at + 4);
  return bytes[at + 3]! * 0x1000000 + ((bytes[at + 2]! << 16) | (bytes[at + 1]! << 8) | bytes[at]!);
}

function latin1(bytes: Uint8Array, at: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(at, at + length));
}

/** Whether `text` (one byte per character) stands at `at`; false past the end. */
function ascii(bytes: Uint8Array, at: number, text: string): boolean {
  if (at + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
