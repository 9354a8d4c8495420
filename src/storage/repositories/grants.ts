import type { Kysely, Selectable } from 'kysely';
import type { Grant, GrantStore, RevocationReason } from '../../core/ports.js';
import type { Instant } from '../../core/time.js';
import type { Database, GrantsTable } from '../schema.js';

function toGrant(row: Selectable<GrantsTable>): Grant {
  return {
    id: row.id,
    userId: row.user_id,
    clientId: row.client_id,
    scope: row.scope,
    nonce: row.nonce,
    authTime: row.auth_time,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    revokedReason: row.revoked_reason,
  };
}

export class KyselyGrantStore implements GrantStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(grant: { userId: number; clientId: string; scope: string; nonce: string | null; authTime: Instant }, now: Instant): Promise<Grant> {
    const row = await this.db.insertInto('grants').values({
      user_id: grant.userId,
      client_id: grant.clientId,
      scope: grant.scope,
      nonce: grant.nonce,
      auth_time: grant.authTime,
      created_at: now,
      last_used_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    return toGrant(row);
  }

  async findById(id: number): Promise<Grant | undefined> {
    const row = await this.db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toGrant(row);
  }

  async revoke(id: number, reason: RevocationReason, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('grants').set({ revoked_at: now, revoked_reason: reason })
      .where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async revokeForUserAndClient(userId: number, clientId: string, reason: RevocationReason, now: Instant): Promise<number> {
    const result = await this.db.updateTable('grants').set({ revoked_at: now, revoked_reason: reason })
      .where('user_id', '=', userId).where('client_id', '=', clientId).where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async revokeForClient(clientId: string, reason: RevocationReason, now: Instant): Promise<number> {
    const result = await this.db.updateTable('grants').set({ revoked_at: now, revoked_reason: reason })
      .where('client_id', '=', clientId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async revokeForUser(userId: number, reason: RevocationReason, now: Instant): Promise<number> {
    const result = await this.db.updateTable('grants').set({ revoked_at: now, revoked_reason: reason })
      .where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async touch(id: number, now: Instant): Promise<void> {
    await this.db.updateTable('grants').set({ last_used_at: now }).where('id', '=', id).execute();
  }

  async summarizeForUser(userId: number): Promise<Array<{ clientId: string; firstAuthorizedAt: Instant; lastUsedAt: Instant }>> {
    const rows = await this.db.selectFrom('grants')
      .select((eb) => [
        'client_id',
        eb.fn.min<number>('created_at').as('first_authorized_at'),
        eb.fn.max<number>('last_used_at').as('last_used_at'),
      ])
      .where('user_id', '=', userId).where('revoked_at', 'is', null)
      .groupBy('client_id').orderBy('client_id').execute();
    return rows.map((r) => ({
      clientId: r.client_id,
      firstAuthorizedAt: Number(r.first_authorized_at),
      lastUsedAt: Number(r.last_used_at),
    }));
  }
}
