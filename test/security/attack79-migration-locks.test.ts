/**
 * attack79: migration 2026-11-29-0010-hidden-author-flags on PostgreSQL runs in the migrations'
 * one transaction. It altered `users` (ACCESS EXCLUSIVE until the commit) before building the two
 * new indexes on `posts`, so every read of `users` (each signed-in request, every sign-in) waited
 * for both index builds over the whole posts table: 0.39 s at 100,000 posts, seconds at 10^6.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrate.js';
import { dropSchema, postgresUrl, withSearchPath } from '../support/databases.js';

const BEFORE = '2026-11-28-0040-trigger-search-path';
const POSTS = 100_000;

describe('attack79: the hidden-author-flags migration and reads of users', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  const schema = `t_${process.pid}_a79_migration`;
  let handle: DatabaseHandle;
  let admin: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    handle = openDatabase({ kind: 'postgres', url: withSearchPath(postgresUrl!, schema) });
    await migrateTo(handle.db, BEFORE);
    const s = schema;
    await admin.query(`insert into ${s}.users (username, username_key, password_hash, bio, member, level, xp, created_at, updated_at)
      select 'u' || i, 'u' || i, 'h', '', false, 1, 0, 0, 0 from generate_series(1, 1000) i`);
    await admin.query(`insert into ${s}.categories (name, name_key) values ('c', 'c')`);
    // The posts' triggers (counts kept with the author) are not what is measured: skipped, for speed.
    await admin.query('set session_replication_role = replica');
    await admin.query(`insert into ${s}.posts (author_id, category_id, title, body, body_html, excerpt, status, created_at, updated_at)
      select (select min(id) from ${s}.users) + (i % 1000), (select min(id) from ${s}.categories), 't' || i, 'b', '<p>b</p>', 'b',
        'published', i * 1000, i * 1000 from generate_series(1, ${POSTS}) i`);
    await admin.query('set session_replication_role = default');
    await admin.query(`analyze ${s}.posts; analyze ${s}.users`);
  });
  after(async () => {
    await handle.close();
    await dropSchema(admin, schema);
    await admin.end();
  });

  test('while an index on posts is built, users is not held exclusively', async () => {
    const watcher = new pg.Client({ connectionString: postgresUrl });
    await watcher.connect();
    let stop = false;
    let builds = 0;
    let usersHeld = 0;
    const watching = (async () => {
      while (!stop) {
        const { rows } = await watcher.query(`select exists (select 1 from pg_locks l where l.pid = p.pid and l.granted
            and l.relation = to_regclass($1) and l.mode = 'AccessExclusiveLock') as held
          from pg_stat_progress_create_index p where p.relid = to_regclass($2)`, [`${schema}.users`, `${schema}.posts`]);
        builds += rows.length;
        usersHeld += rows.filter((row) => row.held).length;
      }
    })();
    try {
      await handle.inMigrationTurn((db) => migrateToLatest(db));
    } finally {
      stop = true;
      await watching;
      await watcher.end();
    }
    assert.ok(builds > 0, 'the watcher saw no index build on posts');
    assert.equal(usersHeld, 0, `of ${builds} looks at an index build on posts, ${usersHeld} found users locked exclusively by the migration`);
  });
});
