/** The SQLite migration turn's lock file (`src/storage/sqlite-migration-turn.ts`). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../src/storage/database.js';
import { prepareMigrationTurnFile } from '../../src/storage/sqlite-migration-turn.js';
import { temporarySqlitePath } from '../support/databases.js';


test('the lock file is named after the database\'s real path: two spellings of one database (a symlink) share one turn', () => {
  const path = temporarySqlitePath();
  writeFileSync(path, '');
  const alias = join(dirname(path), 'alias.sqlite');
  symlinkSync(path, alias);
  assert.equal(prepareMigrationTurnFile(alias), prepareMigrationTurnFile(path));
  assert.equal(statSync(prepareMigrationTurnFile(path)).mode & 0o777, 0o600);
});

test('a symlink planted where the lock file goes is not followed: nothing is made or changed through it', async () => {
  const path = temporarySqlitePath();
  const elsewhere = join(dirname(path), 'elsewhere');
  const kept = join(dirname(path), 'kept.conf');
  writeFileSync(kept, 'setting=1\n', { mode: 0o644 });
  writeFileSync(path, '');
  symlinkSync(elsewhere, `${path}-migration`);
  assert.throws(() => openDatabase({ kind: 'sqlite', path }), /ELOOP/);
  assert.equal(existsSync(elsewhere), false, 'no file made through the link');
  symlinkSync(kept, join(dirname(path), 'other.sqlite-migration'));
  writeFileSync(join(dirname(path), 'other.sqlite'), '');
  assert.throws(() => openDatabase({ kind: 'sqlite', path: join(dirname(path), 'other.sqlite') }), /ELOOP/);
  assert.equal(statSync(kept).mode & 0o777, 0o644, 'no mode changed through the link');
  assert.ok(lstatSync(`${path}-migration`).isSymbolicLink());
});

test('a FIFO at the database\'s name or at its lock file\'s fails the open at once with one line, instead of holding it for ever', () => {
  for (const fifoAt of ['', '-migration']) {
    const path = temporarySqlitePath();
    if (fifoAt !== '') writeFileSync(path, '');
    assert.equal(spawnSync('mkfifo', [`${path}${fifoAt}`]).status, 0);
    assert.throws(() => openDatabase({ kind: 'sqlite', path }), /not a regular file|ENXIO/);
  }
});
