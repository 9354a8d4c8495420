/**
 * Migration 2026-11-30-0110-status-changed-at: every account's `status_changed_at` starts as its
 * `updated_at`, the last write that could have been its status change, on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateTo } from '../../src/storage/migrate.js';
import type { Database } from '../../src/storage/schema.js';
import { forEachDatabase } from '../support/databases.js';

const T0 = Date.UTC(2026, 10, 30, 0, 0, 0);

forEachDatabase('status changed at migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<Database>;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    await migrateTo(db, '2026-11-30-0050-mail-reply-code');
  });
  after(() => handle.close());

  test('an account\'s status_changed_at starts as its updated_at', async () => {
    const account = (username: string, status: string, updatedAt: number) => ({
      username, username_key: username, password_hash: 'x', status, bio: '', member: 0, level: 1, xp: 0, created_at: T0, updated_at: updatedAt,
    });
    await db.insertInto('users').values([account('stayed', 'active', T0), account('left', 'suspended', T0 + 60_000)]).execute();
    await migrateTo(db, '2026-11-30-0110-status-changed-at');
    const rows = await db.selectFrom('users').select(['username', 'status_changed_at']).where('username', 'in', ['stayed', 'left']).orderBy('username').execute();
    assert.deepEqual(rows.map((r) => [r.username, Number(r.status_changed_at)]), [['left', T0 + 60_000], ['stayed', T0]]);
  });
});
