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
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BoundedQueue, QueueFullError } from '../core/bounded-queue.js';
import { type ImageReencoder, type ImageType, type ReencodeRefusal, detectImageType } from '../core/community/avatars.js';
import type { ChildReady, ReencodeJob } from './sharp-child.js';

/** Images waiting behind the one being encoded, at most. */
export const MAX_WAITING_IMAGES = 8;

/** The child's module beside this one: `.js` in dist/, `.ts` when run from the sources (tests, bench). */
const CHILD = new URL(`./sharp-child${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

/** One image decoded at a time, `MAX_WAITING_IMAGES` behind it. */
const decodingQueue = new BoundedQueue(1, MAX_WAITING_IMAGES);

/** How long a child may take over one image before it is killed and the file refused as undecodable. */
export const DECODE_TIME_LIMIT_MS = 15_000;

/** The variables a decoding child needs of the server's environment: Node's own and the allocator's, none of the service's secrets. */
const CHILD_VARIABLES = ['PATH', 'NODE_OPTIONS', 'MALLOC_MMAP_THRESHOLD_'] as const;

/**
 * The decoding child's environment. It parses files from strangers with a native library, so it
 * gets nothing it does not need: not `KEYS_SECRET`, `DATABASE_URL` or `SMTP_URL`, which a flaw in
 * a decoder could otherwise read out of its own process. It runs as the server's user, so a flaw
 * that runs code can still read them from the server's /proc entries (docs/threat-model.md).
 * Preloads named by a relative path in NODE_OPTIONS are made absolute against `cwd` (see `childFlags`).
 */
export function childEnvironment(env: NodeJS.ProcessEnv, cwd = process.cwd()): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = Object.fromEntries(CHILD_VARIABLES.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])));
  if (kept.NODE_OPTIONS !== undefined) kept.NODE_OPTIONS = absolutePreloads(nodeOptionsWords(kept.NODE_OPTIONS), cwd).map(nodeOptionsWord).join(' ');
  return kept;
}

/**
 * NODE_OPTIONS' words as Node reads them (`ParseNodeOptionsEnvVar`, src/node_options.cc): split
 * at spaces outside double quotes; a quote opens or closes and is dropped; in quotes a backslash
 * takes the next character as it is.
 */
function nodeOptionsWords(value: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quoted = false;
  for (let i = 0; i < value.length; i += 1) {
    let c = value[i]!;
    if (c === '\\' && quoted && i + 1 < value.length) {
      i += 1;
      c = value[i]!;
    } else if (c === ' ' && !quoted) {
      if (word !== undefined) words.push(word);
      word = undefined;
      continue;
    } else if (c === '"') {
      quoted = !quoted;
      continue;
    }
    word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** `word` as NODE_OPTIONS gives it back to Node: quoted when it holds a space, a quote or a backslash (a path made absolute under a directory named with a space). */
function nodeOptionsWord(word: string): string {
  return /[ "\\]/.test(word) ? `"${word.replace(/["\\]/g, '\\$&')}"` : word;
}

/** `--env-file` (Node 20) and `--env-file-if-exists` (Node 22), with the path joined by `=` or as the next argument. */
const ENV_FILE_FLAG = /^--env-file(?:-if-exists)?(=|$)/;
/** The flags that load a module before the main one, with it joined by `=` or as the next argument. */
const PRELOAD_FLAG = /^(--import|--require|-r|--loader|--experimental-loader)(=|$)/;

/** `flag` with its name as the two regular expressions above read it: Node takes `_` in an option's name for `-` (`--experimental_loader`, `--env_file`). */
function spelled(flag: string): string {
  return flag.replace(/^--[^=]*/, (name) => name.replace(/_/g, '-'));
}

/** `flags` with each preload named by a relative path (`./x.mjs`, `../x.cjs`) named by its absolute path under `cwd`. */
function absolutePreloads(flags: readonly string[], cwd: string): string[] {
  const absolute = (value: string) => (/^\.\.?\//.test(value) ? resolve(cwd, value) : value);
  return flags.map((flag, i) => {
    const match = PRELOAD_FLAG.exec(spelled(flag));
    if (match !== null && match[2] === '=') return `${match[1]}=${absolute(flag.slice(match[0].length))}`;
    return i > 0 && PRELOAD_FLAG.exec(spelled(flags[i - 1]!))?.[2] === '' ? absolute(flag) : flag;
  });
}

/**
 * The server's Node flags (its execArgv) for the decoding child, less any `--env-file`: with it
 * the child would read the file itself and hold every secret `childEnvironment` keeps out. The
 * child works in another directory (`decodeInChild`), so a preload named by a relative path is
 * given by its absolute path under the server's working directory `cwd`.
 */
export function childFlags(execArgv: readonly string[], cwd = process.cwd()): string[] {
  const flags: string[] = [];
  for (let i = 0; i < execArgv.length; i += 1) {
    const match = ENV_FILE_FLAG.exec(spelled(execArgv[i]!));
    if (match === null) flags.push(execArgv[i]!);
    else if (match[1] === '') i += 1;
  }
  return absolutePreloads(flags, cwd);
}

/** The refusals a decoding child may answer; `busy` is the queue's alone. */
const CHILD_REFUSALS: readonly unknown[] = ['too-many-pixels', 'too-long-side', 'undecodable'] satisfies ReencodeRefusal[];

/**
 * A child's answer as the server takes it: a child runs a native decoder on a stranger's file, so
 * one the file took over could answer anything. Only a refusal it may give, or bytes that are an
 * image of the type asked for, are taken; anything else refuses the file as undecodable.
 */
function childAnswer(message: unknown, type: ImageType): Uint8Array | ReencodeRefusal {
  if (CHILD_REFUSALS.includes(message)) return message as ReencodeRefusal;
  return message instanceof Uint8Array && detectImageType(message) === type ? message : 'undecodable';
}

/**
 * One job in a child (`module`: src/images/sharp-child.ts); a child that dies without answering
 * (libvips crashing on the file) or takes longer than `DECODE_TIME_LIMIT_MS` (and is killed, so
 * one file cannot hold every later upload in the queue) refuses it as undecodable; one that cannot
 * be started, or ends before it has loaded the library and been given the file, answers `busy`.
 */
export function decodeInChild(job: ReencodeJob, module: URL = CHILD): Promise<Uint8Array | ReencodeRefusal> {
  return new Promise((resolve) => {
    // The same Node and flags as the server, and the V8 serializer, which carries bytes as they are.
    // It works in its module's directory, not the server's: a preload that reads `.env` from the
    // working directory (`--import dotenv/config`, `-r dotenv/config`) finds none there.
    let child: ReturnType<typeof fork>;
    try {
      child = fork(module, {
        cwd: fileURLToPath(new URL('.', module)),
        execArgv: childFlags(process.execArgv), serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: childEnvironment(process.env), timeout: DECODE_TIME_LIMIT_MS, killSignal: 'SIGKILL',
      });
    } catch {
      // Node emits 'error' (below) only for EACCES, EAGAIN, EMFILE, ENFILE and ENOENT; any other
      // errno of the start, ENOMEM among them, `fork` throws: a start that failed all the same.
      resolve('busy');
      return;
    }
    // The file is sent only once the child says it has loaded the library: a child that ends
    // before (sharp's native binary missing, a preload that fails) has not seen the file, and is
    // the server's fault as a failed start is. Taken for an undecodable file, it had every
    // avatar removed by the first start's data step (src/storage/reencode-stored-avatars.ts).
    let ready = false;
    let answer: Uint8Array | ReencodeRefusal | undefined;
    child.on('message', (message: unknown) => {
      if (!ready) {
        ready = message === ('ready' satisfies ChildReady);
        // A send that fails (the child already gone) is answered by 'close' or 'error' below.
        if (ready) child.send(job, () => {});
      } else {
        answer ??= childAnswer(message, job.type);
      }
    });
    // A child that could not be started at all (out of processes or memory) is the server's
    // fault, not the file's: the member is told to try again, not that the file is unreadable.
    // `on`, not `once`: a failed start can be followed by the failed send of the job, and an
    // 'error' nobody listens to would end the server.
    child.on('error', () => resolve(child.pid === undefined || !ready ? 'busy' : 'undecodable'));
    // 'close', not 'exit': it waits for the IPC channel too, so the answer has been read, and
    // the next image's child starts only once this one has ended.
    child.once('close', () => resolve(ready ? answer ?? 'undecodable' : 'busy'));
  });
}

export const sharpReencoder: ImageReencoder = {
  async reencode(image, type, limits): Promise<Uint8Array | ReencodeRefusal> {
    try {
      return await decodingQueue.run(() => decodeInChild({ image, type, limits }));
    } catch (error) {
      if (error instanceof QueueFullError) return 'busy';
      throw error;
    }
  },
};
