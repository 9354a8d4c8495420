/**
 * Migration 2026-11-30-0070-address-refusals: a refusal the outbox still keeps, the newest outcome
 * of mail to a member's address or pending address, is kept with the address on their e-mail
 * record; an address whose newer mail was sent keeps none; addresses are matched lower-cased in
 * JavaScript (non-ASCII letters too), on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateTo } from '../../src/storage/migrate.js';
import { forEachDatabase } from '../support/databases.js';

const T0 = Date.UTC(2026, 10, 29, 0, 0, 0);

forEachDatabase('address refusals migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<any>;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    await migrateTo(db, '2026-11-30-0050-mail-reply-code');
  });
  after(() => handle.close());

  test('the newest outcome of mail to a member\'s address or pending address, when a refusal, is kept on their e-mail record', async () => {
    const user = async (username: string) => (await db.insertInto('users').values({
      username, username_key: username, password_hash: 'x', status: 'active', bio: '', member: 0, level: 1, xp: 0, created_at: T0, updated_at: T0,
    }).returning('id').executeTakeFirstOrThrow()).id as number;
    const email = (userId: number, address: string, pending: string | null = null) => db.insertInto('member_emails').values({
      user_id: userId, address, address_key: address.toLowerCase(), verified_at: pending === null ? null : T0, updated_at: T0, language: 'en',
      pending_address: pending, pending_address_key: pending?.toLowerCase() ?? null,
    }).execute();
    const outcome = (userId: number, recipient: string, at: number, replyCode: number | null) => db.insertInto('mail_outbox').values({
      user_id: userId, kind: 'verifyEmail', recipient, subject: '', body_text: '', body_html: null, created_at: at, next_attempt_at: at, attempts: 1,
      ...(replyCode === null ? { sent_at: at } : { abandoned_at: at, reply_code: replyCode, last_error: 'RCPT TO answered' }),
    }).execute();
    const refused = await user('refused');
    await email(refused, 'ärger@example.test');
    await outcome(refused, 'ÄRGER@example.test', T0 + 2, 550);
    await outcome(refused, 'ärger@example.test', T0 + 1, null);
    const sentSince = await user('sentsince');
    await email(sentSince, 'b@example.test');
    await outcome(sentSince, 'b@example.test', T0 + 1, 550);
    await outcome(sentSince, 'b@example.test', T0 + 2, null);
    const pending = await user('pending');
    await email(pending, 'verified@example.test', 'new@example.test');
    await outcome(pending, 'verified@example.test', T0 + 1, null);
    await outcome(pending, 'new@example.test', T0 + 1, 554);
    const none = await user('none');
    await email(none, 'd@example.test');
    await migrateTo(db, '2026-11-30-0070-address-refusals');
    const rows = await db.selectFrom('member_emails').select(['user_id', 'refusal_code', 'pending_refusal_code']).orderBy('user_id').execute();
    assert.deepEqual(rows.map((r) => [r.user_id, r.refusal_code, r.pending_refusal_code]), [
      [refused, 550, null], [sentSince, null, null], [pending, null, 554], [none, null, null],
    ]);
  });
});
