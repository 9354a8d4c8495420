import { type Kysely, type Selectable, sql } from 'kysely';
import { emailKey } from '../../../core/accounts/email.js';
import type { EmailLink, EmailLinkPurpose, MemberEmail, MemberEmailStore, StoredEmailLink } from '../../../core/accounts/ports.js';
import type { MailRecipientStore } from '../../../core/mail/ports.js';
import { isLocale, type Locale } from '../../../core/locales.js';
import type { Instant } from '../../../core/time.js';
import type { Database, EmailLinksTable, MemberEmailsTable } from '../../schema.js';

function toEmail(row: Selectable<MemberEmailsTable>): MemberEmail {
  return {
    userId: row.user_id, address: row.address, verifiedAt: row.verified_at === null ? null : Number(row.verified_at), updatedAt: Number(row.updated_at),
    language: isLocale(row.language) ? row.language : null, pending: row.pending_address,
    refusalCode: row.refusal_code, pendingRefusalCode: row.pending_refusal_code,
  };
}

function toLink(row: Selectable<EmailLinksTable>): StoredEmailLink {
  return {
    tokenHash: row.token_hash, userId: row.user_id, purpose: row.purpose as EmailLinkPurpose, addressKey: row.address_key, expiresAt: Number(row.expires_at),
    refusedAt: row.refused_at === null ? null : Number(row.refused_at),
  };
}

/** The member's e-mail record, and the refusals of mail to its addresses kept on it. */
export class KyselyMemberEmailStore implements MemberEmailStore, MailRecipientStore {
  constructor(private readonly db: Kysely<Database>) {}

  async find(userId: number): Promise<MemberEmail | undefined> {
    const row = await this.db.selectFrom('member_emails').selectAll().where('user_id', '=', userId).executeTakeFirst();
    return row && toEmail(row);
  }

  async set(userId: number, address: string, language: Locale, now: Instant): Promise<{ email: MemberEmail; changeStarted: boolean }> {
    const key = emailKey(address);
    // Each statement decides against the row as it is when written (a verification that lands
    // between the member's page and the write still turns the change into a pending one), and
    // of two racing changes to one new address only the write that made it pending says so.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const started = await this.db.updateTable('member_emails')
        .set({ pending_address: address, pending_address_key: key, pending_refusal_code: null, updated_at: now, language })
        .where('user_id', '=', userId).where('verified_at', 'is not', null).where('address_key', '<>', key)
        .where((eb) => eb.or([eb('pending_address_key', 'is', null), eb('pending_address_key', '<>', key)]))
        .returningAll().executeTakeFirst();
      if (started) return { email: toEmail(started), changeStarted: true };
      // Anything else: no row yet, an address not verified (replaced outright), the verified
      // address again (drops a pending one), or the pending address again (kept as it is).
      const unverified = sql<boolean>`member_emails.verified_at is null`;
      const keeps = sql<boolean>`(${unverified} or member_emails.address_key = ${key})`;
      // A refusal stays with its address until the address changes: the same address saved again keeps it.
      const sameAddress = sql<boolean>`member_emails.address_key = ${key}`;
      const row = await this.db.insertInto('member_emails')
        .values({ user_id: userId, address, address_key: key, verified_at: null, updated_at: now, language, pending_address: null, pending_address_key: null })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({
          address: sql`case when ${unverified} then ${address} else member_emails.address end`,
          address_key: sql`case when ${unverified} then ${key} else member_emails.address_key end`,
          pending_address: sql`case when ${keeps} then null else ${address} end`,
          pending_address_key: sql`case when ${keeps} then null else ${key} end`,
          refusal_code: sql`case when ${sameAddress} or member_emails.verified_at is not null then member_emails.refusal_code else null end`,
          pending_refusal_code: sql`case when ${keeps} then null else member_emails.pending_refusal_code end`,
          updated_at: now, language,
        }).where(sql<boolean>`(${keeps} or member_emails.pending_address_key = ${key})`))
        .returningAll().executeTakeFirst();
      if (row) return { email: toEmail(row), changeStarted: false };
      // The address was verified between the two statements: the first one now applies.
    }
    throw new Error(`the e-mail address of account ${userId} kept changing under three writes`);
  }

  async cancelPending(userId: number, now: Instant, pendingKey?: string): Promise<boolean> {
    let query = this.db.updateTable('member_emails').set({ pending_address: null, pending_address_key: null, pending_refusal_code: null, updated_at: now })
      .where('user_id', '=', userId).where('pending_address_key', 'is not', null);
    if (pendingKey !== undefined) query = query.where('pending_address_key', '=', pendingKey);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async release(userId: number, addressKey: string, now: Instant): Promise<boolean> {
    if (await this.cancelPending(userId, now, addressKey)) return true;
    const result = await this.db.deleteFrom('member_emails')
      .where('user_id', '=', userId).where('address_key', '=', addressKey).where('verified_at', 'is', null).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async verifiedOwners(addressKey: string): Promise<number[]> {
    const rows = await this.db.selectFrom('member_emails').select('user_id')
      .where('address_key', '=', addressKey).where('verified_at', 'is not', null).orderBy('user_id').limit(20).execute();
    return rows.map((r) => r.user_id);
  }

  async markVerified(userId: number, addressKey: string, now: Instant): Promise<boolean> {
    const pending = sql<boolean>`pending_address_key is not null and pending_address_key = ${addressKey}`;
    const result = await this.db.updateTable('member_emails').set({
      address: sql`case when ${pending} then pending_address else address end`,
      address_key: sql`case when ${pending} then pending_address_key else address_key end`,
      pending_address: sql`case when ${pending} then null else pending_address end`,
      pending_address_key: sql`case when ${pending} then null else pending_address_key end`,
      // A verified address receives mail: whatever refusal was kept for it, or for the one it replaces, is over.
      refusal_code: null,
      pending_refusal_code: sql`case when ${pending} then null else pending_refusal_code end`,
      verified_at: now,
    }).where('user_id', '=', userId)
      .where((eb) => eb.or([eb('pending_address_key', '=', addressKey), eb('address_key', '=', addressKey)]))
      // In the same statement: a status written meanwhile (a ban) is seen by the write itself.
      .where((eb) => eb.exists(eb.selectFrom('users').select('users.id').whereRef('users.id', '=', 'member_emails.user_id').where('users.status', '=', 'active')))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async refused(userId: number, to: string, replyCode: number): Promise<void> {
    await this.keepOutcome(userId, to, replyCode);
  }

  async accepted(userId: number, to: string): Promise<void> {
    await this.keepOutcome(userId, to, null);
  }

  /**
   * Writes `code` on the account's address and pending address whose key is `to`'s, in one
   * statement; an accepted mail (`code` null) writes only a row that holds a refusal to clear, so
   * the mails that go through, nearly all of them, leave the row alone.
   */
  private async keepOutcome(userId: number, to: string, code: number | null): Promise<void> {
    const key = emailKey(to);
    await this.db.updateTable('member_emails').set({
      refusal_code: sql`case when address_key = ${key} then ${code} else refusal_code end`,
      pending_refusal_code: sql`case when pending_address_key = ${key} then ${code} else pending_refusal_code end`,
    }).where('user_id', '=', userId)
      .where((eb) => code === null
        ? eb.or([eb.and([eb('address_key', '=', key), eb('refusal_code', 'is not', null)]), eb.and([eb('pending_address_key', '=', key), eb('pending_refusal_code', 'is not', null)])])
        : eb.or([eb('address_key', '=', key), eb('pending_address_key', '=', key)]))
      .execute();
  }

  async createLink(link: EmailLink, now: Instant): Promise<void> {
    await this.db.insertInto('email_links').values({
      token_hash: link.tokenHash, user_id: link.userId, purpose: link.purpose, address_key: link.addressKey, created_at: now, expires_at: link.expiresAt,
    }).execute();
  }

  async findLiveLink(tokenHash: string, purpose: EmailLinkPurpose, now: Instant): Promise<EmailLink | undefined> {
    const row = await this.db.selectFrom('email_links').selectAll()
      .where('token_hash', '=', tokenHash).where('purpose', '=', purpose).where('used_at', 'is', null).where('expires_at', '>', now)
      .executeTakeFirst();
    return row && toLink(row);
  }

  async findAccountLiveLink(userId: number, purpose: EmailLinkPurpose, now: Instant): Promise<EmailLink | undefined> {
    const row = await this.db.selectFrom('email_links').selectAll()
      .where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).where('expires_at', '>', now)
      .orderBy('expires_at', 'desc').limit(1).executeTakeFirst();
    return row && toLink(row);
  }

  async findLink(tokenHash: string, purpose: EmailLinkPurpose): Promise<StoredEmailLink | undefined> {
    const row = await this.db.selectFrom('email_links').selectAll().where('token_hash', '=', tokenHash).where('purpose', '=', purpose).executeTakeFirst();
    return row && toLink(row);
  }

  async consumeLink(tokenHash: string, purpose: EmailLinkPurpose, now: Instant): Promise<EmailLink | undefined> {
    const row = await this.db.updateTable('email_links').set({ used_at: now })
      .where('token_hash', '=', tokenHash).where('purpose', '=', purpose).where('used_at', 'is', null).where('expires_at', '>', now)
      .returningAll().executeTakeFirst();
    return row && toLink(row);
  }

  async refuseLink(tokenHash: string, now: Instant): Promise<EmailLink | undefined> {
    const row = await this.db.updateTable('email_links').set({ refused_at: now, used_at: sql`coalesce(used_at, ${now})` })
      .where('token_hash', '=', tokenHash).where('purpose', '=', 'verify_email').where('address_key', 'is not', null)
      .where('refused_at', 'is', null).where('expires_at', '>', now)
      .returningAll().executeTakeFirst();
    return row && toLink(row);
  }

  async endLinks(userId: number, purpose: EmailLinkPurpose, now: Instant): Promise<void> {
    await this.db.updateTable('email_links').set({ used_at: now })
      .where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).execute();
  }

  async erase(userId: number): Promise<void> {
    // The record first: a mail being queued holds it (`MailOutboxStore.enqueue`) with the link it
    // writes, and this waits for that transaction, so the links' delete after it sees the link.
    await this.db.deleteFrom('member_emails').where('user_id', '=', userId).execute();
    await this.db.deleteFrom('email_links').where('user_id', '=', userId).execute();
  }
}
