/** What follows a security-log line: each part is tried whatever became of the others (src/core/accounts/security-log.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SecurityEvent, SecurityEventStore } from '../../src/core/accounts/ports.js';
import { SecurityLog } from '../../src/core/accounts/security-log.js';
import type { AuditEvent } from '../../src/core/audit.js';

function memoryStore(failing = false): SecurityEventStore & { stored: Array<Omit<SecurityEvent, 'id'>> } {
  const stored: Array<Omit<SecurityEvent, 'id'>> = [];
  return {
    stored,
    insert: async (event) => { if (failing) throw new Error('insert refused'); stored.push(event); },
    insertMany: async (events) => { stored.push(...events); },
    listForUser: async () => ({ items: [], total: 0 }) as never,
  };
}

test('one member\'s notice that cannot be queued leaves the notices and audit lines of the others of the same change', async () => {
  const audited: AuditEvent[] = [];
  const mailed: number[] = [];
  const log = new SecurityLog(memoryStore(), { now: () => 0 }, { record: (e) => audited.push(e) }, async (event) => {
    if (event.userId === 1) throw new Error('outbox refused');
    mailed.push(event.userId);
  });
  const announce = await log.recordAll([1, 2, 3].map((userId) => ({ userId, kind: 'password.changed' as const })));
  await assert.rejects(announce(), /outbox refused/);
  assert.deepEqual(mailed, [2, 3]);
  assert.equal(audited.length, 3);
});

test('a security-log line that cannot be stored still mails its notice and writes its audit line, then throws', async () => {
  const audited: AuditEvent[] = [];
  const mailed: number[] = [];
  const log = new SecurityLog(memoryStore(true), { now: () => 0 }, { record: (e) => audited.push(e) }, async (event) => { mailed.push(event.userId); });
  await assert.rejects(log.record({ userId: 7, kind: 'password.changed' }), /insert refused/);
  assert.deepEqual(mailed, [7]);
  assert.equal(audited.length, 1);
});
