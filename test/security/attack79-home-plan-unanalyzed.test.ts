/**
 * attack79: right after migration 2026-11-29-0010-hidden-author-flags on an existing PostgreSQL
 * database, `posts.author_hidden` has no statistics, and has none until autovacuum next analyzes
 * posts (once a tenth of its rows changed: days on a large site that mostly reads). Planned on
 * the default selectivity, the home page's run of members made active again read every post
 * (Seq Scan on posts) at each view: 16–25 ms at 100,000 posts where 0.5 ms was to be had, and
 * 1 s with a member of 50,000 flagged posts made active again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrate.js';
import { recentPublished } from '../../src/storage/repositories/community/posts.js';
import { createStores } from '../../src/storage/stores.js';
import { dropSchema, postgresUrl, withSearchPath } from '../support/databases.js';

const BEFORE = '2026-11-28-0040-trigger-search-path';
const POSTS = 100_000;

describe('attack79: the home page\'s plan on a database just migrated', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  const schema = `t_${process.pid}_a79_plan`;
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
    // An existing database: its tables analyzed, as autovacuum keeps them, before the migration.
    await admin.query(`analyze ${s}.posts; analyze ${s}.users`);
    await handle.inMigrationTurn((db) => migrateToLatest(db));
  });
  after(async () => {
    await handle.close();
    await dropSchema(admin, schema);
    await admin.end();
  });

  test('after the migration and a suspended member\'s passes, with no analyze since, the home page reads no post outside its indexes', async () => {
    const stores = createStores(handle.db, handle.queries);
    const [member] = await handle.db.selectFrom('users').select('id').orderBy('id').limit(1).execute();
    await stores.users.setStatus(member!.id, 'suspended', 1);
    while ((await stores.posts.syncHiddenFlags(500)) > 0);
    const query = recentPublished(handle.db, 30).compile();
    await admin.query(`set search_path = ${schema}`);
    const { rows } = await admin.query(`explain ${query.sql}`);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    assert.doesNotMatch(plan, /Seq Scan on posts/, plan);
  });
});
