/**
 * Migration 2026-11-29-0010-hidden-author-flags on an existing PostgreSQL database of 100,000 posts
 * (attack79), run in the migrations' one transaction:
 * - it altered `users` (ACCESS EXCLUSIVE until the commit) before building the two new indexes on
 *   `posts`, so every read of `users` (each signed-in request, every sign-in) waited for both
 *   builds over the whole posts table: 0.39 s at 100,000 posts, seconds at 10^6;
 * - it left `posts.author_hidden` without statistics until autovacuum next analyzed posts (once a
 *   tenth of its rows changed: days on a large site that mostly reads); planned on the default
 *   selectivity, the home page's run of members made active again read every post (Seq Scan on
 *   posts) at each view: 16–25 ms where 0.5 ms was to be had, 1 s with a member of 50,000 flagged
 *   posts made active again.
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

describe('the hidden-author-flags migration on an existing PostgreSQL database', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set: PostgreSQL test skipped' }, () => {
  const prefix = `t_${process.pid}_hidden_flags`;
  const handles: DatabaseHandle[] = [];
  const schemas: string[] = [];
  let admin: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
  });
  after(async () => {
    for (const handle of handles) await handle.close();
    for (const schema of schemas) await dropSchema(admin, schema);
    await admin.end();
  });

  /** A schema of its own as the release before the migration left it: 1,000 members, 100,000 published posts, analyzed as autovacuum keeps them. */
  async function databaseBeforeTheMigration(name: string): Promise<{ handle: DatabaseHandle; schema: string }> {
    const schema = `${prefix}_${name}`;
    schemas.push(schema);
    await admin.query(`create schema ${schema}`);
    const handle = openDatabase({ kind: 'postgres', url: withSearchPath(postgresUrl!, schema) });
    handles.push(handle);
    await migrateTo(handle.db, BEFORE);
    await admin.query(`insert into ${schema}.users (username, username_key, password_hash, bio, member, level, xp, created_at, updated_at)
      select 'u' || i, 'u' || i, 'h', '', false, 1, 0, 0, 0 from generate_series(1, 1000) i`);
    await admin.query(`insert into ${schema}.categories (name, name_key) values ('c', 'c')`);
    // The posts' triggers (counts kept with the author) are not what is measured: skipped, for speed.
    await admin.query('set session_replication_role = replica');
    await admin.query(`insert into ${schema}.posts (author_id, category_id, title, body, body_html, excerpt, status, created_at, updated_at)
      select (select min(id) from ${schema}.users) + (i % 1000), (select min(id) from ${schema}.categories), 't' || i, 'b', '<p>b</p>', 'b',
        'published', i * 1000, i * 1000 from generate_series(1, ${POSTS}) i`);
    await admin.query('set session_replication_role = default');
    await admin.query(`analyze ${schema}.posts; analyze ${schema}.users`);
    return { handle, schema };
  }

  test('while an index on posts is built, users is not held exclusively', async () => {
    const { handle, schema } = await databaseBeforeTheMigration('locks');
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

  test('after the migration and a suspended member\'s passes, with no analyze since, the home page reads no post outside its indexes', async () => {
    const { handle, schema } = await databaseBeforeTheMigration('plan');
    await handle.inMigrationTurn((db) => migrateToLatest(db));
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
