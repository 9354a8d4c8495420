/** Files only the service's user reads (the demo's credentials): `writePrivateFile`, `readPrivateFile`. */
import assert from 'node:assert/strict';
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
  writePrivateFile(path, '{"secret":1}\n', 'the secrets');
  assert.equal(readFileSync(victim, 'utf8'), 'the victim\'s own\n');
  assert.equal(statSync(path).isFile(), true);
  assert.equal(readFileSync(path, 'utf8'), '{"secret":1}\n');
});

test('a private file replaces one already there of a wider mode with one of mode 0600, and leaves nothing else beside it', () => {
  const dir = directory();
  const path = join(dir, 'secrets.json');
  writeFileSync(path, 'old\n', { mode: 0o644 });
  writePrivateFile(path, 'new\n', 'the secrets');
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(readFileSync(path, 'utf8'), 'new\n');
  assert.deepEqual(readdirSync(dir), ['secrets.json']);
});

test('a private file that cannot be written fails with one line naming it, and leaves no temporary file', () => {
  const dir = directory();
  const path = join(dir, 'secrets.json');
  mkdirSync(path);
  writeFileSync(join(path, 'inside'), '');
  assert.throws(() => writePrivateFile(path, 'x', 'the secrets'), (error: Error) => error.message.startsWith(`cannot write the secrets, ${path}: `) && !error.message.includes('\n'));
  assert.deepEqual(readdirSync(dir), ['secrets.json']);
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
