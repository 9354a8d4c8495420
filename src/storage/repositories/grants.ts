import type { Kysely, Selectable } from 'kysely';
import type { Grant, GrantStore, RevocationReason, User } from '../../core/ports.js';
import type { Instant } from '../../core/time.js';
import type { CompiledQueries } from '../database.js';
import type { Database, GrantsTable } from '../schema.js';
import { USER_COLUMNS, toUser } from './users.js';

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

const createGrant = (db: Kysely<Database>) => db.insertInto('grants').values({
  user_id: 0, client_id: '', scope: '', nonce: '', auth_time: 0, created_at: 0, last_used_at: 0,
}).returningAll();
const grantById = (db: Kysely<Database>) => db.selectFrom('grants').selectAll().where('id', '=', 0);
/** A grant joined with its user's row; the grant's columns that share a name with the user's are renamed. */
const grantWithUser = (db: Kysely<Database>) => db.selectFrom('grants as g')
  .innerJoin('users as u', 'u.id', 'g.user_id')
  .select(USER_COLUMNS.map((column) => `u.${column}` as const))
  .select([
    'g.id as grant_id', 'g.user_id', 'g.client_id', 'g.scope', 'g.nonce', 'g.auth_time', 'g.created_at as grant_created_at',
    'g.last_used_at', 'g.revoked_at', 'g.revoked_reason',
  ])
  .where('g.id', '=', 0);
const touchGrant = (db: Kysely<Database>) => db.updateTable('grants').set({ last_used_at: 0 }).where('id', '=', 0);

export class KyselyGrantStore implements GrantStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async create(grant: { userId: number; clientId: string; scope: string; nonce: string | null; authTime: Instant }, now: Instant): Promise<Grant> {
    const row = await this.queries.first(this.db, createGrant, [grant.userId, grant.clientId, grant.scope, grant.nonce, grant.authTime, now, now]);
    return toGrant(row!);
  }

  async findById(id: number): Promise<Grant | undefined> {
    const row = await this.queries.first(this.db, grantById, [id]);
    return row && toGrant(row);
  }

  async findWithUser(id: number): Promise<{ grant: Grant; user: User } | undefined> {
    const row = await this.queries.first(this.db, grantWithUser, [id]);
    if (!row) return undefined;
    const grant = toGrant({ ...row, id: row.grant_id, created_at: row.grant_created_at });
    return { grant, user: toUser(row) };
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
    await this.queries.executeQuiet(this.db, touchGrant, [now, id]);
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
