/** Directories the service writes its files in (the embedded database, the demo's credentials), and its private files. */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, fchmodSync, fchownSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * `mkdir -p`: makes `path` and each missing parent with `mode`, or throws one line naming what
 * the directory is for (`what`) and the one it could not make. Not `mkdirSync(path, { recursive: true })`: Node 20's spins for ever at full CPU when a
 * directory cannot be made in a parent that exists (`/proc/nope`: ENOENT from a filesystem that
 * makes none, taken for a missing parent, whose mkdir says EEXIST, and again), so a start on
 * `DATABASE_URL=sqlite:/proc/nope/x.sqlite` never ended.
 */
export function makeDirectories(path: string, mode: number, what: string): void {
  const missing: string[] = [];
  for (let dir = resolve(path); !existsSync(dir); dir = dirname(dir)) {
    missing.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode });
    } catch (error) {
      // Another process (a second instance starting) made it first: as good.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      const reason = (error as Error).message.replace(/, mkdir .*$/s, '');
      throw new Error(`cannot create ${what}, ${path}: mkdir ${dir}: ${reason}`, { cause: error });
    }
  }
}

/**
 * Writes `text` to `path` for its owner only (0600), whole or not at all: into a new file beside
 * it (`O_EXCL | O_NOFOLLOW`, so nothing planted there is written through), synced, then renamed
 * over `path`. The rename replaces whatever `path` is, a symlink included, and never follows it:
 * written in place, a symlink planted at `path` by anyone who can write its directory had the
 * secrets written into a file of their choosing, and a file already there kept its own mode (0644
 * stayed readable by all). A process killed midway leaves the old file or the new one, never an
 * empty one; the directory is synced too, so after a power cut the file is there with what the
 * caller went on to commit (attack68). Made by a command run as root, the file is its directory's
 * owner's, or the service could not read it. Throws one line naming `what`.
 */
export function writePrivateFile(path: string, text: string, what: string): void {
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const descriptor = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      fchmodSync(descriptor, 0o600);
      if (process.getuid?.() === 0) {
        const owner = statSync(directory);
        fchownSync(descriptor, owner.uid, owner.gid);
      }
      const bytes = Buffer.from(text);
      for (let written = 0; written < bytes.length;) written += writeSync(descriptor, bytes, written);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    renameSync(temporary, path);
    syncDirectory(directory);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new Error(`cannot write ${what}, ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** Reads a file written by `writePrivateFile`, never through a symlink; `undefined` if there is none to read. */
export function readPrivateFile(path: string): string | undefined {
  let descriptor: number;
  try {
    descriptor = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    return readFileSync(descriptor, 'utf8');
  } finally {
    closeSync(descriptor);
  }
}

/** Makes a rename in `directory` durable (POSIX: the new name is the directory's data). */
function syncDirectory(directory: string): void {
  const descriptor = openSync(directory, constants.O_RDONLY);
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
