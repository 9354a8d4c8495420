/**
 * Avatars: uploaded images recognised by their magic bytes, decoded and encoded anew by an image
 * library (`ImageReencoder`, src/images/), or a generated default.
 */
import { InputError, type Words } from '../errors.js';
import type { User } from '../accounts/ports.js';

export const AVATAR_MAX_BYTES = 512 * 1024;
/**
 * Uploads a member may make in an hour, refused or not. Each is decoded in a child process of its
 * own, one at a time per server, and a hostile file can hold that turn until it is killed (15 s):
 * without a limit one member could keep everyone else's uploads refused as busy.
 */
export const AVATAR_UPLOADS_PER_HOUR = 10;
/** The longest side of a stored avatar: pages show it at 96 px, so 512 is sharp on any screen. */
export const AVATAR_MAX_SIDE = 512;
/**
 * The most pixels an upload may declare: a 12-megapixel phone photo fits, while a few kilobytes
 * declaring 50,000 × 50,000 (a decompression bomb) are refused before a pixel is decoded.
 */
export const AVATAR_MAX_PIXELS = 24_000_000;
/**
 * The longest side an upload may declare. Within the pixel limit a strip of 1 × 23,999,999 took
 * libvips 15 s to shrink, holding a worker thread that sign-ins (argon2) need too; no photo is
 * longer than this.
 */
export const AVATAR_MAX_INPUT_SIDE = 8192;

export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

const SIGNATURES: Array<{ type: ImageType; test: (b: Uint8Array) => boolean }> = [
  { type: 'image/png', test: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { type: 'image/jpeg', test: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { type: 'image/gif', test: (b) => ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a') },
  { type: 'image/webp', test: (b) => ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP') },
];

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((value, i) => bytes[i] === value);
}

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  return startsWith(bytes.subarray(offset), [...text].map((c) => c.charCodeAt(0)));
}

/** The image's content type from its first bytes, or `undefined` for anything else. */
export function detectImageType(bytes: Uint8Array): ImageType | undefined {
  return SIGNATURES.find((s) => s.test(bytes))?.type;
}

/** Why an image library gave no image back: limits, a file it cannot read, or too many images already waiting. */
export type ReencodeRefusal = 'too-many-pixels' | 'too-long-side' | 'undecodable' | 'busy';

/**
 * Decodes an image and encodes its pixels anew (src/images/): nothing of the bytes given survives,
 * so neither metadata (EXIF, XMP, ICC profiles, text chunks) nor data hidden in the container (a
 * polyglot's second file, an unknown chunk) reaches the result.
 */
export interface ImageReencoder {
  /**
   * `image`, of the type its magic bytes say, decoded only if it declares at most `maxPixels` and
   * no side longer than `maxInputSide`, turned upright, shrunk to fit `maxSide` × `maxSide` (never enlarged), and encoded again as
   * `type` with no metadata; animations keep their first frame.
   */
  reencode(image: Uint8Array, type: ImageType, limits: { maxPixels: number; maxInputSide: number; maxSide: number }): Promise<Uint8Array | ReencodeRefusal>;
}

/** An avatar as it is stored: its type, and the image as the library encoded it. */
export interface AvatarImage {
  contentType: ImageType;
  image: Uint8Array;
}

/** Each refusal in English (the log's, the API's) and in the catalogs' words (the profile page's). */
const REFUSALS: Record<ReencodeRefusal, [string, Words]> = {
  'too-many-pixels': [`the image must be at most ${AVATAR_MAX_PIXELS / 1_000_000} megapixels`, { key: 'settings.avatarPixels', values: { megapixels: AVATAR_MAX_PIXELS / 1_000_000 } }],
  'too-long-side': [`no side of the image may be longer than ${AVATAR_MAX_INPUT_SIDE.toLocaleString('en')} pixels`, { key: 'settings.avatarSide', values: { pixels: AVATAR_MAX_INPUT_SIDE } }],
  busy: ['many images are being processed right now: try again in a minute', { key: 'settings.avatarBusy' }],
  undecodable: ['the image file is damaged or not a complete PNG, JPEG, WebP or GIF image', { key: 'settings.avatarUndecodable' }],
};

/**
 * Checks an upload and returns it as it is stored; the declared type is never trusted. The image
 * is published to anyone, so it is decoded and encoded anew: what only describes it (a phone's
 * GPS position, the camera's serial, times) and whatever else the file carried are gone. What
 * does not decode is refused with a message for the member.
 */
export async function checkAvatarUpload(bytes: Uint8Array, images: ImageReencoder): Promise<AvatarImage> {
  if (bytes.length === 0) throw InputError.worded('avatar', 'choose an image file to upload', { key: 'settings.avatarMissing' });
  if (bytes.length > AVATAR_MAX_BYTES) throw InputError.worded('avatar', `the image must be at most ${AVATAR_MAX_BYTES / 1024} KB`, { key: 'settings.avatarTooLarge', values: { kilobytes: AVATAR_MAX_BYTES / 1024 } });
  const contentType = detectImageType(bytes);
  if (!contentType) throw InputError.worded('avatar', 'the image must be a PNG, JPEG, WebP or GIF file', { key: 'settings.avatarType' });
  const image = await images.reencode(bytes, contentType, { maxPixels: AVATAR_MAX_PIXELS, maxInputSide: AVATAR_MAX_INPUT_SIDE, maxSide: AVATAR_MAX_SIDE });
  if (typeof image === 'string') throw InputError.worded('avatar', ...REFUSALS[image]);
  return { contentType, image };
}

/** A default avatar: the first letter of the username on a colour taken from the user id. */
export function defaultAvatarSvg(user: Pick<User, 'id' | 'username'>): string {
  const hue = (user.id * 137) % 360;
  const initial = (user.username[0] ?? '?').toUpperCase().replace(/[^A-Z0-9]/g, '?');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128" role="img" aria-label="${initial}">`
    + `<rect width="128" height="128" fill="hsl(${hue},55%,42%)"/>`
    + `<text x="64" y="64" dy=".35em" text-anchor="middle" font-family="system-ui,sans-serif" font-size="60" font-weight="600" fill="#fff">${initial}</text></svg>`;
}
