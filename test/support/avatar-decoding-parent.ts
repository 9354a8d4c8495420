/**
 * A server's stand-in for test/images/sharp-reencoder.test.ts: hands one image to the decoding
 * child and waits, so the test can kill this process while its child is decoding.
 */
import { sharpReencoder } from '../../src/images/sharp-reencoder.js';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
await sharpReencoder.reencode(new Uint8Array(PNG_SIGNATURE), 'image/png', { maxPixels: 24_000_000, maxInputSide: 8192, maxSide: 512 });
