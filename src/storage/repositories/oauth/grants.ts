import { type Compilable, type ExpressionBuilder, type Kysely, type QueryCreator, type Selectable, sql } from 'kysely';
import type { Grant, GrantStore, GrantWithUser, RevocationReason } from '../../../core/oauth/ports.js';
import type { Instant } from '../../../core/time.js';
import { type CompiledQueries, type QueryBuilder, keyIsAnyOf } from '../../database.js';
import type { Database, GrantsTable } from '../../schema.js';
import { USER_COLUMNS, toUser } from '../accounts/users.js';

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
    sid: row.sid,
    amr: row.amr === null ? null : row.amr.split(' ').filter((m) => m !== ''),
    resource: row.resource ?? null,
  };
}

type NewGrant = { userId: number; clientId: string; scope: string; nonce: string | null; authTime: Instant; sid?: string | null; amr?: readonly string[] | null | undefined; resource?: string | null | undefined };

/** The columns of a new grant (created and last used `now`), in the order of `createGrant`'s parameters. */
export function grantValues(grant: NewGrant, now: Instant) {
  return {
    user_id: grant.userId, client_id: grant.clientId, scope: grant.scope, nonce: grant.nonce, auth_time: grant.authTime, created_at: now,
    last_used_at: now, sid: grant.sid ?? null, amr: grant.amr == null ? null : grant.amr.join(' '), resource: grant.resource ?? null,
  };
}
export const NEW_GRANT = grantValues({ userId: 0, clientId: '', scope: '', nonce: '', authTime: 0, sid: '', amr: [], resource: '' }, 0);
export const createGrant = (db: QueryCreator<Database>) => db.insertInto('grants').values(NEW_GRANT).returningAll();
const grantById = (db: Kysely<Database>) => db.selectFrom('grants').selectAll().where('id', '=', 0);
/** A grant's columns (`g`) beside its user's (`u`, `USER_COLUMNS`): those that share a name with the user's are renamed. */
export const GRANT_WITH_USER_COLUMNS = [
  ...USER_COLUMNS.map((column) => `u.${column}` as const),
  'g.id as grant_id', 'g.user_id', 'g.client_id', 'g.scope', 'g.nonce', 'g.auth_time', 'g.created_at as grant_created_at',
  'g.last_used_at', 'g.revoked_at', 'g.revoked_reason', 'g.sid', 'g.amr', 'g.resource',
] as const;

export type GrantWithUserRow = Omit<Selectable<GrantsTable>, 'id' | 'created_at'> & Parameters<typeof toUser>[0] & { grant_id: number; grant_created_at: number };

/** A row of `GRANT_WITH_USER_COLUMNS`; `undefined` for the nulls of an outer join that found no grant. */
export function toGrantWithUser(row: GrantWithUserRow | { grant_id: null }): GrantWithUser | undefined {
  if (row.grant_id === null) return undefined;
  const found = row as GrantWithUserRow;
  return { grant: toGrant({ ...found, id: found.grant_id, created_at: found.grant_created_at }), user: toUser(found) };
}

/**
 * A row of `table` found by its hashed `key`, as stored (`to_jsonb`, as `stored`: its columns share
 * names with the grant's), beside its grant and user, outer-joined (PostgreSQL): `one` reads a key,
 * `many` the keys of one turn together (`CompiledQueries.lookup`). Make it once per table, at module
 * level: the builders are their compiled queries' keys.
 */
export function storedWithGrantByKey<Stored extends { grant_id: number | null }>(table: 'authorization_codes' | 'refresh_tokens', key: keyof Stored & string) {
  type Row = { stored: Stored } & (GrantWithUserRow | { grant_id: null });
  const from: string = `${table} as s`;
  const joined = (db: Kysely<Database>) => (db as unknown as Kysely<any>)
    .selectFrom(from).leftJoin('grants as g', 'g.id', 's.grant_id').leftJoin('users as u', 'u.id', 'g.user_id')
    .select(sql`to_jsonb(s)`.as('stored')).select(GRANT_WITH_USER_COLUMNS);
  const keyColumn: string = `s.${key}`;
  const one: QueryBuilder<Row> = (db) => joined(db).where(keyColumn, '=', '');
  const many: QueryBuilder<Row> = (db) => joined(db).where(keyIsAnyOf(keyColumn));
  return { one, many, keyOf: (row: Row) => String(row.stored[key]) };
}

/**
 * Whether the grant named by `grantId` (a column of the row being written) is live: not revoked,
 * its user active. A consuming write takes its code or refresh token only under this condition,
 * so a revocation or an account's end committed after the read before it wins (RFC 9700 4.14.2);
 * the refusals (`CodeRedemption.refusal`, a rotation's) read the same two facts. A scalar
 * subquery, not a join or `exists`: PostgreSQL plans it alone, by the grant's key, where a join was
 * planned with the tables around it and, on tables without statistics, read every grant of the
 * code's user (decision 70).
 */
export const grantIsLive = (eb: ExpressionBuilder<any, any>, grantId: string) => eb.fn.coalesce(eb.selectFrom('grants as g')
  .innerJoin('users as u', 'u.id', 'g.user_id').select(sql<boolean>`u.status = 'active'`.as('live'))
  .whereRef('g.id', '=', grantId).where('g.revoked_at', 'is', null), sql<boolean>`false`);

const grantWithUser = (db: Kysely<Database>) => db.selectFrom('grants as g')
  .innerJoin('users as u', 'u.id', 'g.user_id')
  .select(GRANT_WITH_USER_COLUMNS)
  .where('g.id', '=', 0);
/**
 * A grant's "last used" moved to a time (`[now, id, now]`), forward only: one conditional write, so
 * a slow write after a later one (another instance's, or this one's) never moves it back. Never on
 * a revoked grant: a use admitted just before the revocation, written after it, would show the app
 * using it after the member withdrew it.
 */
const touchGrant = (db: Kysely<Database>) => db.updateTable('grants').set({ last_used_at: 0 }).where('id', '=', 0).where('last_used_at', '<', 0)
  .where('revoked_at', 'is', null);

/**
 * The same, holding the grant's row until the transaction ends (PostgreSQL): every change that
 * ends a grant (a revocation, a withdrawal, an account leaving `active`, an app deactivated)
 * updates that row, so it is either seen here or waits for the commit. FOR NO KEY UPDATE, not
 * SHARE: the transaction may then mark the grant used (`touchGrant`), and two holders of SHARE
 * both wanting that would deadlock.
 */
const grantWithUserHeld = (db: Kysely<Database>) => grantWithUser(db).forNoKeyUpdate('g');

async function findGrantWithUser(db: Kysely<Database>, queries: CompiledQueries, id: number, held = false): Promise<GrantWithUser | undefined> {
  const row = await queries.first(db, held ? grantWithUserHeld : grantWithUser, [id]);
  return row && toGrantWithUser(row);
}

type ConsumingWrite<R> = (db: QueryCreator<Database>) => Compilable<R>;
type ConsumedWithGrant<R> = { consumed: R } & (GrantWithUserRow | { grant_id: null });

/**
 * A consuming write (one conditional `UPDATE … RETURNING *` of a row that names its grant) and the
 * grant with its user, as PostgreSQL runs them in one statement: the write in a `WITH` as `c`, its
 * row as `to_jsonb(c) as consumed` beside `GRANT_WITH_USER_COLUMNS`, outer-joined. Make it once per
 * write, at module level: the builder is its compiled query's key.
 */
export function consumedWithGrant<R extends { grant_id: number }>(consume: ConsumingWrite<R>) {
  const joined: QueryBuilder<ConsumedWithGrant<R>> = (db) => (db as unknown as Kysely<any>)
    // Kysely cannot type a WITH over a write it knows only as generic: the row type is declared above.
    .with('c', consume as never)
    .selectFrom('c').leftJoin('grants as g', 'g.id', 'c.grant_id').leftJoin('users as u', 'u.id', 'g.user_id')
    .select(sql`to_jsonb(c)`.as('consumed')).select(GRANT_WITH_USER_COLUMNS);
  return { consume, joined };
}

/**
 * Runs a consuming write of `consumedWithGrant` and reads the grant with its user: on PostgreSQL
 * one statement, one round trip; on SQLite, which has no writes in `WITH`, the write and then the read.
 */
export async function consumeWithGrant<R extends { grant_id: number }>(
  db: Kysely<Database>,
  queries: CompiledQueries,
  how: ReturnType<typeof consumedWithGrant<R>>,
  parameters: readonly unknown[],
): Promise<{ row: R; granted: GrantWithUser | undefined } | undefined> {
  if (queries.writesCombine) {
    const joined = await queries.first(db, how.joined, parameters);
    return joined && { row: joined.consumed, granted: toGrantWithUser(joined) };
  }
  const row = await queries.first(db, how.consume, parameters);
  return row && { row, granted: await findGrantWithUser(db, queries, row.grant_id) };
}

const SIDS_PER_QUERY = 500;

export class KyselyGrantStore implements GrantStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async create(grant: NewGrant, now: Instant): Promise<Grant> {
    const row = await this.queries.first(this.db, createGrant, Object.values(grantValues(grant, now)));
    return toGrant(row!);
  }

  async findById(id: number): Promise<Grant | undefined> {
    const row = await this.queries.first(this.db, grantById, [id]);
    return row && toGrant(row);
  }

  findWithUser(id: number): Promise<GrantWithUser | undefined> {
    return findGrantWithUser(this.db, this.queries, id);
  }

  /** `findWithUser` inside a transaction, holding the grant's row until it ends on PostgreSQL (`grantWithUserHeld`); SQLite's transaction holds the whole database. */
  findWithUserHeld(id: number): Promise<GrantWithUser | undefined> {
    return findGrantWithUser(this.db, this.queries, id, this.queries.writesCombine);
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

  async revokeForUser(userId: number, reason: RevocationReason, now: Instant): Promise<string[]> {
    const rows = await this.db.updateTable('grants').set({ revoked_at: now, revoked_reason: reason })
      .where('user_id', '=', userId).where('revoked_at', 'is', null).returning('client_id').execute();
    return rows.map((row) => row.client_id);
  }

  async eraseForUser(userId: number): Promise<void> {
    await this.db.deleteFrom('grants').where('user_id', '=', userId).execute();
  }

  async liveClientsOfSessions(userId: number, sids: readonly string[]): Promise<Array<{ clientId: string; sid: string }>> {
    const found: Array<{ clientId: string; sid: string }> = [];
    // In slices: a user may end thousands of sessions at once, past a statement's parameter limit.
    for (let start = 0; start < sids.length; start += SIDS_PER_QUERY) {
      const rows = await this.db.selectFrom('grants').select(['client_id', 'sid']).distinct()
        .where('user_id', '=', userId).where('revoked_at', 'is', null).where('sid', 'in', sids.slice(start, start + SIDS_PER_QUERY))
        .orderBy('client_id').orderBy('sid').execute();
      for (const row of rows) found.push({ clientId: row.client_id, sid: row.sid! });
    }
    return found;
  }

  async touch(id: number, now: Instant): Promise<void> {
    await this.queries.executeQuiet(this.db, touchGrant, [now, id, now]);
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
