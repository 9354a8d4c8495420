import type { Kysely } from 'kysely';
import type { PendingSignIn, PendingSignInStore } from '../../../core/accounts/ports.js';
import type { Instant } from '../../../core/time.js';
import type { Database } from '../../schema.js';

/** Sign-ins whose password passed, waiting for the second step (issue 18 item 2). */
export class KyselyPendingSignInStore implements PendingSignInStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(pending: Omit<PendingSignIn, 'createdAt'>, now: Instant): Promise<void> {
    await this.db.insertInto('pending_sign_ins').values({
      id_hash: pending.idHash, user_id: pending.userId, amr: pending.amr.join(' '), return_to: pending.returnTo,
      created_at: now, expires_at: pending.expiresAt, used_at: null,
    }).execute();
  }

  async findLive(idHash: string, now: Instant): Promise<PendingSignIn | undefined> {
    const row = await this.db.selectFrom('pending_sign_ins').selectAll()
      .where('id_hash', '=', idHash).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
    return row && {
      idHash: row.id_hash, userId: row.user_id, amr: row.amr.split(' ').filter((m) => m !== ''), returnTo: row.return_to,
      createdAt: row.created_at, expiresAt: row.expires_at,
    };
  }

  async consume(idHash: string, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('pending_sign_ins').set({ used_at: now })
      .where('id_hash', '=', idHash).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async cancelForUser(userId: number, now: Instant): Promise<void> {
    await this.db.updateTable('pending_sign_ins').set({ used_at: now }).where('user_id', '=', userId).where('used_at', 'is', null).execute();
  }

  async eraseForUser(userId: number): Promise<void> {
    await this.db.deleteFrom('pending_sign_ins').where('user_id', '=', userId).execute();
  }
}
