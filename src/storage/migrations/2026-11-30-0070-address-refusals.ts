/**
 * A refusal of a member's address kept with the address, on their e-mail record: the SMTP reply
 * code with which its server refused the newest mail to it (`refusal_code`), and to the address a
 * change waits for (`pending_refusal_code`). The outbox row that told it is deleted by the janitor
 * after the audit window, and the member's e-mail settings then said nothing while mail still
 * failed. Each is filled from the outbox rows still kept: where the newest outcome of mail to the
 * address (sent, or given up with a reply code) is a refusal. Addresses are matched lower-cased in
 * JavaScript, as `address_key` was made: SQLite's `lower()` folds ASCII only. Frozen in time: it
 * takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

interface Outcome {
  user_id: number;
  recipient: string;
  id: number;
  sent_at: string | number | null;
  abandoned_at: string | number | null;
  reply_code: number | null;
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('member_emails').addColumn('refusal_code', 'integer').execute();
  await db.schema.alterTable('member_emails').addColumn('pending_refusal_code', 'integer').execute();
  // The outcomes of the accounts with a refusal: few rows, read once.
  const outcomes: Outcome[] = await db.selectFrom('mail_outbox')
    .select(['user_id', 'recipient', 'id', 'sent_at', 'abandoned_at', 'reply_code'])
    .where('user_id', 'in', (eb: any) => eb.selectFrom('mail_outbox').select('user_id').where('reply_code', 'is not', null).where('user_id', 'is not', null))
    .where((eb: any) => eb.or([eb('sent_at', 'is not', null), eb('reply_code', 'is not', null)]))
    .execute();
  const newest = new Map<string, Outcome>();
  const at = (o: Outcome) => Number(o.sent_at ?? o.abandoned_at);
  for (const outcome of outcomes) {
    const key = `${outcome.user_id} ${outcome.recipient.trim().toLowerCase()}`;
    const kept = newest.get(key);
    if (kept === undefined || at(outcome) > at(kept) || (at(outcome) === at(kept) && outcome.id > kept.id)) newest.set(key, outcome);
  }
  for (const outcome of newest.values()) {
    if (outcome.sent_at !== null || outcome.reply_code === null) continue;
    const addressKey = outcome.recipient.trim().toLowerCase();
    await db.updateTable('member_emails').set({ refusal_code: outcome.reply_code }).where('user_id', '=', outcome.user_id).where('address_key', '=', addressKey).execute();
    await db.updateTable('member_emails').set({ pending_refusal_code: outcome.reply_code }).where('user_id', '=', outcome.user_id).where('pending_address_key', '=', addressKey).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('member_emails').dropColumn('pending_refusal_code').execute();
  await db.schema.alterTable('member_emails').dropColumn('refusal_code').execute();
}
