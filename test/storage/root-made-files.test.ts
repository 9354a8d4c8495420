/**
 * What a command run as root makes for the service is the service's (docs/operations.md runs the
 * commands in a root shell, beside a `data/` directory of the service user's), and what the service
 * user plants there cannot turn root against the rest of the system (attack70).
 */
import assert from 'node:assert/strict';
import { chownSync, existsSync, linkSync, lchownSync, mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { temporarySqlitePath } from '../support/databases.js';

const asRoot = process.getuid?.() === 0;
const notRoot = asRoot ? false : 'not run as root';
/** The service user of these tests: nobody. */
const SERVICE = 65534;

const ownerAndMode = (path: string) => {
  const { uid, gid, mode } = statSync(path);
  return [uid, gid, mode & 0o777];
};

/** A `data/` directory of the service user's, as docs/operations.md makes it. */
function serviceDataDirectory(): string {
  const directory = join(dirname(temporarySqlitePath()), 'data');
  mkdirSync(directory, { mode: 0o700 });
  chownSync(directory, SERVICE, SERVICE);
  return directory;
}

test('a SQLite database a command run as root creates is its directory\'s owner\'s, its lock file and write-ahead log too', { skip: notRoot }, async () => {
  const path = join(serviceDataDirectory(), 'svc.sqlite');
  const handle = openDatabase({ kind: 'sqlite', path });
  try {
    await handle.inMigrationTurn(() => migrateToLatest(handle.db));
    assert.deepEqual(ownerAndMode(path), [SERVICE, SERVICE, 0o600]);
    assert.deepEqual(ownerAndMode(`${path}-migration`), [SERVICE, SERVICE, 0o600]);
    assert.deepEqual(ownerAndMode(`${path}-wal`).slice(0, 2), [SERVICE, SERVICE]);
  } finally {
    await handle.close();
  }
});

test('a SQLite database already there keeps its owner when a command run as root opens it', { skip: notRoot }, async () => {
  const path = join(serviceDataDirectory(), 'svc.sqlite');
  writeFileSync(path, '', { mode: 0o600 });
  const handle = openDatabase({ kind: 'sqlite', path });
  await handle.close();
  assert.deepEqual(ownerAndMode(path), [0, 0, 0o600]);
});

/** A file of root's elsewhere, mode 0644, that the service user would like root to change. */
function rootsFile(): string {
  const file = join(dirname(temporarySqlitePath()), 'roots-file');
  writeFileSync(file, 'root:x:0:0\n', { mode: 0o644 });
  return file;
}

/** Opens the SQLite database at `path` as a command does; throws what it throws. */
async function open(path: string): Promise<void> {
  const handle = openDatabase({ kind: 'sqlite', path });
  await handle.close();
}

test('a symlink the service user put at the database\'s -wal or -shm is refused by a command run as root, and nothing is changed through it', { skip: notRoot }, async () => {
  for (const side of ['-wal', '-shm']) {
    const path = join(serviceDataDirectory(), 'svc.sqlite');
    await open(path);
    const target = rootsFile();
    rmSync(`${path}${side}`, { force: true });
    symlinkSync(target, `${path}${side}`);
    lchownSync(`${path}${side}`, SERVICE, SERVICE);
    await assert.rejects(open(path), new RegExp(`svc\\.sqlite${side}: it is a symbolic link`));
    assert.deepEqual(ownerAndMode(target), [0, 0, 0o644], side);
  }
});

test('a command run as root does not follow the service user\'s symlink at the database path: nothing is made or changed where it points', { skip: notRoot }, async () => {
  const data = serviceDataDirectory();
  const target = rootsFile();
  const missing = join(dirname(target), 'made-by-root.sqlite');
  for (const [name, to] of [['existing.sqlite', target], ['missing.sqlite', missing]] as const) {
    symlinkSync(to, join(data, name));
    lchownSync(join(data, name), SERVICE, SERVICE);
    await assert.rejects(open(join(data, name)), new RegExp(`${name} is a symbolic link of user ${SERVICE}`));
  }
  assert.deepEqual(ownerAndMode(target), [0, 0, 0o644]);
  assert.equal(existsSync(missing), false);
  assert.equal(existsSync(`${target}-migration`), false);
});

test('a command run as root follows a symlink of root\'s own at the database path', { skip: notRoot }, async () => {
  const data = serviceDataDirectory();
  const elsewhere = join(dirname(data), 'elsewhere.sqlite');
  symlinkSync(elsewhere, join(data, 'svc.sqlite'));
  await open(join(data, 'svc.sqlite'));
  assert.deepEqual(ownerAndMode(elsewhere), [0, 0, 0o600]);
});

test('a database with a second name (a hard link) is not opened by a command run as root', { skip: notRoot }, async () => {
  const path = join(serviceDataDirectory(), 'svc.sqlite');
  await open(path);
  linkSync(path, join(dirname(path), 'second-name'));
  await assert.rejects(open(path), /svc\.sqlite: it has 2 names \(hard links\)/);
});
