import { type ExpressionBuilder, type Kysely, PostgresAdapter, type Selectable, sql } from 'kysely';
import type { MailOutboxStore, MailState, NewOutgoingMail, OutgoingMail } from '../../../core/mail/ports.js';
import { emailKey } from '../../../core/accounts/email.js';
import { isLocale } from '../../../core/locales.js';
import type { Instant } from '../../../core/time.js';
import type { Database, MailOutboxTable } from '../../schema.js';

function toMail(row: Selectable<MailOutboxTable>): OutgoingMail {
  return {
    id: row.id,
    userId: row.user_id,
    kind: row.kind,
    to: row.recipient,
    subject: row.subject,
    text: row.body_text,
    html: row.body_html,
    language: isLocale(row.language) ? row.language : null,
    createdAt: Number(row.created_at),
    attempts: row.attempts,
    nextAttemptAt: Number(row.next_attempt_at),
  };
}

/** Pending, due at `now`, and not held under a lease that still runs. */
function due(now: Instant) {
  return (eb: ExpressionBuilder<Database, 'mail_outbox'>) => eb.and([
    eb('sent_at', 'is', null),
    eb('abandoned_at', 'is', null),
    eb('next_attempt_at', '<=', now),
    eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]),
  ]);
}

/** The columns a queued mail is written with, and their types: PostgreSQL types a bare parameter in a select list as text. */
const OUTBOX_TYPES = {
  user_id: 'integer', kind: 'text', recipient: 'text', subject: 'text', body_text: 'text', body_html: 'text', language: 'text', created_at: 'bigint', next_attempt_at: 'bigint',
} as const;
const OUTBOX_COLUMNS = Object.keys(OUTBOX_TYPES) as Array<keyof typeof OUTBOX_TYPES>;

/** Errors are kept for the operator, never a server's whole answer. */
const ERROR_MAX_LENGTH = 500;
/** What a row that left the queue keeps of its message: nothing a link could be read from. */
const FORGOTTEN = { subject: '', body_text: '', body_html: null } as const;

export class KyselyMailOutboxStore implements MailOutboxStore {
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async enqueue(mail: NewOutgoingMail, now: Instant): Promise<boolean> {
    const values = {
      user_id: mail.userId, kind: mail.kind, recipient: mail.to, subject: mail.subject, body_text: mail.text, body_html: mail.html, language: mail.language,
      created_at: now, next_attempt_at: now,
    };
    const { userId } = mail;
    if (userId === null) {
      await this.db.insertInto('mail_outbox').values(values).execute();
      return true;
    }
    const row = this.db.selectNoFrom(OUTBOX_COLUMNS.map((column) => sql`cast(${values[column]} as ${sql.raw(OUTBOX_TYPES[column])})`.as(column)))
      .where(({ exists }) => exists(this.holdsAddress(userId, emailKey(mail.to))));
    const result = await this.db.insertInto('mail_outbox').columns(OUTBOX_COLUMNS).expression(row).executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /**
   * The member's e-mail record while `key` is its address or pending address. On PostgreSQL read
   * `FOR SHARE`: an account deletion that has erased the record and not yet committed is waited
   * for (the record, gone, then queues nothing), and one that comes after waits for the mail's
   * transaction, whose row its later delete of the outbox then sees. SQLite runs one writer at a time.
   */
  private holdsAddress(userId: number, key: string) {
    const record = this.db.selectFrom('member_emails').select('member_emails.user_id')
      .where('member_emails.user_id', '=', userId)
      .where((eb) => eb.or([eb('member_emails.address_key', '=', key), eb('member_emails.pending_address_key', '=', key)]));
    return this.postgres ? record.forShare() : record;
  }

  async anyDue(now: Instant): Promise<boolean> {
    const row = await this.db.selectFrom('mail_outbox').select('id').where(due(now)).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async claim(claim: string, now: Instant, leaseUntil: Instant, limit: number): Promise<OutgoingMail[]> {
    const claimed = { claim, lease_until: leaseUntil, attempts: sql<number>`attempts + 1` };
    const oldest = (db: Kysely<Database>) => db.selectFrom('mail_outbox').select('id').where(due(now))
      .orderBy('next_attempt_at').orderBy('id').limit(limit);
    const rows = this.postgres
      // As the logout queue claims (repositories/oidc/logout-deliveries.ts): the candidates chosen
      // once, in a materialized CTE, FOR UPDATE SKIP LOCKED, and the condition checked again on
      // every row written, so a row another claim leased since is left alone.
      ? await this.db
        .with((cte) => cte('candidates').materialized(), (db) => oldest(db as unknown as Kysely<Database>).forUpdate().skipLocked())
        .updateTable('mail_outbox').from('candidates').set(claimed)
        .whereRef('mail_outbox.id', '=', 'candidates.id')
        .where(due(now))
        .returningAll('mail_outbox')
        .execute()
      // SQLite runs one writer at a time and evaluates the subquery once: the statement is atomic as it stands.
      : await this.db.updateTable('mail_outbox').set(claimed)
        .where('id', 'in', oldest(this.db))
        .where(due(now))
        .returningAll()
        .execute();
    return rows.map(toMail).sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
  }

  async sent(id: number, claim: string, now: Instant): Promise<boolean> {
    return this.finish(id, claim, { ...FORGOTTEN, sent_at: now, last_error: null });
  }

  async maybeSent(id: number, claim: string, now: Instant, error: string): Promise<boolean> {
    // Out of the queue as a give-up is (`abandoned_at`: never due, superseded or claimed again), and told apart by `maybe_sent_at`.
    return this.finish(id, claim, { ...FORGOTTEN, abandoned_at: now, maybe_sent_at: now, last_error: error.slice(0, ERROR_MAX_LENGTH) });
  }

  async retryAt(id: number, claim: string, nextAttemptAt: Instant, error: string): Promise<boolean> {
    return this.finish(id, claim, { next_attempt_at: nextAttemptAt, last_error: error.slice(0, ERROR_MAX_LENGTH) });
  }

  async abandon(id: number, claim: string, now: Instant, error: string, replyCode: number | null): Promise<boolean> {
    return this.finish(id, claim, { ...FORGOTTEN, abandoned_at: now, last_error: error.slice(0, ERROR_MAX_LENGTH), reply_code: replyCode });
  }

  async supersede(userId: number, kind: string, now: Instant): Promise<Array<{ to: string; createdAt: Instant }>> {
    const rows = await this.db.updateTable('mail_outbox').set({ ...FORGOTTEN, abandoned_at: now, last_error: 'superseded by a newer mail' })
      .where('user_id', '=', userId).where('kind', '=', kind)
      .where('sent_at', 'is', null).where('abandoned_at', 'is', null).where('attempts', '>', 0)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .returning(['recipient', 'created_at'])
      .execute();
    return rows.map((row) => ({ to: row.recipient, createdAt: Number(row.created_at) }));
  }

  async newest(userId: number, kind: string): Promise<{ to: string; state: MailState } | undefined> {
    const row = await this.db.selectFrom('mail_outbox').select(['recipient', 'sent_at', 'maybe_sent_at', 'abandoned_at'])
      .where('user_id', '=', userId).where('kind', '=', kind)
      .orderBy('id', 'desc').limit(1).executeTakeFirst();
    if (row === undefined) return undefined;
    const state = row.sent_at !== null ? 'sent' : row.maybe_sent_at !== null ? 'maybe_sent' : row.abandoned_at !== null ? 'given_up' : 'waiting';
    return { to: row.recipient, state };
  }

  async eraseForUser(userId: number): Promise<void> {
    await this.db.deleteFrom('mail_outbox').where('user_id', '=', userId).execute();
  }

  /** Writes an attempt's outcome only while `claim` still holds the row (a lease taken over is not ours). */
  private async finish(id: number, claim: string, values: Partial<Omit<MailOutboxTable, 'id' | 'attempts'>>): Promise<boolean> {
    const result = await this.db.updateTable('mail_outbox').set({ ...values, lease_until: null, claim: null })
      .where('id', '=', id).where('claim', '=', claim)
      .where('sent_at', 'is', null).where('abandoned_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
