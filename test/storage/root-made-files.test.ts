/**
 * What a command run as root makes for the service is the service's (docs/operations.md runs the
 * commands in a root shell, beside a `data/` directory of the service user's).
 */
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../src/storage/database.js';
import { makeDirectories } from '../../src/storage/directories.js';
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

test('directories a command run as root makes are their parent\'s owner\'s', { skip: notRoot }, () => {
  const top = serviceDataDirectory();
  makeDirectories(join(top, 'a', 'b'), 0o700, 'a test\'s directory');
  assert.deepEqual(ownerAndMode(join(top, 'a')), [SERVICE, SERVICE, 0o700]);
  assert.deepEqual(ownerAndMode(join(top, 'a', 'b')), [SERVICE, SERVICE, 0o700]);
});
