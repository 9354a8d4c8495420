/** Files only the service's user reads (the demo's credentials): `writePrivateFile`, `readPrivateFile`. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readPrivateFile, writePrivateFile } from '../../src/storage/directories.js';

const directory = () => mkdtempSync(join(tmpdir(), 'private-files-'));

test('a private file is never written through a symlink at its name: the link is replaced, what it pointed to is untouched', () => {
  const dir = directory();
  const victim = join(dir, 'victim.conf');
  writeFileSync(victim, 'the victim\'s own\n', { mode: 0o666 });
  const path = join(dir, 'secrets.json');
  symlinkSync(victim, path);
  writePrivateFile(path, '{"secret":1}\n', 'the secrets', dir);
  assert.equal(readFileSync(victim, 'utf8'), 'the victim\'s own\n');
  assert.equal(statSync(path).isFile(), true);
  assert.equal(readFileSync(path, 'utf8'), '{"secret":1}\n');
});

test('a private file replaces one already there of a wider mode with one of mode 0600, and leaves nothing else beside it', () => {
  const dir = directory();
  const path = join(dir, 'secrets.json');
  writeFileSync(path, 'old\n', { mode: 0o644 });
  writePrivateFile(path, 'new\n', 'the secrets', dir);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(readFileSync(path, 'utf8'), 'new\n');
  assert.deepEqual(readdirSync(dir), ['secrets.json']);
});

test('a private file that cannot be written fails with one line naming it, and leaves no temporary file', () => {
  const dir = directory();
  const path = join(dir, 'secrets.json');
  mkdirSync(path);
  writeFileSync(join(path, 'inside'), '');
  assert.throws(() => writePrivateFile(path, 'x', 'the secrets', dir), (error: Error) => error.message.startsWith(`cannot write the secrets, ${path}: `) && !error.message.includes('\n'));
  assert.deepEqual(readdirSync(dir), ['secrets.json']);
  // Under a file, where nothing can be made or removed, the message is still the one line.
  const underFile = join(dir, 'secrets.json', 'inside', 'secrets.json');
  assert.throws(() => writePrivateFile(underFile, 'x', 'the secrets', dir), (error: Error) => error.message.startsWith(`cannot write the secrets, ${underFile}: `));
});

test('a private file may have a name near the system\'s limit of 255 bytes', () => {
  const dir = directory();
  const path = join(dir, `${'n'.repeat(250)}.json`);
  writePrivateFile(path, 'kept\n', 'the secrets', dir);
  assert.equal(readPrivateFile(path), 'kept\n');
});

test('a write killed before its rename leaves a temporary file that the next write of that file removes', () => {
  const dir = directory();
  const path = join(dir, 'secrets.json');
  writePrivateFile(path, 'first\n', 'the secrets', dir);
  // What a write killed between its temporary file and its rename leaves: the file it wrote, by the name it gave it.
  const leftover = `.${createHash('sha256').update('secrets.json').digest('hex').slice(0, 16)}.0123456789ab.tmp`;
  writeFileSync(join(dir, leftover), 'a seed never committed\n', { mode: 0o600 });
  writeFileSync(join(dir, 'other.tmp'), '');
  writePrivateFile(path, 'second\n', 'the secrets', dir);
  assert.deepEqual(readdirSync(dir).sort(), ['other.tmp', 'secrets.json']);
});

test('a directory planted under a leftover\'s name is left where it is, and does not fail the write', () => {
  const dir = directory();
  const path = join(dir, 'secrets.json');
  const planted = `.${createHash('sha256').update('secrets.json').digest('hex').slice(0, 16)}.planted.tmp`;
  mkdirSync(join(dir, planted));
  writePrivateFile(path, 'written\n', 'the secrets', dir);
  assert.equal(readFileSync(path, 'utf8'), 'written\n');
  assert.deepEqual(readdirSync(dir).sort(), [planted, 'secrets.json']);
});

test('a private file is not read through a symlink', () => {
  const dir = directory();
  const elsewhere = join(dir, 'planted.json');
  writeFileSync(elsewhere, '{"planted":true}\n');
  const path = join(dir, 'secrets.json');
  symlinkSync(elsewhere, path);
  assert.equal(readPrivateFile(path), undefined);
  assert.equal(readPrivateFile(elsewhere), '{"planted":true}\n');
  assert.equal(readPrivateFile(join(dir, 'missing.json')), undefined);
});

test('a private file is read only if it is a regular file of at most 64 KiB: a FIFO planted at its name does not hold the reader', () => {
  const dir = directory();
  const fifo = join(dir, 'fifo.json');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  assert.equal(readPrivateFile(fifo), undefined);
  const large = join(dir, 'large.json');
  writeFileSync(large, 'x'.repeat(64 * 1024 + 1));
  assert.equal(readPrivateFile(large), undefined);
  assert.equal(readPrivateFile(dir), undefined);
});
