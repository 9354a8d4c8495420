/** Avatars: uploaded images recognised by their magic bytes and stored without their metadata, or a generated default. */
import { InputError } from './errors.js';
import { type ImageType, withoutMetadata } from './image-metadata.js';
import type { User } from './ports.js';

export const AVATAR_MAX_BYTES = 512 * 1024;

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

/** An upload as it is stored: its detected type, and the image without EXIF, XMP, IPTC, comments or text. */
export interface AvatarImage {
  contentType: ImageType;
  image: Uint8Array;
}

/**
 * Checks an upload and returns it as it is stored; the declared type is never trusted. The
 * image is published to anyone, so what only describes it (a phone's GPS position, the camera's
 * serial, times) is taken out first (`withoutMetadata`); an image whose structure does not hold
 * is refused.
 */
export function checkAvatarUpload(bytes: Uint8Array): AvatarImage {
  if (bytes.length === 0) throw new InputError('avatar', 'choose an image file to upload');
  if (bytes.length > AVATAR_MAX_BYTES) throw new InputError('avatar', `the image must be at most ${AVATAR_MAX_BYTES / 1024} KB`);
  const contentType = detectImageType(bytes);
  if (!contentType) throw new InputError('avatar', 'the image must be a PNG, JPEG, WebP or GIF file');
  const image = withoutMetadata(bytes, contentType);
  if (!image) throw new InputError('avatar', 'the image file is damaged');
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
