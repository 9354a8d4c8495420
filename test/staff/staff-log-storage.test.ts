/** The staff log's storage (INTERFACE section 14): appended to, read newest first, never rewritten; on both databases. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import type { Stores } from '../../src/core/stores.js';
import type { StaffLogEntry } from '../../src/core/staff/ports.js';
import type { DatabaseHandle } from '../../src/storage/database.js';
import { forEachDatabase } from '../support/databases.js';
import { storesForSuite } from '../support/stores.js';

const T0 = Date.UTC(2026, 10, 24, 12);
const DAY = 86_400_000;

function entry(targetId: string, reason: string, createdAt = T0): Omit<StaffLogEntry, 'id'> {
  return {
    createdAt, actorId: 1, actorName: 'mod', action: 'member.status', targetKind: 'member', targetId, targetName: 'ann',
    detail: { status: 'suspended' }, reason,
  };
}

forEachDatabase('staff log storage', (database) => {
  let stores: Stores;
  let handle: DatabaseHandle;
  storesForSuite(database, (s, h) => { stores = s; handle = h; });

  test('an account is a member until given a role; setRole reports whether the account exists', async () => {
    const user = await stores.users.create({ username: `r${randomBytes(3).toString('hex')}`, passwordHash: 'x', bio: '', member: false, level: 1, xp: 0 }, T0);
    assert.equal(await stores.roles.roleOf(user.id), 'member');
    assert.equal(await stores.roles.setRole(user.id, 'moderator', T0), true);
    assert.equal(await stores.roles.roleOf(user.id), 'moderator');
    assert.equal(await stores.roles.setRole(9_999_999, 'admin', T0), false);
    assert.equal(await stores.roles.roleOf(9_999_999), undefined);
  });

  test('entries come back newest first, a page before an id, or of one target, as they were written', async () => {
    const target = `t${randomBytes(3).toString('hex')}`;
    const first = await stores.staffLog.append(entry(target, 'first reason'));
    const second = await stores.staffLog.append(entry(target, 'second reason', T0 + 1));
    assert.deepEqual(second, { ...entry(target, 'second reason', T0 + 1), id: second.id });
    assert.ok(second.id > first.id);
    const ofTarget = await stores.staffLog.list({ limit: 10, target: { kind: 'member', id: target } });
    assert.deepEqual(ofTarget.map((e) => e.reason), ['second reason', 'first reason']);
    assert.deepEqual((await stores.staffLog.list({ limit: 10, beforeId: second.id, target: { kind: 'member', id: target } })).map((e) => e.id), [first.id]);
    assert.equal((await stores.staffLog.list({ limit: 1 }))[0]!.id, second.id);
  });

  test('the database refuses to update or delete a staff-log entry', async () => {
    const written = await stores.staffLog.append(entry('x', 'kept for good'));
    await assert.rejects(sql`update staff_log set reason = 'rewritten' where id = ${written.id}`.execute(handle.db), /append-only/);
    await assert.rejects(sql`delete from staff_log where id = ${written.id}`.execute(handle.db), /append-only/);
    const [read] = await stores.staffLog.list({ limit: 1, target: { kind: 'member', id: 'x' } });
    assert.equal(read?.reason, 'kept for good');
  });

  test('housekeeping never purges the staff log, however old its entries', async () => {
    const old = await stores.staffLog.append(entry('old', 'a year ago', T0 - 400 * DAY));
    await stores.housekeeping.purge(T0, { auditWindowMs: DAY, batchSize: 100, grantLifetimeMs: DAY, deliveryMaxAgeMs: DAY, mailMaxAgeMs: DAY, securityLogWindowMs: DAY, selfRegisteredGraceMs: DAY, documentClientGraceMs: DAY, sealedAnswerMaxAgeMs: DAY });
    assert.deepEqual((await stores.staffLog.list({ limit: 5, target: { kind: 'member', id: 'old' } })).map((e) => e.id), [old.id]);
  });
});
