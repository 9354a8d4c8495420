/**
 * Migration 2026-11-23-0001-post-renderings and its data step (issue 16 item 2): posts that exist
 * before the columns get the excerpt and HTML `writePost` makes, on SQLite and PostgreSQL, and the
 * API and the post page serve them over HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { excerpt, renderOlderBody } from '../../src/core/community/posts.js';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { MIGRATION_NAMES, migrateTo, migrateToLatest } from '../../src/storage/migrate.js';
import type { Database } from '../../src/storage/schema.js';
import { get, newPersonalToken } from '../api/fixtures.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);

/** Bodies as members wrote them before the column existed: Markdown, HTML, a long one, a hostile one, one with no text. */
const OLD_BODIES = [
  '# Heading\n\nSome **bold** and a [link](https://x.example).',
  'Tom &amp; <b>Jerry</b>',
  `${'alpha beta gamma delta '.repeat(20)}`,
  '['.repeat(20_000),
  '---',
];

forEachDatabase('post excerpts migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<Database>;
  let authorId: number;
  let oldPosts: Array<{ id: number; body: string }>;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    // The database as the release before this migration left it, with its posts.
    assert.deepEqual(await migrateTo(db, '2026-11-22-0001-initial'), { applied: ['2026-11-22-0001-initial'] });
    ({ id: authorId } = await db.insertInto('users').values({
      username: 'writer', username_key: 'writer', password_hash: 'x', status: 'active', bio: '', member: 0, level: 1, xp: 0,
      created_at: T0, updated_at: T0,
    }).returning('id').executeTakeFirstOrThrow());
    const { id: categoryId } = await db.insertInto('categories').values({ name: 'Old', name_key: 'old' }).returning('id').executeTakeFirstOrThrow();
    // More posts than one batch of the data step, so it has to come back for the rest.
    const bodies = Array.from({ length: 230 }, (_, i) => OLD_BODIES[i % OLD_BODIES.length]!);
    oldPosts = await db.insertInto('posts').values(bodies.map((body, i) => ({
      author_id: authorId, category_id: categoryId, title: `Old ${i}`, body, status: 'published', created_at: T0 + i, updated_at: T0 + i,
    }))).returning(['id', 'body']).execute();
  });
  after(() => handle.close());

  test('posts written before the excerpt column get the excerpt writePost makes, and the API serves it', async () => {
    assert.deepEqual(await migrateToLatest(db), { applied: MIGRATION_NAMES.filter((name) => name > '2026-11-22-0001-initial') });
    const rows = await db.selectFrom('posts').select(['id', 'body', 'excerpt', 'body_html']).orderBy('id').execute();
    assert.equal(rows.length, oldPosts.length);
    for (const row of rows) {
      assert.equal(row.excerpt, excerpt(row.body), `post ${row.id}`);
      assert.equal(row.body_html, renderOlderBody(row.body).html, `post ${row.id}`);
    }
    assert.deepEqual(rows.slice(0, OLD_BODIES.length).map((r) => r.excerpt), [
      'Heading Some bold and a link.',
      'Tom & <b>Jerry</b>',
      excerpt(OLD_BODIES[2]!),
      `${'['.repeat(139)}…`,
      '',
    ]);

    // The same database served over HTTP: /me/posts answers the stored excerpts.
    const t: TestApp = await startTestApp(database);
    try {
      const author = (await t.deps.stores.users.findById(authorId))!;
      const { token } = await newPersonalToken(t.deps, author, ['posts:read']);
      const response = await get(t.baseUrl, '/api/open/v1/me/posts?size=5', { token });
      assert.equal(response.status, 200);
      const page = await response.json() as { items: Array<{ id: number; excerpt: string }>; totalElements: number };
      assert.equal(page.totalElements, oldPosts.length);
      const stored = new Map(rows.map((r) => [r.id, r.excerpt]));
      for (const item of page.items) assert.equal(item.excerpt, stored.get(item.id));
      assert.ok(page.items.some((item) => item.excerpt !== ''), 'real excerpts, not the empty default');
    } finally {
      await t.close();
    }
  });

  test('an older body whose Markdown would make a page past the bound is kept as escaped text, and its page serves that', async () => {
    const body = `[a]: /${'x'.repeat(2000)}\n\n${'[a] '.repeat(4000)}`;
    const { id } = await db.insertInto('posts').values({
      author_id: authorId, category_id: (await db.selectFrom('categories').select('id').executeTakeFirstOrThrow()).id,
      title: 'Multiplied', body, status: 'published', created_at: T0, updated_at: T0,
    }).returning('id').executeTakeFirstOrThrow();
    await migrateToLatest(db);
    const row = await db.selectFrom('posts').select(['body_html']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.ok(row.body_html!.startsWith('<p class="plain">[a]: /xxx'), 'the text as typed');
    assert.ok(row.body_html!.length < body.length + 100);
    const t: TestApp = await startTestApp(database);
    try {
      const page = await fetch(`${t.baseUrl}/posts/${id}`);
      assert.equal(page.status, 200);
      assert.ok((await page.text()).length < body.length + 20_000, 'the page is about the size of the body');
    } finally {
      await t.close();
    }
  });

  test('a post written without an excerpt after the migration (an older release during an upgrade) gets one at the next start', async () => {
    const { id } = await db.insertInto('posts').values({
      author_id: authorId, category_id: (await db.selectFrom('categories').select('id').executeTakeFirstOrThrow()).id,
      title: 'From the old release', body: 'Written *during* the upgrade.', status: 'published', created_at: T0, updated_at: T0,
    }).returning('id').executeTakeFirstOrThrow();
    assert.equal((await db.selectFrom('posts').select('excerpt').where('id', '=', id).executeTakeFirstOrThrow()).excerpt, null);
    assert.deepEqual(await migrateToLatest(db), { applied: [] });
    assert.equal((await db.selectFrom('posts').select('excerpt').where('id', '=', id).executeTakeFirstOrThrow()).excerpt, 'Written during the upgrade.');
  });
});
