/**
 * The write generation behind remembered reads (src/storage/sqlite-write-watch.ts): a remembered
 * row is trusted only while the generation it was read in stands.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { withStatementCache } from '../../src/storage/database.js';
import { BEGIN_IMMEDIATE, SqliteWriteWatch } from '../../src/storage/sqlite-write-watch.js';
import { temporarySqlitePath } from '../support/databases.js';

let path: string;
let serving: SQLite.Database;
let other: SQLite.Database;
let watch: SqliteWriteWatch;
/** Runs `text` on the serving connection the way the service does: through the statement cache. */
let run: (text: string, ...parameters: unknown[]) => void;

before(() => {
  path = temporarySqlitePath();
  serving = new SQLite(path);
  serving.pragma('journal_mode = WAL');
  serving.exec('create table tokens (id integer primary key, revoked_at integer, last_used_at integer)');
  serving.exec('insert into tokens (id) values (1)');
  watch = new SqliteWriteWatch(serving);
  const statements = withStatementCache(serving, (text) => watch.wrote(text));
  run = (text, ...parameters) => {
    const statement = statements.prepare(text);
    if (statement.reader) statement.all(parameters);
    else statement.run(parameters);
  };
  other = new SQLite(path);
});

after(() => {
  other.close();
  serving.close();
  rmSync(dirname(path), { recursive: true, force: true });
});

test('reads, of this connection or another, and checkpoints leave the generation standing', () => {
  const start = watch.generation();
  run('select * from tokens where id = ?', 1);
  other.prepare('select * from tokens').all();
  other.pragma('wal_checkpoint(PASSIVE)');
  assert.equal(watch.generation(), start);
});

test('a transaction that only reads leaves the generation standing, though SQLite counts its BEGIN IMMEDIATE a write', () => {
  const start = watch.generation();
  run(BEGIN_IMMEDIATE);
  run('select * from tokens where id = ?', 1);
  run('commit');
  assert.equal(watch.generation(), start);
});

test('every write of this connection moves the generation', () => {
  const start = watch.generation();
  run('update tokens set revoked_at = ? where id = ?', 5, 1);
  const afterUpdate = watch.generation();
  assert.notEqual(afterUpdate, start);
  run('insert into tokens (id) values (?)', 2);
  assert.notEqual(watch.generation(), afterUpdate);
});

test('a write that returns rows (RETURNING) moves the generation too', () => {
  const start = watch.generation();
  run('update tokens set revoked_at = ? where id = ? returning id', 6, 1);
  assert.notEqual(watch.generation(), start);
});

test('a write declared quiet leaves the generation standing', () => {
  const touch = 'update tokens set last_used_at = ? where id = ?';
  watch.quiet(touch);
  const start = watch.generation();
  run(touch, 7, 1);
  assert.equal(watch.generation(), start);
});

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test('a commit of another connection to the same file moves the generation from the next turn of the event loop on', async () => {
  await nextTurn();
  const start = watch.generation();
  other.prepare('update tokens set revoked_at = ? where id = ?').run(9, 1);
  // Requests of the same turn are concurrent with that commit: they may still trust what was read.
  assert.equal(watch.generation(), start);
  await nextTurn();
  assert.notEqual(watch.generation(), start);
});
