/**
 * The avatars' `ImageReencoder` on sharp (libvips): a well-kept decoder for PNG, JPEG, WebP and
 * GIF instead of a parser of our own. sharp is loaded on the first image, not at start: it costs
 * a third of a second, which a command of the command line (issue 21) never needs to pay.
 *
 * One image at a time per process, on one libvips thread: sharp runs on Node's pool of four
 * worker threads, which argon2 shares, so uploads at once would stall every sign-in. A few more
 * wait their turn; past that an upload is refused as `busy`, and the member tries again.
 */
import type { ImageReencoder, ImageType, ReencodeRefusal } from '../core/community/avatars.js';

type Sharp = typeof import('sharp').default;

const FORMATS = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/webp': 'webp', 'image/gif': 'gif' } as const satisfies Record<ImageType, string>;

/** Images waiting behind the one being encoded, at most. */
export const MAX_WAITING_IMAGES = 8;

let loaded: Promise<Sharp> | undefined;

function loadSharp(): Promise<Sharp> {
  loaded ??= import('sharp').then(({ default: sharp }) => {
    // Each image is decoded once: libvips' cache of operations would only hold memory.
    sharp.cache(false);
    sharp.concurrency(1);
    return sharp;
  });
  return loaded;
}

/** The end of the last image's turn: each new one starts after it. */
let queue: Promise<unknown> = Promise.resolve();
let waiting = 0;

/** `work` in its turn, one at a time; `'busy'` at once when `MAX_WAITING_IMAGES` already wait. */
function inTurn<T>(work: () => Promise<T>): Promise<T | 'busy'> {
  if (waiting >= MAX_WAITING_IMAGES) return Promise.resolve('busy');
  waiting += 1;
  const turn = queue.then(async () => {
    waiting -= 1;
    return work();
  });
  queue = turn.catch(() => undefined);
  return turn;
}

export const sharpReencoder: ImageReencoder = {
  reencode(image, type, limits): Promise<Uint8Array | ReencodeRefusal> {
    return inTurn(() => reencodeNow(image, type, limits));
  },
};

async function reencodeNow(image: Uint8Array, type: ImageType, { maxPixels, maxInputSide, maxSide }: Parameters<ImageReencoder['reencode']>[2]): Promise<Uint8Array | ReencodeRefusal> {
  const sharp = await loadSharp();
  // 'error' refuses a file cut short or corrupt; a mere warning (extra bytes between JPEG
  // markers, common in phone photos) still decodes. Only the first frame of an animation.
  const input = { failOn: 'error', limitInputPixels: maxPixels, pages: 1 } as const;
  try {
    // The header alone, read with no limit (sharp's would throw, as for a damaged file), so a
    // small file declaring a huge canvas is told apart, and refused before any decoding.
    const { format, width, height } = await sharp(image, { ...input, limitInputPixels: false }).metadata();
    if (format !== FORMATS[type]) return 'undecodable';
    if (width * height > maxPixels) return 'too-many-pixels';
    if (width > maxInputSide || height > maxInputSide) return 'too-long-side';
    // Output keeps no metadata unless asked (no keepMetadata/withMetadata): EXIF, XMP, IPTC and
    // the ICC profile are dropped, the pixels converted to sRGB first.
    return new Uint8Array(await sharp(image, input)
      .autoOrient()
      .resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true })
      .toFormat(FORMATS[type])
      .toBuffer());
  } catch {
    // sharp throws plain errors for input it cannot read ("corrupt header", "premature end",
    // "unknown critical chunk"): the file is the cause, the member's to fix.
    return 'undecodable';
  }
}
