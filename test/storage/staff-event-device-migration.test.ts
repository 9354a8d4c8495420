/**
 * Migration 2026-11-29-0020-staff-event-device: the lines staff changes wrote in members' security
 * logs before they were stored as from the site's staff read so after it, and no other line is
 * touched, on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { SITE_STAFF } from '../../src/core/accounts/user-agent.js';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateTo } from '../../src/storage/migrate.js';
import type { Database } from '../../src/storage/schema.js';
import { forEachDatabase } from '../support/databases.js';

const T0 = Date.UTC(2026, 10, 28, 0, 0, 0);

forEachDatabase('staff event device migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<Database>;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    await migrateTo(db, '2026-11-29-0010-hidden-author-flags');
  });
  after(() => handle.close());

  test('a staff change\'s line written before reads from the site\'s staff; a browser\'s line and a staff line already named are left as they are', async () => {
    const { id: userId } = await db.insertInto('users').values({
      username: 'moderated', username_key: 'moderated', password_hash: 'x', status: 'active', bio: '', member: 0, level: 1, xp: 0, created_at: T0, updated_at: T0,
    }).returning('id').executeTakeFirstOrThrow();
    const line = (kind: string, device: string) => ({ user_id: userId, kind, created_at: T0, address: '', device, detail: '{}' });
    await db.insertInto('security_events').values([
      line('staff.sessions_revoked', ''), line('staff.two_step_reset', ''), line('staff.role_changed', ''),
      line('staff.role_changed', SITE_STAFF), line('sign_in.succeeded', ''), line('password.changed', 'Firefox on Linux'),
    ]).execute();
    await migrateTo(db, '2026-11-29-0020-staff-event-device');
    const rows = await db.selectFrom('security_events').select(['kind', 'device']).where('user_id', '=', userId).orderBy('id').execute();
    assert.deepEqual(rows.map((r) => [r.kind, r.device]), [
      ['staff.sessions_revoked', SITE_STAFF], ['staff.two_step_reset', SITE_STAFF], ['staff.role_changed', SITE_STAFF],
      ['staff.role_changed', SITE_STAFF], ['sign_in.succeeded', ''], ['password.changed', 'Firefox on Linux'],
    ]);
  });
});
