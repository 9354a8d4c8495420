/**
 * The child process that decodes one avatar with sharp (libvips), started by
 * src/images/sharp-reencoder.ts for each image: loading libvips maps about 19 MB and decoding an
 * image at the pixel limit holds about 33 MB more, which in the server's own process stayed in
 * its peak RSS for good (issue 35 item 5). Here they end with the child.
 *
 * It loads sharp, says it is ready (`ChildReady`), takes one job on its IPC channel, answers the
 * reencoded bytes or a refusal, and leaves. A child that ends before it is ready could not load
 * the library (a missing native binary, a broken preload): the server's fault, never the file's,
 * which it has not been sent yet (src/images/sharp-reencoder.ts).
 */
import type { ImageReencoder, ImageType, ReencodeRefusal } from '../core/community/avatars.js';

type Limits = Parameters<ImageReencoder['reencode']>[2];
export interface ReencodeJob { image: Uint8Array; type: ImageType; limits: Limits }

const FORMATS = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/webp': 'webp', 'image/gif': 'gif' } as const satisfies Record<ImageType, string>;

/** What a child sends once the library has loaded, before it is given an image: its only message that the file cannot have chosen. */
export type ChildReady = 'ready';

type Sharp = typeof import('sharp')['default'];

async function reencode(sharp: Sharp, { image, type, limits: { maxPixels, maxInputSide, maxSide } }: ReencodeJob): Promise<Uint8Array | ReencodeRefusal> {
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

// The server's timer is what kills a child stuck on a file: a server that ended (killed, or
// crashed) closes the channel, and the child ends with it rather than run on unwatched. Its own
// disconnect after answering ends it too, the answer sent.
process.once('disconnect', () => process.exit());
const { default: sharp } = await import('sharp');
// Each image is decoded once: libvips' cache of operations would only hold memory. One
// libvips thread: the server's own threads (argon2, file and DNS work) keep the other cores.
sharp.cache(false);
sharp.concurrency(1);
process.once('message', (job: ReencodeJob) => {
  void reencode(sharp, job).then((answer) => process.send!(answer, () => process.disconnect()));
});
process.send!('ready' satisfies ChildReady);
