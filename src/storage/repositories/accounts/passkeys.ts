import type { Kysely, Selectable } from 'kysely';
import { ConflictError } from '../../../core/errors.js';
import type { ChallengePurpose, Passkey, PasskeyStore, UserStatus } from '../../../core/accounts/ports.js';
import type { Instant } from '../../../core/time.js';
import type { Database, PasskeysTable } from '../../schema.js';
import { isUniqueViolation } from '../errors.js';

function toPasskey(row: Selectable<PasskeysTable>): Passkey {
  return {
    credentialId: row.credential_id,
    userId: row.user_id,
    name: row.name,
    publicKey: row.public_key,
    counter: Number(row.counter),
    transports: row.transports.split(' ').filter((t) => t !== ''),
    backedUp: Boolean(row.backed_up),
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** Passkeys and their single-use WebAuthn challenges (issue 18 item 3). */
export class KyselyPasskeyStore implements PasskeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(passkey: Omit<Passkey, 'createdAt' | 'lastUsedAt'>, now: Instant): Promise<Passkey> {
    try {
      return toPasskey(await this.insertRow(passkey, now));
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('that passkey is already registered');
      throw error;
    }
  }

  private insertRow(passkey: Omit<Passkey, 'createdAt' | 'lastUsedAt'>, now: Instant) {
    return this.db.insertInto('passkeys').values({
      credential_id: passkey.credentialId,
      user_id: passkey.userId,
      name: passkey.name,
      public_key: passkey.publicKey,
      counter: passkey.counter,
      transports: passkey.transports.join(' '),
      backed_up: passkey.backedUp ? 1 : 0,
      created_at: now,
      last_used_at: null,
    }).returningAll().executeTakeFirstOrThrow();
  }

  async countForUser(userId: number): Promise<number> {
    const row = await this.db.selectFrom('passkeys').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async listForUser(userId: number): Promise<Passkey[]> {
    const rows = await this.db.selectFrom('passkeys').selectAll().where('user_id', '=', userId)
      .orderBy('created_at', 'asc').orderBy('credential_id').execute();
    return rows.map(toPasskey);
  }

  async find(credentialId: string): Promise<Passkey | undefined> {
    const row = await this.db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
    return row && toPasskey(row);
  }

  async rename(userId: number, credentialId: string, name: string): Promise<boolean> {
    const result = await this.db.updateTable('passkeys').set({ name })
      .where('credential_id', '=', credentialId).where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async remove(userId: number, credentialId: string): Promise<Passkey | undefined> {
    const row = await this.db.deleteFrom('passkeys').where('credential_id', '=', credentialId).where('user_id', '=', userId)
      .returningAll().executeTakeFirst();
    return row && toPasskey(row);
  }

  async eraseForUser(userId: number): Promise<void> {
    await this.db.deleteFrom('passkeys').where('user_id', '=', userId).execute();
    await this.db.deleteFrom('webauthn_challenges').where('user_id', '=', userId).execute();
  }

  async recordUse(credentialId: string, counter: number, now: Instant): Promise<UserStatus | undefined> {
    // One conditional write (W3C WebAuthn 6.1.1 and 7.2's signCount step): the counter only moves up, or stays 0 for an
    // authenticator that keeps none, so of two racing sign-ins that verified against the same stored
    // count with the same new one, only the first is recorded. The account's status comes back from
    // the same statement: a status change after an earlier read of the account is seen here.
    const row = await this.db.updateTable('passkeys').set({ counter, last_used_at: now })
      .where('credential_id', '=', credentialId)
      .where('counter', counter === 0 ? '=' : '<', counter)
      .returning((eb) => eb.selectFrom('users').select('users.status').whereRef('users.id', '=', 'passkeys.user_id').as('status'))
      .executeTakeFirst();
    return row?.status as UserStatus | undefined;
  }

  async saveChallenge(challenge: { challenge: string; purpose: ChallengePurpose; userId: number | null; expiresAt: Instant }, now: Instant): Promise<void> {
    await this.db.insertInto('webauthn_challenges').values({
      challenge: challenge.challenge, purpose: challenge.purpose, user_id: challenge.userId, created_at: now, expires_at: challenge.expiresAt, used_at: null,
    }).execute();
  }

  async spendChallenge(challenge: { challenge: string; purpose: ChallengePurpose; userId: number | null; expiresAt: Instant }, now: Instant): Promise<boolean> {
    const result = await this.db.insertInto('webauthn_challenges').values({
      challenge: challenge.challenge, purpose: challenge.purpose, user_id: challenge.userId, created_at: now, expires_at: challenge.expiresAt, used_at: now,
    }).onConflict((oc) => oc.column('challenge').doNothing()).executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async consumeChallenge(challenge: string, purpose: ChallengePurpose, now: Instant): Promise<{ userId: number | null } | undefined> {
    const row = await this.db.updateTable('webauthn_challenges').set({ used_at: now })
      .where('challenge', '=', challenge).where('purpose', '=', purpose).where('used_at', 'is', null).where('expires_at', '>', now)
      .returning('user_id').executeTakeFirst();
    return row && { userId: row.user_id };
  }
}
