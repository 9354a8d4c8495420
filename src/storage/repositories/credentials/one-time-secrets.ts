import type { Kysely } from 'kysely';
import type { OneTimeSecretStore } from '../../../core/credentials/ports.js';
import type { Instant } from '../../../core/time.js';
import type { Database } from '../../schema.js';

/** New secrets on their way to the page that shows them once (issue 18 item 7). */
export class KyselyOneTimeSecretStore implements OneTimeSecretStore {
  constructor(private readonly db: Kysely<Database>) {}

  async put(entry: { idHash: string; userId: number; purpose: string; subject: string; sealed: string; expiresAt: Instant }, now: Instant): Promise<void> {
    await this.db.insertInto('one_time_secrets').values({
      id_hash: entry.idHash, user_id: entry.userId, purpose: entry.purpose, subject: entry.subject, sealed: entry.sealed,
      created_at: now, expires_at: entry.expiresAt,
    }).execute();
  }

  async take(idHash: string, match: { userId: number; purpose: string; subject: string }, now: Instant): Promise<string | undefined> {
    const row = await this.db.deleteFrom('one_time_secrets')
      .where('id_hash', '=', idHash).where('user_id', '=', match.userId).where('purpose', '=', match.purpose)
      .where('subject', '=', match.subject).where('expires_at', '>', now)
      .returning('sealed').executeTakeFirst();
    return row?.sealed;
  }

  async eraseForUser(userId: number): Promise<void> {
    await this.db.deleteFrom('one_time_secrets').where('user_id', '=', userId).execute();
  }
}
