import type { Kysely, Selectable } from 'kysely';
import type { EmailLink, EmailLinkPurpose, MemberEmail, MemberEmailStore } from '../../../core/accounts/ports.js';
import { isLocale, type Locale } from '../../../core/locales.js';
import type { Instant } from '../../../core/time.js';
import type { Database, EmailLinksTable, MemberEmailsTable } from '../../schema.js';

function toEmail(row: Selectable<MemberEmailsTable>): MemberEmail {
  return {
    userId: row.user_id, address: row.address, verifiedAt: row.verified_at === null ? null : Number(row.verified_at), updatedAt: Number(row.updated_at),
    language: isLocale(row.language) ? row.language : null,
  };
}

function toLink(row: Selectable<EmailLinksTable>): EmailLink {
  return { tokenHash: row.token_hash, userId: row.user_id, purpose: row.purpose as EmailLinkPurpose, addressKey: row.address_key, expiresAt: Number(row.expires_at) };
}

export class KyselyMemberEmailStore implements MemberEmailStore {
  constructor(private readonly db: Kysely<Database>) {}

  async find(userId: number): Promise<MemberEmail | undefined> {
    const row = await this.db.selectFrom('member_emails').selectAll().where('user_id', '=', userId).executeTakeFirst();
    return row && toEmail(row);
  }

  async set(userId: number, address: string, language: Locale, now: Instant): Promise<MemberEmail | undefined> {
    const previous = await this.find(userId);
    const values = { address, address_key: address.toLowerCase(), verified_at: null, updated_at: now, language };
    await this.db.insertInto('member_emails').values({ user_id: userId, ...values })
      .onConflict((oc) => oc.column('user_id').doUpdateSet(values)).execute();
    return previous;
  }

  async verifiedOwners(addressKey: string): Promise<number[]> {
    const rows = await this.db.selectFrom('member_emails').select('user_id')
      .where('address_key', '=', addressKey).where('verified_at', 'is not', null).orderBy('user_id').limit(20).execute();
    return rows.map((r) => r.user_id);
  }

  async markVerified(userId: number, addressKey: string, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('member_emails').set({ verified_at: now })
      .where('user_id', '=', userId).where('address_key', '=', addressKey).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
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

  async consumeLink(tokenHash: string, purpose: EmailLinkPurpose, now: Instant): Promise<EmailLink | undefined> {
    const row = await this.db.updateTable('email_links').set({ used_at: now })
      .where('token_hash', '=', tokenHash).where('purpose', '=', purpose).where('used_at', 'is', null).where('expires_at', '>', now)
      .returningAll().executeTakeFirst();
    return row && toLink(row);
  }

  async endLinks(userId: number, purpose: EmailLinkPurpose, now: Instant): Promise<void> {
    await this.db.updateTable('email_links').set({ used_at: now })
      .where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).execute();
  }
}
