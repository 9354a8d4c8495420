/** What follows a security-log line: each part is tried whatever became of the others (src/core/accounts/security-log.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SecurityEvent, SecurityEventStore } from '../../src/core/accounts/ports.js';
import { SecurityLog } from '../../src/core/accounts/security-log.js';
import type { AuditEvent } from '../../src/core/audit.js';
import { QUIET } from '../../src/core/log.js';

function memoryStore(failing = false): SecurityEventStore & { stored: Array<Omit<SecurityEvent, 'id'>> } {
  const stored: Array<Omit<SecurityEvent, 'id'>> = [];
  return {
    stored,
    insert: async (event) => { if (failing) throw new Error('insert refused'); stored.push(event); },
    insertUnlessDeleted: async (event) => { if (failing) throw new Error('insert refused'); stored.push(event); return true; },
    insertMany: async (events) => { stored.push(...events); },
    listForUser: async () => ({ items: [], total: 0 }) as never,
    eraseForUser: async () => {},
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

test('a security-log line that cannot be stored still mails its notice and writes its audit line, and is reported to the server\'s log with its request\'s id, never thrown', async () => {
  const audited: AuditEvent[] = [];
  const mailed: number[] = [];
  const reported: string[] = [];
  const log = new SecurityLog(memoryStore(true), { now: () => 0 }, { record: (e) => audited.push(e) }, async (event) => { mailed.push(event.userId); });
  log.reportTo({ ...QUIET, error: (details) => reported.push(`${(details as { err: Error }).err.message} in ${(details as { reqId?: string }).reqId}`) });
  await log.record({ userId: 7, kind: 'password.changed', origin: { address: '192.0.2.7', requestId: 'req-42' } });
  assert.deepEqual(mailed, [7]);
  assert.equal(audited.length, 1);
  assert.deepEqual(reported, ['insert refused in req-42'], 'with the id of the request that made the change');
});

test('a security-log line that cannot be stored keeps the audit event its action writes (a kind AUDIT_OF says its action writes)', async () => {
  const audited: AuditEvent[] = [];
  const log = new SecurityLog(memoryStore(true), { now: () => 0 }, { record: (e) => audited.push(e) });
  await log.record({ userId: 7, kind: 'account.deleted' }, { audit: 'account.deleted', userId: 7, clientsDeactivated: 0, via: 'site', address: '' });
  assert.deepEqual(audited.map((e) => e.audit), ['account.deleted']);
});
