/**
 * Migration 2026-12-01-0070-unproven-refusals-cleared: a refusal kept on a member's e-mail record
 * is read again by the outbox row that gave it, and cleared when today's reading does not make it
 * the address's (a bare code at RCPT or a full mailbox that nothing proves, a class that disagrees
 * with the basic code, a relay's own detail), on SQLite and PostgreSQL; one of the address, one
 * proven by another mail sent while it was tried, or whose row is gone, is kept.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateTo } from '../../src/storage/migrate.js';
import { forEachDatabase } from '../support/databases.js';

const T0 = Date.UTC(2026, 11, 1, 0, 0, 0);
const DAY = 86_400_000;

forEachDatabase('unproven refusals cleared migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<any>;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    await migrateTo(db, '2026-12-01-0050-site-refusals-cleared');
  });
  after(() => handle.close());

  test('refusals kept that are not the address\'s by today\'s reading (a bare 554 at RCPT at the first attempt, 554 4.7.1, 550 5.1.90, 550 5.1.0, a full mailbox with no other mail taken) are cleared from members\' records; an address\'s refusal, or one proven by another mail sent meanwhile, stays', async () => {
    let n = 0;
    /** A member whose address keeps `code`, given by a row tried from `from` to `to` whose `last_error` is `error`. */
    const refused = async (error: string | null, code: number, from = T0, to = T0 + 1) => {
      n += 1;
      const userId = (await db.insertInto('users').values({
        username: `u${n}`, username_key: `u${n}`, password_hash: 'x', status: 'active', bio: '', member: 0, level: 1, xp: 0, created_at: T0, updated_at: T0, status_changed_at: T0,
      }).returning('id').executeTakeFirstOrThrow()).id as number;
      const address = `m${n}@example.test`;
      await db.insertInto('member_emails').values({
        user_id: userId, updated_at: T0, language: 'en', address, address_key: address, verified_at: null, refusal_code: code,
        pending_address: null, pending_address_key: null, pending_refusal_code: null,
      }).execute();
      if (error !== null) {
        await db.insertInto('mail_outbox').values({
          user_id: userId, kind: 'verifyEmail', recipient: address, subject: '', body_text: '', body_html: null,
          created_at: from, next_attempt_at: from, attempts: 1, abandoned_at: to, reply_code: code, last_error: error,
        }).execute();
      }
      return userId;
    };
    const cleared = [
      await refused('EENVELOPE: RCPT TO answered 554; refused for good', 554),
      await refused('EENVELOPE: RCPT TO answered 554 4.7.1; refused for good', 554),
      await refused('EENVELOPE: RCPT TO answered 550 4.2.2; refused for good', 550),
      await refused('EENVELOPE: RCPT TO answered 550 5.1.90; refused for good', 550),
      await refused('EENVELOPE: RCPT TO answered 550 5.1.0; refused for good', 550),
      await refused('EMESSAGE: DATA answered 554 5.2.2; tried for 1440 minutes', 554, T0 + 10 * DAY, T0 + 11 * DAY),
    ];
    const kept = [
      await refused('EENVELOPE: RCPT TO answered 550 5.1.1; refused for good', 550),
      await refused('EENVELOPE: RCPT TO answered 451 4.2.0; tried for 1440 minutes', 451),
      // Tried for a day while the relay took another mail (below, at T0 + 12 h): proven.
      await refused('EENVELOPE: RCPT TO answered 550; tried for 1440 minutes', 550, T0, T0 + DAY),
      await refused('EMESSAGE: DATA answered 552 5.2.2; tried for 1440 minutes', 552, T0, T0 + DAY),
      await refused(null, 554),
    ];
    await db.insertInto('mail_outbox').values({
      user_id: null, kind: 'test', recipient: 'other@example.test', subject: '', body_text: '', body_html: null,
      created_at: T0 + DAY / 2, next_attempt_at: T0 + DAY / 2, attempts: 1, sent_at: T0 + DAY / 2,
    }).execute();
    await migrateTo(db, '2026-12-01-0070-unproven-refusals-cleared');
    const code = async (userId: number) => (await db.selectFrom('member_emails').select('refusal_code').where('user_id', '=', userId).executeTakeFirstOrThrow()).refusal_code;
    for (const userId of cleared) assert.equal(await code(userId), null, `user ${userId}: not the address's, cleared`);
    for (const userId of kept) assert.notEqual(await code(userId), null, `user ${userId}: the address's refusal stays`);
    const outbox = await db.selectFrom('mail_outbox').select('reply_code').where('user_id', 'in', cleared).execute();
    assert.deepEqual(outbox.map((r) => r.reply_code), cleared.map(() => null), 'nor does its outbox row keep it');
  });
});
