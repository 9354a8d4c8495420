/**
 * The avatars' image library adapter: one image at a time per process, so uploads never hold the
 * worker threads that sign-ins need, and only a few wait their turn (src/images/sharp-reencoder.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import sharp from 'sharp';
import { MAX_WAITING_IMAGES, childEnvironment, sharpReencoder } from '../../src/images/sharp-reencoder.js';

const LIMITS = { maxPixels: 24_000_000, maxInputSide: 8192, maxSide: 512 };

test('images arriving at once wait their turn; past the waiting ones they are refused as busy, and the rest are encoded', async () => {
  const png = new Uint8Array(await sharp({ create: { width: 600, height: 400, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer());
  const arriving = MAX_WAITING_IMAGES + 2;
  const answers = await Promise.all(Array.from({ length: arriving }, () => sharpReencoder.reencode(png, 'image/png', LIMITS)));
  assert.equal(answers.filter((a) => a === 'busy').length, arriving - MAX_WAITING_IMAGES);
  for (const answer of answers.filter((a) => a !== 'busy')) {
    assert.ok(answer instanceof Uint8Array);
    assert.equal((await sharp(answer).metadata()).width, 512);
  }
  // Once they are done, the next one is encoded again.
  assert.ok((await sharpReencoder.reencode(png, 'image/png', LIMITS)) instanceof Uint8Array);
});

test('the decoding child gets none of the service\'s secrets: only the variables Node and the allocator read', () => {
  const env = { PATH: '/usr/bin', NODE_OPTIONS: '--import tsx', MALLOC_MMAP_THRESHOLD_: '131072', KEYS_SECRET: 'k', DATABASE_URL: 'postgres://u:p@h/db', SMTP_URL: 'smtp://u:p@h', REDIS_URL: 'redis://:p@h' };
  assert.deepEqual(childEnvironment(env), { PATH: '/usr/bin', NODE_OPTIONS: '--import tsx', MALLOC_MMAP_THRESHOLD_: '131072' });
});
