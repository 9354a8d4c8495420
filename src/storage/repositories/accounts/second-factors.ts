import type { Kysely } from 'kysely';
import type { InactiveStatus, RecoveryCodeUse, SecondFactorStore, TotpCredential, UserStatus } from '../../../core/accounts/ports.js';
import type { Instant } from '../../../core/time.js';
import { inTransaction } from '../../database.js';
import type { Database } from '../../schema.js';

/** Authenticator apps and recovery codes (issue 18 item 2). */
export class KyselySecondFactorStore implements SecondFactorStore {
  constructor(private readonly db: Kysely<Database>) {}

  async findTotp(userId: number): Promise<TotpCredential | undefined> {
    const row = await this.db.selectFrom('totp_credentials').selectAll().where('user_id', '=', userId).executeTakeFirst();
    return row && {
      userId: row.user_id, secret: row.secret, createdAt: row.created_at, confirmedAt: row.confirmed_at, lastStep: row.last_step,
    };
  }

  async startTotp(userId: number, secret: string, now: Instant): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      await trx.deleteFrom('totp_credentials').where('user_id', '=', userId).where('confirmed_at', 'is', null).execute();
      const confirmed = await trx.selectFrom('totp_credentials').select('user_id').where('user_id', '=', userId).executeTakeFirst();
      if (confirmed) return false;
      await trx.insertInto('totp_credentials').values({ user_id: userId, secret, created_at: now, confirmed_at: null, last_step: null }).execute();
      return true;
    });
  }

  async confirmTotp(userId: number, step: number, recoveryCodeHashes: readonly string[], now: Instant): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      const result = await trx.updateTable('totp_credentials').set({ confirmed_at: now, last_step: step })
        .where('user_id', '=', userId).where('confirmed_at', 'is', null).executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await replaceCodes(trx, userId, recoveryCodeHashes, now);
      return true;
    });
  }

  async acceptTotpStep(userId: number, step: number): Promise<UserStatus | undefined> {
    // The step is recorded whatever the status (a code seen once is spent, RFC 6238 5.2), and the
    // status comes back from the same statement, so a status change after an earlier read of the
    // account is seen here (its one snapshot on PostgreSQL).
    const row = await this.db.updateTable('totp_credentials').set({ last_step: step })
      .where('user_id', '=', userId).where('confirmed_at', 'is not', null)
      .where((w) => w.or([w('last_step', 'is', null), w('last_step', '<', step)]))
      .returning(statusOf(this.db, userId).as('status'))
      .executeTakeFirst();
    return row?.status as UserStatus | undefined;
  }

  async removeTotp(userId: number): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      const result = await trx.deleteFrom('totp_credentials').where('user_id', '=', userId).where('confirmed_at', 'is not', null).executeTakeFirst();
      await trx.deleteFrom('totp_credentials').where('user_id', '=', userId).execute();
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      return Number(result.numDeletedRows) === 1;
    });
  }

  async useRecoveryCode(userId: number, codeHash: string, now: Instant): Promise<RecoveryCodeUse> {
    // One statement finds the unused code and marks it used only if the account is active: an
    // account's status read first could change before the write. A code of an account that is not
    // active is rewritten unchanged (`else used_at`, which also types `now` as the column's type on
    // PostgreSQL), so RETURNING tells it from a wrong one, with the status the same statement
    // read (its one snapshot on PostgreSQL), for the page that tells it.
    const row = await this.db.updateTable('recovery_codes')
      .set((eb) => ({ used_at: eb.case().when(statusOf(this.db, userId), '=', 'active').then(now).else(eb.ref('used_at')).end() }))
      .where('user_id', '=', userId).where('code_hash', '=', codeHash).where('used_at', 'is', null)
      .returning(['used_at', statusOf(this.db, userId).as('status')]).executeTakeFirst();
    if (row === undefined) return 'wrong';
    return row.used_at !== null ? 'used' : { kept: row.status as InactiveStatus };
  }

  replaceRecoveryCodes(userId: number, codeHashes: readonly string[], now: Instant): Promise<void> {
    return inTransaction(this.db, (trx) => replaceCodes(trx, userId, codeHashes, now));
  }

  async countUnusedRecoveryCodes(userId: number): Promise<number> {
    const row = await this.db.selectFrom('recovery_codes').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}

/** The status of account `userId`, read by the statement it is part of. */
function statusOf(db: Kysely<Database>, userId: number) {
  return db.selectFrom('users').select('users.status').where('users.id', '=', userId);
}

async function replaceCodes(db: Kysely<Database>, userId: number, codeHashes: readonly string[], now: Instant): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  if (codeHashes.length === 0) return;
  await db.insertInto('recovery_codes').values(codeHashes.map((hash) => ({ user_id: userId, code_hash: hash, created_at: now, used_at: null }))).execute();
}
