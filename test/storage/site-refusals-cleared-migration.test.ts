/**
 * Migration 2026-12-01-0050-site-refusals-cleared: a refusal kept on a member's e-mail record is
 * read again by the outbox row that gave it (its `last_error`: step and codes), and cleared when
 * it was the site's (a relay refusing the site's sender or policy, a message refused at DATA), on
 * SQLite and PostgreSQL; one of the address, or whose row is gone, is kept.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateTo } from '../../src/storage/migrate.js';
import { forEachDatabase } from '../support/databases.js';

const T0 = Date.UTC(2026, 10, 30, 0, 0, 0);

forEachDatabase('site refusals cleared migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<any>;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    await migrateTo(db, '2026-11-30-0110-status-changed-at');
  });
  after(() => handle.close());

  test('the 0070 migration\'s copies of the site\'s refusals (MAIL FROM, 5.7.x, a bare 554 to DATA) are cleared from members\' records, back to the address\'s own newest outcome; an address\'s refusal stays', async () => {
    let n = 0;
    /** A member whose address (or, `pending`, the address a change waits for) keeps `code`, given by a row whose `last_error` is `error`. */
    const refused = async (error: string | null, code: number, pending = false) => {
      n += 1;
      const userId = (await db.insertInto('users').values({
        username: `u${n}`, username_key: `u${n}`, password_hash: 'x', status: 'active', bio: '', member: 0, level: 1, xp: 0, created_at: T0, updated_at: T0, status_changed_at: T0,
      }).returning('id').executeTakeFirstOrThrow()).id as number;
      const address = `Ärger${n}@example.test`;
      await db.insertInto('member_emails').values({
        user_id: userId, updated_at: T0, language: 'en', address: pending ? 'old@example.test' : address, address_key: pending ? 'old@example.test' : address.toLowerCase(),
        verified_at: pending ? T0 : null, refusal_code: pending ? null : code,
        pending_address: pending ? address : null, pending_address_key: pending ? address.toLowerCase() : null, pending_refusal_code: pending ? code : null,
      }).execute();
      if (error !== null) {
        await db.insertInto('mail_outbox').values({
          user_id: userId, kind: 'verifyEmail', recipient: address.toUpperCase(), subject: '', body_text: '', body_html: null,
          created_at: T0, next_attempt_at: T0, attempts: 1, abandoned_at: T0 + 1, reply_code: code, last_error: error,
        }).execute();
      }
      return userId;
    };
    const site = [
      await refused('EENVELOPE: MAIL FROM answered 553 5.7.1; refused for good', 553),
      await refused('EENVELOPE: RCPT TO answered 554 5.7.1; refused for good', 554),
      await refused('EMESSAGE: DATA answered 554; refused for good', 554),
      await refused('EMESSAGE: DATA answered 550 5.7.26; refused for good', 550, true),
      await refused('EENVELOPE: RCPT TO answered 530; refused for good', 530),
      await refused('EMESSAGE: DATA answered 554 5.2.252; refused for good', 554),
    ];
    const address = [
      await refused('EENVELOPE: RCPT TO answered 550 5.1.1; refused for good', 550),
      await refused('EENVELOPE: RCPT TO answered 554; refused for good', 554, true),
      await refused('EENVELOPE: RCPT TO answered 550 4.2.2; refused for good', 550),
      await refused('EENVELOPE: RCPT TO answered 451 4.2.0; tried for 1440 minutes', 451),
      await refused('EMESSAGE: DATA answered 550 5.1.10; refused for good', 550),
      await refused(null, 550),
    ];
    /** Another outcome of mail to the address of `userId`'s row, before it. */
    const before = async (userId: number, outcome: { sent_at?: number; abandoned_at?: number; reply_code?: number; last_error?: string }) => {
      const { recipient } = await db.selectFrom('mail_outbox').select('recipient').where('user_id', '=', userId).executeTakeFirstOrThrow();
      await db.insertInto('mail_outbox').values({
        user_id: userId, kind: 'verifyEmail', recipient, subject: '', body_text: '', body_html: null, created_at: T0 - 10, next_attempt_at: T0 - 10, attempts: 1, ...outcome,
      }).execute();
    };
    // A site's refusal over an older refusal of the address: the record says the address's again,
    // unless a mail to the address was accepted between.
    const again = await refused('EMESSAGE: DATA answered 554; refused for good', 554);
    await before(again, { abandoned_at: T0, reply_code: 550, last_error: 'EENVELOPE: RCPT TO answered 550 5.1.1; refused for good' });
    const since = await refused('EMESSAGE: DATA answered 554; refused for good', 554);
    await before(since, { abandoned_at: T0 - 1, reply_code: 550, last_error: 'EENVELOPE: RCPT TO answered 550 5.1.1; refused for good' });
    await before(since, { sent_at: T0 });
    await migrateTo(db, '2026-12-01-0050-site-refusals-cleared');
    const codes = async (userId: number) => {
      const row = await db.selectFrom('member_emails').select(['refusal_code', 'pending_refusal_code']).where('user_id', '=', userId).executeTakeFirstOrThrow();
      return row.refusal_code ?? row.pending_refusal_code;
    };
    for (const userId of site) assert.equal(await codes(userId), null, `user ${userId}: the site's refusal is cleared`);
    for (const userId of address) assert.notEqual(await codes(userId), null, `user ${userId}: the address's refusal stays`);
    assert.equal(await codes(again), 550, 'the older refusal of the address is told again');
    assert.equal(await codes(since), null, 'not one before a mail the address accepted');
    const outbox = await db.selectFrom('mail_outbox').select(['user_id', 'reply_code']).where('user_id', 'in', site).execute();
    assert.deepEqual(outbox.map((r) => r.reply_code), site.map(() => null), 'nor does its outbox row keep it');
  });
});
