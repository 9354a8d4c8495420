/** Directories the service writes its files in (the embedded database, the demo's credentials), and its private files. */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, fchmodSync, fchownSync, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';

/**
 * `mkdir -p`: makes `path` and each missing parent with `mode`, or throws one line naming what
 * the directory is for (`what`) and the one it could not make. Not `mkdirSync(path, { recursive: true })`: Node 20's spins for ever at full CPU when a
 * directory cannot be made in a parent that exists (`/proc/nope`: ENOENT from a filesystem that
 * makes none, taken for a missing parent, whose mkdir says EEXIST, and again), so a start on
 * `DATABASE_URL=sqlite:/proc/nope/x.sqlite` never ended. Run as root, it makes directories only in
 * root's own (`makeDirectoriesFor` walks the path before and after).
 */
export function makeDirectories(path: string, mode: number, what: string): void {
  const missing: string[] = [];
  for (let dir = resolve(path); !existsSync(dir); dir = dirname(dir)) {
    missing.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  const parent = missing.length > 0 && runsAsRoot() ? lstatSync(dirname(missing[0]!)) : undefined;
  if (parent?.isSymbolicLink() && parent.uid !== 0) throw new Error(`cannot create ${what}, ${path}: ${dirname(missing[0]!)} is a symbolic link of user ${parent.uid}`);
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode });
    } catch (error) {
      const reason = (error as Error).message.replace(/, mkdir .*$/s, '');
      // Another process (a second instance starting) made it first: as good.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot create ${what}, ${path}: mkdir ${dir}: ${reason}`, { cause: error });
    }
    // Run as root, the next is made in this one only if it is root's own directory: another user
    // could have put a link to a directory of their choosing at its name (in `/tmp`, attack73).
    const made = runsAsRoot() ? lstatSync(dir) : undefined;
    if (made && (!made.isDirectory() || made.uid !== 0)) throw new Error(`cannot create ${what}, ${path}: ${dir} is not a directory of root's`);
  }
}

/**
 * Makes the missing directories of `file` (0700), and, run as root, walks `file`'s path before and
 * after (`refuseUnsafePathAsRoot`): before, so nothing is made through another user's directory
 * or link; after, through what was just made, since in a sticky directory (`/tmp`) another user may
 * have made a name first. What the caller then opens or writes at `file` is reached only through
 * directories of root's (docs/threat-model.md T60). `what` is what the file is, for the one line an
 * operator reads.
 */
export function makeDirectoriesFor(file: string, what: string): void {
  refuseUnsafePathAsRoot(file, what);
  makeDirectories(dirname(file), 0o700, `the directory of ${what}`);
  refuseUnsafePathAsRoot(file, what, { made: true });
}

/** The most a private file holds: anything larger at its name was not written by us, and is not read. */
const PRIVATE_FILE_MAX_BYTES = 64 * 1024;

/**
 * Writes `contents` to `path` for its owner only (0600), whole or not at all: into a new file beside
 * it (`O_EXCL | O_NOFOLLOW`, so nothing planted there is written through), synced, then renamed
 * over `path`. The rename replaces whatever `path` is, a symlink or a hard link included, and never
 * writes through it: written in place, a symlink planted at `path` by anyone who can write its
 * directory had the secrets written into a file of their choosing, and a file already there kept
 * its own mode (0644 stayed readable by all). A process killed midway leaves the old file or the
 * new one, never an empty one, and the next write removes the new file it left unrenamed; the
 * directory is synced too where the system lets it be opened, so after a power cut the file is
 * there with what the caller went on to commit (attack68, attack69). Its missing directories are
 * made first, and run as root it is written only through directories of root's
 * (`makeDirectoriesFor`). Made by a command run as root, the file is the owner's of `ownerOf`
 * (`giveToOwnerOf`). Throws one line naming `what`.
 */
export function writePrivateFile(path: string, contents: string | Uint8Array, what: string, ownerOf: string): void {
  makeDirectoriesFor(path, what);
  const directory = dirname(path);
  // Bounded, whatever the length of the name: a name near the system's limit has room for it.
  const prefix = `.${createHash('sha256').update(basename(path)).digest('hex').slice(0, 16)}.`;
  const temporary = join(directory, `${prefix}${randomBytes(6).toString('hex')}.tmp`);
  try {
    removeLeftovers(directory, prefix);
    const descriptor = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      fchmodSync(descriptor, 0o600);
      giveToOwnerOf(descriptor, ownerOf);
      const bytes = typeof contents === 'string' ? Buffer.from(contents) : contents;
      for (let written = 0; written < bytes.length;) written += writeSync(descriptor, bytes, written);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    renameSync(temporary, path);
    syncDirectory(directory);
  } catch (error) {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // What went wrong first is what the operator needs to read.
    }
    throw new Error(`cannot write ${what}, ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** Whether this process runs as root (a command, as docs/operations.md shows). */
export const runsAsRoot = (): boolean => process.getuid?.() === 0;

/**
 * Run as root, hands the open file `descriptor` to the owner of `reference` (the database, or the
 * directory a new database is made in): a file root made and kept would be one the service, run
 * as that owner, could not open at its next start (attack63).
 */
export function giveToOwnerOf(descriptor: number, reference: string): void {
  if (!runsAsRoot()) return;
  const owner = statSync(reference);
  fchownSync(descriptor, owner.uid, owner.gid);
}

/**
 * Whether `path` is already a regular file of this user's, of mode 0600 and one name, as the
 * service keeps its database's files: then it is left unopened. Closing a descriptor drops every
 * POSIX lock the process holds on the file, and SQLite's connections in this process hold theirs
 * on the database, its log, its shared memory and the migration lock file: another process then
 * took itself for the last connection and removed the log from under them, or took the turn.
 */
export function isOwnerOnlyFile(path: string): boolean {
  const seen = lstatSync(path, { throwIfNoEntry: false });
  return seen !== undefined && seen.isFile() && (seen.mode & 0o777) === 0o600 && seen.uid === process.getuid?.() && seen.nlink === 1;
}

/**
 * Throws unless the open `descriptor` (of `path`, for `what`) is a regular file and, run as root,
 * has no other name: a FIFO would hold a start for ever, and a hard link to one of root's files,
 * planted where the service keeps its own (possible where `fs.protected_hardlinks` is 0), would have
 * root change that file's mode or owner (attack70).
 */
export function refuseUnlessOwnFile(descriptor: number, path: string, what: string): void {
  const stat = fstatSync(descriptor);
  if (!stat.isFile()) throw new Error(`cannot open ${what}, ${path}: not a regular file`);
  if (stat.nlink > 1 && runsAsRoot()) throw new Error(`cannot open ${what}, ${path}: it has ${stat.nlink} names (hard links), and a command run as root changes only a file of one`);
}

/** Links followed at most on the way to a path, as the kernel's own limit (ELOOP). */
const MAX_LINKS = 40;

/**
 * Run as root, throws unless `path` is reached through directories only root can change: each
 * directory the kernel passes through (links followed, `..` after them) root's and writable by no
 * one else but sticky ones (`/tmp`), and each link on the way root's. A user who can change one of
 * them (the service user, owner of `data/`) could swap a name between any check of ours and
 * SQLite's own opening of the path, and have root create, write or change the mode of any file of
 * the system (attack70, attack71: a rename raced with the open won 18 times in 20). So a command run
 * as root on the service user's database stops with one line: run it as that user. Up to the first
 * name that does not exist yet: what is made from there on is made by root in a directory of root's,
 * and the caller walks again once it is made (`made`: another user may have made a name first in
 * `/tmp`, or removed it to make it again).
 */
export function refuseUnsafePathAsRoot(path: string, what: string, { made = false }: { made?: boolean } = {}): void {
  if (!runsAsRoot()) return;
  const names = (from: string) => from.split(sep).filter((name) => name !== '' && name !== '.');
  let reached: string = sep;
  // From the working directory as the kernel has it: `process.cwd()` is remembered from the start,
  // and a directory above it renamed since would leave it naming another (attack73).
  let rest = names(isAbsolute(path) ? path : `${realpathSync.native('.')}${sep}${path}`);
  for (let links = 0; rest.length > 0;) {
    const name = rest.shift()!;
    if (name === '..') {
      reached = dirname(reached);
      continue;
    }
    const directory = statSync(reached);
    // A sticky directory others may write (`/tmp`) may be passed through, to root's entries only:
    // the database's own would let anyone make the names SQLite makes beside it (`-wal`, `-shm`).
    const othersMayWrite = (directory.mode & 0o022) !== 0;
    if (directory.uid !== 0 || (othersMayWrite && ((directory.mode & 0o1000) === 0 || rest.length === 0))) {
      throw new Error(`cannot open ${what}, ${path}: ${reached} is ${directory.uid !== 0
        ? `user ${directory.uid}'s, so a command run as root does not open it; run the command as that directory's owner (runuser -u <user> -- …, docs/operations.md)`
        : 'writable by others, so a command run as root does not open it; choose a directory only root may write'}`);
    }
    const at = join(reached, name);
    let entry;
    try {
      entry = lstatSync(at);
    } catch {
      // Once its directories are made only the last name may be missing: another user removed one to make it again.
      if (made && rest.length > 0) throw new Error(`cannot open ${what}, ${path}: ${at} was removed as it was made`);
      return;
    }
    if (othersMayWrite && entry.uid !== 0) throw new Error(`cannot open ${what}, ${path}: ${at} is user ${entry.uid}'s, in a directory others may write, which a command run as root does not pass through`);
    if (!entry.isSymbolicLink()) {
      reached = at;
      continue;
    }
    if (entry.uid !== 0) throw new Error(`cannot open ${what}, ${path}: ${at} is a symbolic link of user ${entry.uid}, which a command run as root does not follow`);
    if (++links > MAX_LINKS) throw new Error(`cannot open ${what}, ${path}: more than ${MAX_LINKS} symbolic links on the way`);
    const target = readlinkSync(at);
    if (isAbsolute(target)) reached = sep;
    rest = [...names(target), ...rest];
  }
}

/** The temporary files an earlier write into `directory` left when it was killed before its rename. */
function removeLeftovers(directory: string, prefix: string): void {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return; // a directory the service may write but not list (mode 0300) keeps them
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    try {
      rmSync(join(directory, name), { force: true });
    } catch {
      // Not a file a write of ours left (a directory planted under such a name): not ours to remove (attack71).
    }
  }
}

/**
 * Reads a file written by `writePrivateFile`; `undefined` if there is none to read: nothing at
 * `path`, a symlink (never followed), or anything but a regular file of at most 64 KiB (opened
 * without waiting, so a FIFO planted there cannot hold the start).
 */
export function readPrivateFile(path: string): string | undefined {
  let descriptor: number;
  try {
    descriptor = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(descriptor);
    if (!stat.isFile() || stat.size > PRIVATE_FILE_MAX_BYTES) return undefined;
    return readFileSync(descriptor, 'utf8');
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Makes a rename in `directory` durable (POSIX: the new name is the directory's data). A
 * directory the service may write but not read (mode 0300), or a file system that cannot sync
 * one, leaves the rename as durable as that system makes it: refusing to start there would leave
 * the file of a seed never committed beside a database no start could prepare (attack69).
 */
function syncDirectory(directory: string): void {
  let descriptor: number;
  try {
    descriptor = openSync(directory, constants.O_RDONLY);
  } catch {
    return;
  }
  try {
    fsyncSync(descriptor);
  } catch (error) {
    if (!['EINVAL', 'ENOTSUP', 'EOPNOTSUPP'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    closeSync(descriptor);
  }
}
