/**
 * The avatars' `ImageReencoder` on sharp (libvips): a well-kept decoder for PNG, JPEG, WebP and
 * GIF instead of a parser of our own.
 *
 * Each image is decoded in a child process of its own (src/images/sharp-child.ts), which exits
 * with its answer: libvips and an image's pixels (about 50 MB at the pixel limit) never enter the
 * server's memory, so its peak RSS stays where its other work holds it (issue 35 item 5). The
 * child's start-up (Node and sharp, about a tenth of a second of CPU) is paid per image; avatar
 * uploads are rare.
 *
 * One image at a time per process: a decoding child takes a core, as argon2's threads do, so
 * uploads at once would stall every sign-in. A few more wait their turn; past that an upload is
 * refused as `busy`, and the member tries again.
 */
import { fork } from 'node:child_process';
import type { ImageReencoder, ReencodeRefusal } from '../core/community/avatars.js';
import type { ReencodeJob } from './sharp-child.js';

/** Images waiting behind the one being encoded, at most. */
export const MAX_WAITING_IMAGES = 8;

/** The child's module beside this one: `.js` in dist/, `.ts` when run from the sources (tests, bench). */
const CHILD = new URL(`./sharp-child${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

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

/** One job in a child; a child that dies without answering (libvips crashing on the file) refuses it as undecodable. */
function inChild(job: ReencodeJob): Promise<Uint8Array | ReencodeRefusal> {
  return new Promise((resolve) => {
    // The same Node and flags as the server (its execArgv), and the V8 serializer, which carries bytes as they are.
    const child = fork(CHILD, { serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    let answer: Uint8Array | ReencodeRefusal = 'undecodable';
    child.once('message', (message: Uint8Array | ReencodeRefusal) => { answer = message; });
    child.once('error', () => resolve('undecodable'));
    // 'close', not 'exit': it waits for the IPC channel too, so the answer has been read, and
    // the next image's child starts only once this one has ended.
    child.once('close', () => resolve(answer));
    child.send(job);
  });
}

export const sharpReencoder: ImageReencoder = {
  reencode(image, type, limits): Promise<Uint8Array | ReencodeRefusal> {
    return inTurn(() => inChild({ image, type, limits }));
  },
};
