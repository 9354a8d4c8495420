/**
 * Migration 2026-11-23-0080-published-post-counts: each author's published total starts from the
 * posts already there, and a post another writer publishes while the migration runs (an instance
 * of the previous release, the command line) is counted too, on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { type Kysely, type KyselyPlugin, type RawNode, sql } from 'kysely';
import pg from 'pg';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateTo } from '../../src/storage/migrate.js';
import type { Database } from '../../src/storage/schema.js';
import { forEachDatabase } from '../support/databases.js';
import { holdsWithin } from '../support/eventually.js';

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);
const BEFORE = '2026-11-23-0070-posts-page-index';
const COUNTS = '2026-11-23-0080-published-post-counts';

forEachDatabase('published post counts migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<Database>;
  let authorId: number;
  let draftId: number;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    await migrateTo(db, BEFORE);
    ({ id: authorId } = await db.insertInto('users').values({
      username: 'writer', username_key: 'writer', password_hash: 'x', status: 'active', bio: '', member: 0, level: 1, xp: 0,
      created_at: T0, updated_at: T0,
    }).returning('id').executeTakeFirstOrThrow());
    const { id: categoryId } = await db.insertInto('categories').values({ name: 'Old', name_key: 'old' }).returning('id').executeTakeFirstOrThrow();
    const post = (status: string, i: number) => ({ author_id: authorId, category_id: categoryId, title: `Old ${i}`, body: 'b', status, created_at: T0 + i, updated_at: T0 + i });
    const rows = await db.insertInto('posts').values([post('published', 0), post('published', 1), post('draft', 2)]).returning('id').execute();
    draftId = rows[2]!.id;
  });
  after(() => handle.close());

  const publishedTotal = async () => (await sql<{ n: number }>`select published_posts as n from users where id = ${authorId}`.execute(db)).rows[0]!.n;
  const publishedPosts = async () => Number((await db.selectFrom('posts').select((eb) => eb.fn.countAll().as('n'))
    .where('author_id', '=', authorId).where('status', '=', 'published').executeTakeFirstOrThrow()).n);

  test('a post another writer publishes while the migration runs is counted: the total agrees with the posts', async () => {
    const publish = `update posts set status = 'published' where id = ${Number(draftId)}`;
    if (database.name === 'postgres') {
      // An instance of the previous release publishes a draft in a transaction the migration has to wait for.
      const other = new pg.Client({ connectionString: database.url });
      await other.connect();
      try {
        await other.query('begin');
        await other.query(publish);
        const migrating = migrateTo(db, COUNTS);
        // Committed once the migration waits on the publish's lock on posts.
        const waits = async () => (await other.query(`select count(*)::int as n from pg_locks where not granted and relation = 'posts'::regclass`)).rows[0].n === 1;
        assert.ok(await holdsWithin(10_000, waits), 'the migration waits for the publish');
        await other.query('commit');
        await migrating;
      } finally {
        await other.end();
      }
    } else {
      // Another process on the same file publishes the draft between two of the migration's statements.
      const other = new SQLite((database.target as { path: string }).path);
      other.pragma('busy_timeout = 0');
      let published = false;
      const between: KyselyPlugin = {
        transformQuery: ({ node }) => {
          const text = node.kind === 'RawNode' ? (node as RawNode).sqlFragments.join('?') : '';
          if (!published && /create trigger/i.test(text)) {
            try {
              other.prepare(publish).run();
              published = true;
            } catch (error) {
              // The migration holds the write lock: the other writer waits its turn.
              if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
            }
          }
          return node;
        },
        transformResult: async ({ result }) => result,
      };
      try {
        await migrateTo(db.withPlugin(between), COUNTS);
        if (!published) other.prepare(publish).run();
      } finally {
        other.close();
      }
    }
    assert.equal(await publishedPosts(), 3);
    assert.equal(await publishedTotal(), 3);
  });

  test('going down drops the column and its triggers; going up again counts the posts as they are then', async () => {
    await migrateTo(db, BEFORE);
    // (Not through introspection: on PostgreSQL it lists the tables of every suite's schema.)
    await assert.rejects(sql`select published_posts from users`.execute(db), 'the column is gone');
    await db.deleteFrom('posts').where('id', '=', draftId).execute();
    await migrateTo(db, COUNTS);
    assert.equal(await publishedTotal(), 2);
    await db.updateTable('posts').set({ status: 'draft' }).where('author_id', '=', authorId).execute();
    assert.equal(await publishedTotal(), 0);
  });
});
