/**
 * Clears the refusals kept on members' e-mail records that the reading of 2026-12-01-0070 does
 * not make the address's. Before it, a relay's own refusal at RCPT with no enhanced code
 * ("Relaying denied" as a bare `554`, alike for every recipient) was kept as every member's
 * address refusing mail, as was a full mailbox (`5.2.2`, which a relay also answers for the site's
 * own quota) after a day, a code whose class disagrees with the basic code (`554 4.7.1`), and a
 * relay's own `x.1.y`/`x.2.y` detail at RCPT (`550 5.1.90`), and "other address status" (`550 5.1.0`,
 * which Postfix answers at RCPT for a sender address its domain does not list). Such a refusal is now the address's
 * only once the relay refused the same mail again after it took another one; a row keeps no
 * attempt but its last, so it counts as proven when another mail was sent between the mail's
 * queuing and its give-up (a day of retries on a relay that took other mail; never a give-up at
 * the first attempt). Each kept refusal is read again by the newest of the address's rows with a
 * reply code, whose `last_error` names the step and the codes (`readReply` of today, copied here);
 * one not the address's is cleared from its row, and the record gets the address's own newest
 * outcome instead, as 2026-12-01-0050 does. A refusal whose row the janitor has deleted is kept.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

interface Outcome {
  id: number;
  user_id: number;
  recipient: string;
  created_at: string | number;
  sent_at: string | number | null;
  abandoned_at: string | number | null;
  reply_code: number | null;
  last_error: string | null;
}

/** The step and codes a give-up's `last_error` names, as the transport writes it. */
const ERROR = /^[^:]*: (.+?) answered ([2-5]\d{2})(?: ([245])\.(\d{1,3})\.(\d{1,3}))?(?:;|$)/;

/** Whose the refusal `error` tells is (`readReply` of 2026-12-01-0070): the address's, the site's, or the address's once proven. */
function whose(error: string | null): 'address' | 'site' | 'unproven' {
  const [, command, basic, category, subject, detail] = ERROR.exec(error ?? '') ?? [];
  if (basic === undefined || (command !== 'RCPT TO' && command !== 'DATA')) return 'site';
  const code = Number(basic);
  const [s, d] = [Number(subject), Number(detail)];
  if ((s === 1 && d > 10) || (s === 2 && d > 4)) return 'site';
  if (category !== undefined && s === 1) return d === 7 || d === 8 ? 'site' : d === 0 ? 'unproven' : 'address';
  if (category !== undefined && s === 2) return d === 3 ? 'site' : d === 2 ? 'unproven' : 'address';
  if (category !== undefined && [3, 5, 6, 7].includes(s)) return 'site';
  if (Math.floor(code / 10) % 10 < 4 || command === 'DATA') return 'site';
  return 'unproven';
}

export async function up(db: Kysely<any>): Promise<void> {
  // The outcomes (sent, or refused with a reply code) of the members with a refusal kept: few rows, read once.
  const rows: Outcome[] = await db.selectFrom('mail_outbox')
    .select(['id', 'user_id', 'recipient', 'created_at', 'sent_at', 'abandoned_at', 'reply_code', 'last_error'])
    .where((eb: any) => eb.or([eb('sent_at', 'is not', null), eb.and([eb('reply_code', 'is not', null), eb('abandoned_at', 'is not', null)])]))
    .where('user_id', 'in', (eb: any) => eb.selectFrom('member_emails').select('user_id')
      .where((e: any) => e.or([e('refusal_code', 'is not', null), e('pending_refusal_code', 'is not', null)])))
    .execute();
  const proven = async (o: Outcome) => (await db.selectFrom('mail_outbox').select('id').where('id', '!=', o.id)
    .where('sent_at', '>', Number(o.created_at)).where('sent_at', '<', Number(o.abandoned_at)).limit(1).executeTakeFirst()) !== undefined;
  const byAddress = new Map<string, Outcome[]>();
  for (const row of rows) {
    const key = `${row.user_id} ${row.recipient.trim().toLowerCase()}`;
    byAddress.set(key, [...byAddress.get(key) ?? [], row]);
  }
  const at = (o: Outcome) => Number(o.sent_at ?? o.abandoned_at);
  const newestOf = (outcomes: Outcome[]) => outcomes.reduce<Outcome | undefined>((kept, o) => (kept === undefined || at(o) > at(kept) || (at(o) === at(kept) && o.id > kept.id) ? o : kept), undefined);
  for (const outcomes of byAddress.values()) {
    const refusals = outcomes.filter((o) => o.sent_at === null);
    const notAddress: Outcome[] = [];
    for (const o of refusals) {
      const read = whose(o.last_error);
      if (read === 'site' || (read === 'unproven' && !(await proven(o)))) notAddress.push(o);
    }
    if (notAddress.length === 0) continue;
    await db.updateTable('mail_outbox').set({ reply_code: null }).where('id', 'in', notAddress.map((o) => o.id)).execute();
    // The record holds the newest refusal's code: only when that one is cleared does it change.
    if (!notAddress.includes(newestOf(refusals)!)) continue;
    const own = newestOf(outcomes.filter((o) => !notAddress.includes(o)));
    const code = own === undefined || own.sent_at !== null ? null : own.reply_code;
    const { user_id: userId, recipient } = outcomes[0]!;
    const addressKey = recipient.trim().toLowerCase();
    await db.updateTable('member_emails').set({ refusal_code: code }).where('user_id', '=', userId).where('address_key', '=', addressKey).execute();
    await db.updateTable('member_emails').set({ pending_refusal_code: code }).where('user_id', '=', userId).where('pending_address_key', '=', addressKey).execute();
  }
}

/** The refusals cleared were not the members' to be told of: nothing to put back. */
export async function down(_db: Kysely<any>): Promise<void> {}
