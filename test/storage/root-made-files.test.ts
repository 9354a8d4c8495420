/**
 * A command run as root opens only a SQLite database that no other user can swap a name on the way
 * to (attack70, attack71): the service user, owner of `data/` in docs/operations.md, could
 * otherwise point root at any file of the system between our checks and SQLite's own open.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lchownSync, linkSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { saveDemoCredentials } from '../../src/demo.js';
import type { Settings } from '../../src/config/settings.js';
import { openDatabase } from '../../src/storage/database.js';
import { makeDirectories, refuseUnsafePathAsRoot } from '../../src/storage/directories.js';
import { temporarySqlitePath } from '../support/databases.js';

const asRoot = process.getuid?.() === 0;
const notRoot = asRoot ? false : 'not run as root';
/** The service user of these tests: nobody. */
const SERVICE = 65534;

const ownerAndMode = (path: string) => {
  const { uid, gid, mode } = statSync(path);
  return [uid, gid, mode & 0o777];
};

/** A directory of root's, writable by root only. */
const rootsDirectory = () => dirname(temporarySqlitePath());

/** A `data/` directory of the service user's, as docs/operations.md makes it. */
function serviceDataDirectory(): string {
  const directory = join(rootsDirectory(), 'data');
  mkdirSync(directory, { mode: 0o700 });
  chownSync(directory, SERVICE, SERVICE);
  return directory;
}

/** A file of root's, mode 0644, that the service user would like root to change. */
function rootsFile(): string {
  const file = join(rootsDirectory(), 'roots-file');
  writeFileSync(file, 'root:x:0:0\n', { mode: 0o644 });
  return file;
}

/** Opens the SQLite database at `path` as a command does; throws what it throws. */
async function open(path: string): Promise<void> {
  const handle = openDatabase({ kind: 'sqlite', path });
  await handle.close();
}

test('a command run as root does not open a database in the service user\'s directory: one line says to run it as that user, and nothing is made or changed', { skip: notRoot }, async () => {
  const data = serviceDataDirectory();
  const existing = join(data, 'existing.sqlite');
  writeFileSync(existing, '', { mode: 0o644 });
  chownSync(existing, SERVICE, SERVICE);
  for (const path of [existing, join(data, 'new.sqlite'), join(data, 'sub', 'new.sqlite')]) {
    assert.throws(() => openDatabase({ kind: 'sqlite', path }), new RegExp(`${data} is user ${SERVICE}'s, so a command run as root does not open it; run the command as that directory's owner`));
  }
  assert.deepEqual(readdirSync(data), ['existing.sqlite']);
  assert.deepEqual(ownerAndMode(existing), [SERVICE, SERVICE, 0o644]);
});

test('a command run as root does not follow another user\'s symlink on the way to the database, before or after a ..', { skip: notRoot }, async () => {
  const directory = rootsDirectory();
  const target = rootsFile();
  const missing = join(dirname(target), 'made-by-root.sqlite');
  for (const [name, to] of [['existing.sqlite', target], ['missing.sqlite', missing], ['sub', dirname(target)]] as const) {
    symlinkSync(to, join(directory, name));
    lchownSync(join(directory, name), SERVICE, SERVICE);
  }
  for (const [path, link] of [['existing.sqlite', 'existing.sqlite'], ['missing.sqlite', 'missing.sqlite'], ['sub/made-by-root.sqlite', 'sub'], ['sub/../x.sqlite', 'sub']] as const) {
    // Not `join`, which would take `sub/..` away before the kernel could follow `sub`.
    assert.throws(() => openDatabase({ kind: 'sqlite', path: `${directory}/${path}` }), new RegExp(`${join(directory, link)} is a symbolic link of user ${SERVICE}`), path);
  }
  assert.deepEqual(ownerAndMode(target), [0, 0, 0o644]);
  assert.equal(existsSync(missing), false);
  assert.equal(existsSync(`${target}-migration`), false);
});

test('a command run as root follows root\'s own symlink to a database in a directory of root\'s, and not one into the service user\'s directory', { skip: notRoot }, async () => {
  const directory = rootsDirectory();
  const elsewhere = join(rootsDirectory(), 'elsewhere.sqlite');
  symlinkSync(elsewhere, join(directory, 'svc.sqlite'));
  await open(join(directory, 'svc.sqlite'));
  assert.deepEqual(ownerAndMode(elsewhere), [0, 0, 0o600]);
  const data = serviceDataDirectory();
  symlinkSync(join(data, 'svc.sqlite'), join(directory, 'into-data.sqlite'));
  assert.throws(() => openDatabase({ kind: 'sqlite', path: join(directory, 'into-data.sqlite') }), new RegExp(`${data} is user ${SERVICE}'s`));
});

test('a command run as root passes through a sticky directory anyone may write (as /tmp) only by root\'s names, and keeps no database in one', { skip: notRoot }, async () => {
  const shared = join(rootsDirectory(), 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  mkdirSync(join(shared, 'theirs'));
  chownSync(join(shared, 'theirs'), SERVICE, SERVICE);
  assert.throws(() => openDatabase({ kind: 'sqlite', path: join(shared, 'theirs', 'x.sqlite') }), new RegExp(`${join(shared, 'theirs')} is user ${SERVICE}'s, in a directory others may write`));
  assert.throws(() => openDatabase({ kind: 'sqlite', path: join(shared, 'x.sqlite') }), new RegExp(`${shared} is writable by others`));
  await open(join(shared, 'roots', 'x.sqlite'));
  assert.deepEqual(ownerAndMode(join(shared, 'roots')), [0, 0, 0o700]);
  assert.deepEqual(readdirSync(join(shared, 'theirs')), []);
});

test('once its directories are made, a path with a directory missing again is refused as root: another user removed it to make it again', { skip: notRoot }, () => {
  const directory = rootsDirectory();
  assert.throws(() => refuseUnsafePathAsRoot(join(directory, 'made', 'x.sqlite'), 'a test\'s database', { made: true }), new RegExp(`${join(directory, 'made')} was removed as it was made`));
  refuseUnsafePathAsRoot(join(directory, 'x.sqlite'), 'a test\'s database', { made: true });
});

test('a relative path is walked from the working directory as the kernel has it, not as it was named at the start', { skip: notRoot }, () => {
  const theirs = join(rootsDirectory(), 'theirs');
  mkdirSync(join(theirs, 'app'), { recursive: true });
  chownSync(theirs, SERVICE, SERVICE);
  const started = process.cwd();
  process.chdir(join(theirs, 'app'));
  // Node remembers the working directory once asked, as a running server has been.
  assert.equal(process.cwd(), join(theirs, 'app'));
  try {
    // What the service user can do to a directory of its own above the working directory.
    renameSync(theirs, `${theirs}-renamed`);
    assert.throws(() => refuseUnsafePathAsRoot('data/mail/00000001.eml', 'the mail directory'), new RegExp(`${theirs}-renamed is user ${SERVICE}'s`));
  } finally {
    process.chdir(started);
  }
});

test('directories are made as root only in root\'s own: not through another user\'s link put where the walk found nothing', { skip: notRoot }, () => {
  const directory = rootsDirectory();
  const elsewhere = rootsDirectory();
  symlinkSync(elsewhere, join(directory, 'late'));
  lchownSync(join(directory, 'late'), SERVICE, SERVICE);
  assert.throws(() => makeDirectories(join(directory, 'late', 'sub'), 0o700, 'a test\'s directory'), new RegExp(`${join(directory, 'late')} is a symbolic link of user ${SERVICE}`));
  assert.deepEqual(readdirSync(elsewhere), []);
});

test('a symlink at the database\'s -wal, -shm or -journal is refused, and nothing is changed through it', async () => {
  for (const side of ['-wal', '-shm', '-journal']) {
    const path = temporarySqlitePath();
    await open(path);
    const target = rootsFile();
    rmSync(`${path}${side}`, { force: true });
    symlinkSync(target, `${path}${side}`);
    assert.throws(() => openDatabase({ kind: 'sqlite', path }), new RegExp(`${path}${side}: it is a symbolic link`));
    assert.equal(statSync(target).mode & 0o777, 0o644, side);
  }
});

test('a database with a second name (a hard link) is not opened by a command run as root', { skip: notRoot }, async () => {
  const path = temporarySqlitePath();
  await open(path);
  linkSync(path, join(dirname(path), 'second-name'));
  assert.throws(() => openDatabase({ kind: 'sqlite', path }), /\.sqlite: it has 2 names \(hard links\)/);
});

test('a command run as root does not write the demo\'s credentials for PostgreSQL into the service user\'s ./data: nothing is written there', { skip: notRoot }, () => {
  const data = serviceDataDirectory();
  const settings = { database: { kind: 'postgres', url: 'postgres://postgres@127.0.0.1:5432/test' } } as Settings;
  const credentials = {
    username: 'demo', password: 'a-password',
    confidentialClient: { clientId: 'c', clientSecret: 's', redirectUri: 'http://localhost:3000/demo-app/callback' },
    publicClient: { clientId: 'p', redirectUri: 'http://localhost:3000/demo-app/callback' },
  };
  const started = process.cwd();
  process.chdir(dirname(data));
  try {
    assert.throws(() => saveDemoCredentials(settings, credentials), new RegExp(`${data} is user ${SERVICE}'s, so a command run as root does not open it`));
  } finally {
    process.chdir(started);
  }
  assert.deepEqual(readdirSync(data), []);
});
