/**
 * Clears the refusals kept on members' e-mail records that were the site's, not their address's.
 * For a few hours before refusals were read by whose they are, a mail given up kept the reply
 * code of any refusal of MAIL FROM, RCPT TO or DATA in `mail_outbox.reply_code` (a relay refusing
 * the site's sender or policy too, `550 5.7.1`), and 2026-11-30-0070 copied the newest onto the
 * record; since then some refusals were read as the address's that are the message's or the
 * site's (a bare `554` to DATA, a `550 5.7.1` to DATA) or read past their basic code (`550 4.2.2`).
 * Each kept refusal is read again by the outbox row that gave it, the newest of the address's rows
 * with a reply code, whose `last_error` names the step and the codes (`EENVELOPE: RCPT TO answered
 * 550 5.1.1; refused for good`), with the rule the sender now reads by (`readReply`, copied here
 * as it stands today); a refusal of the site is cleared from its row, and a record that held it
 * gets the address's own newest outcome instead, as 0070 would have read it: an older refusal of
 * the address, unless a mail to it was accepted since. A refusal whose row the janitor has
 * deleted is kept: nothing tells whose it was. Addresses are
 * matched lower-cased in JavaScript, as `address_key` was made. Frozen in time: it takes
 * `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

interface Outcome {
  id: number;
  user_id: number;
  recipient: string;
  sent_at: string | number | null;
  abandoned_at: string | number | null;
  reply_code: number | null;
  last_error: string | null;
}

/** The step and codes a give-up's `last_error` names, as the transport wrote it since reply codes were kept. */
const ERROR = /^[^:]*: (.+?) answered ([2-5]\d{2})(?: ([245])\.(\d{1,3})\.(\d{1,3}))?(?:;|$)/;

/** Whether the refusal `error` tells was of the member's address (`readReply` of 2026-12-01). */
function addressRefused(error: string | null): boolean {
  const [, command, basic, category, subject, detail] = ERROR.exec(error ?? '') ?? [];
  if (basic === undefined || (command !== 'RCPT TO' && command !== 'DATA')) return false;
  const code = Number(basic);
  // An x.1.y past x.1.10 or an x.2.y past x.2.4 is a relay's own (not in RFC 5248's registry): read as no enhanced code.
  const registered = Number(subject) === 1 ? Number(detail) <= 10 : Number(subject) === 2 ? Number(detail) <= 4 : true;
  switch (Number(category) === Math.floor(code / 100) && registered ? Number(subject) : undefined) {
    case 1: return Number(detail) !== 7 && Number(detail) !== 8;
    case 2: return Number(detail) !== 3;
    case 3: case 5: case 6: case 7: return false;
    default: return Math.floor(code / 10) % 10 >= 4 && command === 'RCPT TO';
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  // The outcomes (sent, or refused with a reply code) of the members with a refusal kept: few rows, read once.
  const rows: Outcome[] = await db.selectFrom('mail_outbox')
    .select(['id', 'user_id', 'recipient', 'sent_at', 'abandoned_at', 'reply_code', 'last_error'])
    .where((eb: any) => eb.or([eb('sent_at', 'is not', null), eb.and([eb('reply_code', 'is not', null), eb('abandoned_at', 'is not', null)])]))
    .where('user_id', 'in', (eb: any) => eb.selectFrom('member_emails').select('user_id')
      .where((e: any) => e.or([e('refusal_code', 'is not', null), e('pending_refusal_code', 'is not', null)])))
    .execute();
  const byAddress = new Map<string, Outcome[]>();
  for (const row of rows) {
    const key = `${row.user_id} ${row.recipient.trim().toLowerCase()}`;
    byAddress.set(key, [...byAddress.get(key) ?? [], row]);
  }
  const at = (o: Outcome) => Number(o.sent_at ?? o.abandoned_at);
  const newestOf = (outcomes: Outcome[]) => outcomes.reduce<Outcome | undefined>((kept, o) => (kept === undefined || at(o) > at(kept) || (at(o) === at(kept) && o.id > kept.id) ? o : kept), undefined);
  for (const outcomes of byAddress.values()) {
    const refusals = outcomes.filter((o) => o.sent_at === null);
    const site = refusals.filter((o) => !addressRefused(o.last_error));
    if (site.length === 0) continue;
    await db.updateTable('mail_outbox').set({ reply_code: null }).where('id', 'in', site.map((o) => o.id)).execute();
    // The record holds the newest refusal's code (0070, or the give-up since): only one of the site's is wrong.
    if (!site.includes(newestOf(refusals)!)) continue;
    // The address's own newest outcome, as 0070 would have read it: a refusal of the address, or none.
    const own = newestOf(outcomes.filter((o) => !site.includes(o)));
    const code = own === undefined || own.sent_at !== null ? null : own.reply_code;
    const { user_id: userId, recipient } = outcomes[0]!;
    const addressKey = recipient.trim().toLowerCase();
    await db.updateTable('member_emails').set({ refusal_code: code }).where('user_id', '=', userId).where('address_key', '=', addressKey).execute();
    await db.updateTable('member_emails').set({ pending_refusal_code: code }).where('user_id', '=', userId).where('pending_address_key', '=', addressKey).execute();
  }
}

/** The refusals cleared were not the members' to be told of: nothing to put back. */
export async function down(_db: Kysely<any>): Promise<void> {}
