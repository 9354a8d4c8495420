/**
 * The write generations behind remembered reads (src/storage/sqlite-write-watch.ts): a remembered
 * row is trusted only while the generation of the tables its query reads, as of when it was read,
 * stands.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { after, before, test } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { withStatementCache } from '../../src/storage/database.js';
import { BEGIN_IMMEDIATE, DATA_VERSION_TRUSTED_MS, SqliteWriteWatch } from '../../src/storage/sqlite-write-watch.js';
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
  serving.pragma('foreign_keys = ON');
  serving.exec(`
    create table users (id integer primary key, status text);
    create table grants (id integer primary key, user_id integer references users (id) on delete cascade, revoked_at integer);
    create table tokens (id integer primary key, grant_id integer references grants (id) on delete cascade, revoked_at integer, last_used_at integer);
    create table clients (id integer primary key, owner_id integer references users (id) on delete set null, status text);
    create table notes (id integer primary key, user_id integer references users (id));
    create table labels (id integer primary key, name text unique);
    create table labelled (id integer primary key, label text references labels (name) on update cascade);
    create table events (id integer primary key, kind text);
    create table posts (id integer primary key);
    create table post_counts (n integer);
    create trigger posts_counted after insert on posts begin update post_counts set n = n + 1; end;
  `);
  serving.exec('insert into tokens (id) values (1)');
  // The clock stands still: within one turn a read of data_version is trusted however slowly a
  // loaded machine runs the test (CI once took over a millisecond between two lines of it).
  watch = new SqliteWriteWatch(serving, undefined, () => 0);
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

/** A remembered read of `text`'s tables stands from `start` to now. */
function stands(text: string, write: () => void): boolean {
  const reads = watch.reads(text);
  const start = watch.generation(reads);
  write();
  return watch.generation(reads) === start;
}

const TOKEN_READ = 'select * from "tokens" as "t" inner join "grants" as "g" on "g"."id" = "t"."grant_id" where "t"."id" = ?';
const CLIENT_READ = 'select * from "clients" where "id" = ?';

test('a write to a table a remembered read does not read leaves it standing; one to a table it reads ends it', async () => {
  await nextTurn();
  run('insert into "users" ("id", "status") values (?, ?)', 1, 'active');
  run('insert into "grants" ("id", "user_id") values (?, ?)', 1, 1);
  run('insert into "clients" ("id", "owner_id", "status") values (?, ?, ?)', 1, 1, 'active');
  assert.ok(stands(TOKEN_READ, () => run('insert into "events" ("kind") values (?)', 'sign-in')), 'an insert into another table');
  assert.ok(stands(TOKEN_READ, () => run('update "clients" set "status" = ? where "id" = ?', 'deactivated', 1)), 'an update of another table');
  assert.ok(stands(CLIENT_READ, () => run('insert into "tokens" ("grant_id") values (?)', 1)), 'a token issued');
  assert.ok(stands(CLIENT_READ, () => run('update "tokens" set "revoked_at" = ? where "grant_id" = ? returning "id"', 3, 1)), 'a token revoked');
  assert.ok(!stands(CLIENT_READ, () => run('update "clients" set "status" = ? where "id" = ?', 'active', 1)), 'the client updated');
  assert.ok(!stands(TOKEN_READ, () => run('update "grants" set "revoked_at" = ? where "id" = ?', 4, 1)), 'the joined grant revoked');
  assert.ok(!stands(TOKEN_READ, () => run('insert or ignore into "tokens" ("id") values (?)', 1)), 'insert or ignore');
  assert.ok(!stands(TOKEN_READ, () => run('replace into "tokens" ("id", "grant_id") values (?, ?)', 99, 1)), 'replace');
  assert.ok(!stands(TOKEN_READ, () => run('insert into "tokens" ("id") values (?) on conflict ("id") do update set "revoked_at" = 5', 99)), 'an upsert');
  assert.ok(!stands(TOKEN_READ, () => run('delete from "tokens" where "id" = ?', 99)), 'a delete');
  assert.ok(!stands(TOKEN_READ, () => run('update tokens set revoked_at = ? where id = ?', 6, 1)), 'raw SQL, names unquoted');
});

test('a delete from a parent ends the remembered reads of the tables its foreign keys cascade or set null into, transitively', () => {
  run('insert into "users" ("id", "status") values (?, ?)', 2, 'active');
  run('insert into "grants" ("id", "user_id") values (?, ?)', 2, 2);
  run('insert into "tokens" ("id", "grant_id") values (?, ?)', 20, 2);
  run('insert into "clients" ("id", "owner_id", "status") values (?, ?, ?)', 2, 2, 'active');
  run('insert into "notes" ("user_id") values (?)', 1);
  const tokenOnly = 'select * from "tokens" where "id" = ?';
  assert.ok(!stands(tokenOnly, () => run('delete from "grants" where "id" = ?', 2)), 'grants cascade into tokens');
  run('insert into "grants" ("id", "user_id") values (?, ?)', 2, 2);
  assert.ok(!stands(tokenOnly, () => run('delete from "users" where "id" = ?', 2)), 'users cascade into grants, grants into tokens');
  run('insert into "users" ("id", "status") values (?, ?)', 2, 'active');
  run('update "clients" set "owner_id" = ? where "id" = ?', 2, 2);
  assert.ok(!stands(CLIENT_READ, () => run('delete from "users" where "id" = ?', 2)), 'users set a client\'s owner null');
  run('insert into "users" ("id", "status") values (?, ?)', 2, 'active');
  assert.ok(!stands(tokenOnly, () => run('replace into "users" ("id", "status") values (?, ?)', 2, 'active')), 'a replace deletes the row it replaces');
  // `notes` references users with no action: writing users never changes a note.
  assert.ok(stands('select * from "notes"', () => run('delete from "users" where "id" = ?', 2)));
});

test('an update sets off only the ON UPDATE actions, an insert none', () => {
  // users' keys act only on delete: inserting or updating a user changes no grant, token or client.
  assert.ok(stands(CLIENT_READ, () => run('update "users" set "status" = ? where "id" = ?', 'suspended', 1)), 'an update of users');
  assert.ok(stands(CLIENT_READ, () => run('insert into "users" ("id", "status") values (?, ?)', 30, 'active')), 'an insert into users');
  assert.ok(stands(CLIENT_READ, () => run('insert or ignore into "users" ("id", "status") values (?, ?)', 30, 'active')), 'insert or ignore');
  run('insert into "labels" ("name") values (?)', 'red');
  run('insert into "labelled" ("label") values (?)', 'red');
  const labelled = 'select * from "labelled" where "id" = ?';
  assert.ok(stands(labelled, () => run('insert into "labels" ("name") values (?)', 'blue')), 'an insert into the parent');
  assert.ok(!stands(labelled, () => run('update "labels" set "name" = ? where "name" = ?', 'crimson', 'red')), 'ON UPDATE CASCADE');
  assert.ok(!stands(labelled, () => run('insert into "labels" ("name") values (?) on conflict ("name") do update set "name" = \'scarlet\'', 'crimson')), 'an upsert updates');
  assert.ok(!stands(labelled, () => run('insert or replace into "labels" ("id", "name") values (?, ?)', 99, 'green')), 'insert or replace');
  assert.ok(!stands(labelled, () => run('update or replace "labels" set "name" = ? where "name" = ?', 'green2', 'green')), 'update or replace');
});

test('a write to a table with triggers, and a statement the watch cannot place, end every remembered read', () => {
  assert.ok(!stands(CLIENT_READ, () => run('insert into "posts" default values')), 'a table with triggers');
  assert.ok(!stands(CLIENT_READ, () => run('with "old" as (select "id" from "events") delete from "events" where "id" in (select "id" from "old")')), 'a write after WITH');
  assert.ok(!stands(CLIENT_READ, () => run('delete from main.events where id = ?', 1)), 'a schema-qualified table');
  assert.ok(!stands(CLIENT_READ, () => run('pragma user_version = 7')), 'a pragma that writes');
});

test('a read the watch cannot place (no table named, a view) ends with every write', () => {
  run('create view active_clients as select * from clients where status = \'active\'');
  const throughView = 'select * from "active_clients" as "c" inner join "events" as "e" on "e"."id" = "c"."id"';
  assert.ok(!stands(throughView, () => run('update "clients" set "status" = ? where "id" = ?', 'active', 1)), 'a view, read with a table');
  assert.ok(!stands('select 1', () => run('insert into "events" ("kind") values (?)', 'x')), 'no table');
});

test('a schema change ends every remembered read, and a foreign key it adds counts from then on', async () => {
  assert.ok(!stands(CLIENT_READ, () => run('create table audits (id integer primary key, client_id integer references clients (id) on delete cascade)')));
  run('insert into "audits" ("client_id") values (?)', 1);
  const auditRead = 'select * from "audits" where "id" = ?';
  assert.ok(stands(auditRead, () => run('insert into "events" ("kind") values (?)', 'y')));
  assert.ok(!stands(auditRead, () => run('delete from "clients" where "id" = ?', 1)), 'clients now cascade into audits');
  // Another connection's schema change: its trigger counts from the next turn on.
  other.exec('create trigger events_counted after insert on events begin update post_counts set n = n + 1; end');
  await nextTurn();
  const countRead = 'select * from "post_counts"';
  assert.ok(!stands(countRead, () => run('insert into "events" ("kind") values (?)', 'z')), 'events now has a trigger');
});

test('a commit of another connection ends every remembered read, whichever table it wrote, from the next turn on', async () => {
  await nextTurn();
  const reads = watch.reads(CLIENT_READ);
  const start = watch.generation(reads);
  other.prepare('insert into "events" ("kind") values (?)').run('elsewhere');
  assert.equal(watch.generation(reads), start);
  await nextTurn();
  assert.notEqual(watch.generation(reads), start);
});

test('a read whose tables a schema change altered never meets a generation it was given before', () => {
  const alone = new SQLite(':memory:');
  alone.pragma('foreign_keys = ON');
  alone.exec(`
    create table users (id integer primary key);
    create table grants (id integer primary key, user_id integer references users (id) on update cascade);
    create table tokens (id integer primary key, user_id integer references users (id) on update cascade);
  `);
  const aloneWatch = new SqliteWriteWatch(alone);
  const statements = withStatementCache(alone, (text) => aloneWatch.wrote(text));
  const write = (text: string, ...parameters: unknown[]) => statements.prepare(text).run(parameters);
  write('insert into "users" ("id") values (?)', 1);
  // Three tables, each moved by every update of users: their sum grows three times as fast as
  // the count of writes, which a read of anything is given once `shadow` becomes a view.
  const reads = aloneWatch.reads('select * from "users", "grants", "tokens", "shadow"');
  aloneWatch.generation(reads);
  for (let i = 0; i < 20; i++) write('update "users" set "id" = ? where "id" = ?', i + 2, i + 1);
  const given = new Set([aloneWatch.generation(reads)]);
  write('create view shadow as select 1');
  for (let i = 0; i < 100; i++) {
    const generation = aloneWatch.generation(reads);
    assert.ok(!given.has(generation), `generation ${generation} given again`);
    given.add(generation);
    write('update "users" set "id" = "id" + 100');
  }
  alone.close();
});

/**
 * What `first` (a timer's or an immediate's callback) reads, then another connection's commit, then
 * what a request that arrived after that commit reads: its bytes come in an I/O callback of the
 * next poll, as a message on a port does (libuv's async handle).
 */
async function readBeforeAndAfterArrival(first: (callback: () => void) => void): Promise<[number, number]> {
  const reads = watch.reads(CLIENT_READ);
  const { port1, port2 } = new MessageChannel();
  try {
    return await new Promise<[number, number]>((resolve) => {
      first(() => {
        const before = watch.generation(reads);
        other.prepare('insert into "clients" ("status") values (?)').run('active');
        port1.once('message', () => resolve([before, watch.generation(reads)]));
        port2.postMessage('a request');
      });
    });
  } finally {
    port1.close();
  }
}

test('a commit of another connection counts for a request that arrived after it, though the turn read data_version in its check phase', async () => {
  await nextTurn();
  const [before, after] = await readBeforeAndAfterArrival((callback) => setImmediate(callback));
  assert.notEqual(after, before);
});

test('a commit of another connection counts for a request that arrived after it, though the turn read data_version in a timer', async () => {
  await nextTurn();
  const [before, after] = await readBeforeAndAfterArrival((callback) => setTimeout(callback, 0));
  assert.notEqual(after, before);
});

test('a schema change of this connection that the watch cannot read as one (a comment first) still counts: a trigger it adds, temp or not, is known', () => {
  for (const ddl of [
    '/* audit */ create trigger events_deactivate after insert on events begin update clients set status = \'deactivated\'; end',
    '-- audit\ncreate temp trigger events_deactivate after insert on events begin update clients set status = \'deactivated\'; end',
  ]) {
    const alone = new SQLite(':memory:');
    alone.exec('create table clients (id integer primary key, status text); create table events (id integer primary key); insert into clients values (1, \'active\')');
    const aloneWatch = new SqliteWriteWatch(alone);
    const statements = withStatementCache(alone, (text) => aloneWatch.wrote(text));
    const reads = aloneWatch.reads(CLIENT_READ);
    aloneWatch.generation(reads);
    statements.prepare(ddl).run([]);
    const start = aloneWatch.generation(reads);
    statements.prepare('insert into "events" default values').run([]);
    assert.notEqual(aloneWatch.generation(reads), start, ddl);
    alone.close();
  }
});

test('a plain insert into a table whose constraint resolves conflicts by REPLACE deletes the row it conflicts with, and sets off its ON DELETE actions', () => {
  const alone = new SQLite(':memory:');
  alone.pragma('foreign_keys = ON');
  alone.exec(`
    create table parents (id integer primary key on conflict replace, name text);
    create table kids (id integer primary key, parent_id integer references parents (id) on delete cascade);
    insert into parents values (1, 'a');
    insert into kids values (7, 1);
  `);
  const aloneWatch = new SqliteWriteWatch(alone);
  const statements = withStatementCache(alone, (text) => aloneWatch.wrote(text));
  const reads = aloneWatch.reads('select * from "kids" where "id" = ?');
  const start = aloneWatch.generation(reads);
  statements.prepare('insert into "parents" ("id", "name") values (?, ?)').run([1, 'b']);
  assert.equal(alone.prepare('select count(*) from kids').pluck().get(), 0, 'the kid went with the parent replaced');
  assert.notEqual(aloneWatch.generation(reads), start);
  alone.close();
});

test('a write declared quiet whose table has triggers ends every remembered read: what the trigger writes is not known to be quiet', () => {
  const alone = new SQLite(':memory:');
  alone.exec(`
    create table clients (id integer primary key, status text);
    create table grants (id integer primary key, client_id integer, last_used_at integer);
    create trigger grants_used after update on grants begin update clients set status = 'deactivated' where id = new.client_id; end;
    insert into clients values (1, 'active');
    insert into grants values (1, 1, null);
  `);
  const aloneWatch = new SqliteWriteWatch(alone);
  const statements = withStatementCache(alone, (text) => aloneWatch.wrote(text));
  const touch = 'update "grants" set "last_used_at" = ? where "id" = ?';
  aloneWatch.quiet(touch);
  const reads = aloneWatch.reads(CLIENT_READ);
  const start = aloneWatch.generation(reads);
  statements.prepare(touch).run([5, 1]);
  assert.notEqual(aloneWatch.generation(reads), start);
  alone.close();
});

// libuv polls again within one turn while 1,024 connections are ready at once, so under load a
// turn lasts seconds (attack91: 1.9–3.7 s): a read of data_version is trusted for a millisecond at most.
test('a commit of another connection counts within a turn that does not end, once the last read of data_version is a millisecond old', () => {
  let clock = 0;
  const endless = new SqliteWriteWatch(serving, () => 0, () => clock);
  const reads = endless.reads(CLIENT_READ);
  const before = endless.generation(reads);
  other.prepare('insert into "clients" ("status") values (?)').run('active');
  clock += DATA_VERSION_TRUSTED_MS / 2;
  assert.equal(endless.generation(reads), before, 'trusted for the first half millisecond');
  clock += DATA_VERSION_TRUSTED_MS / 2;
  assert.notEqual(endless.generation(reads), before);
});
