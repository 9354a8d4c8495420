import { type ExpressionBuilder, type Kysely, PostgresAdapter, type Selectable, sql } from 'kysely';
import type { LogoutDelivery, LogoutDeliveryStore, NewLogoutDelivery } from '../../../core/oidc/ports.js';
import type { Instant } from '../../../core/time.js';
import type { Database, LogoutDeliveriesTable } from '../../schema.js';

function toDelivery(row: Selectable<LogoutDeliveriesTable>): LogoutDelivery {
  return {
    id: row.id,
    clientId: row.client_id,
    userId: row.user_id,
    sid: row.sid,
    jti: row.jti,
    cause: row.cause,
    createdAt: row.created_at,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
  };
}

/** Pending, due at `now`, and not held under a lease that still runs. */
function due(now: Instant) {
  return (eb: ExpressionBuilder<Database, 'logout_deliveries'>) => eb.and([
    eb('delivered_at', 'is', null),
    eb('abandoned_at', 'is', null),
    eb('next_attempt_at', '<=', now),
    eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]),
  ]);
}

/** Errors are kept for the operator, never whole answers: a receiver's body is not ours to store. */
const ERROR_MAX_LENGTH = 500;
/** Rows per insert statement (7 parameters each). */
const INSERT_CHUNK = 500;
/** The share of a claim that one app's rows may take at most (a quarter, at least one row). */
const perAppLimit = (limit: number) => Math.max(1, Math.floor(limit / 4));

export class KyselyLogoutDeliveryStore implements LogoutDeliveryStore {
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async insert(deliveries: NewLogoutDelivery[], now: Instant): Promise<void> {
    // In statements of INSERT_CHUNK rows: one statement of thousands would pass SQLite's limit
    // of bound parameters (32,766) and PostgreSQL's (65,535).
    for (let start = 0; start < deliveries.length; start += INSERT_CHUNK) {
      await this.db.insertInto('logout_deliveries').values(deliveries.slice(start, start + INSERT_CHUNK).map((d) => ({
        client_id: d.clientId, user_id: d.userId, sid: d.sid, jti: d.jti, cause: d.cause, created_at: now, next_attempt_at: now,
      }))).execute();
    }
  }

  async anyDue(now: Instant): Promise<boolean> {
    const row = await this.db.selectFrom('logout_deliveries').select('id').where(due(now)).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async claim(claim: string, now: Instant, leaseUntil: Instant, limit: number): Promise<LogoutDelivery[]> {
    const claimed = { claim, lease_until: leaseUntil, attempts: sql<number>`attempts + 1` };
    // The due rows, at most a quarter of the claim from any one app, the longest waiting first: an
    // app whose receiver hangs (or a flood of one app's logouts) takes a few places of a pass,
    // never all of them.
    const fair = (db: Kysely<Database>) => db.selectFrom((inner) => inner.selectFrom('logout_deliveries')
      .select(['id', 'next_attempt_at', sql<number>`row_number() over (partition by client_id order by next_attempt_at, id)`.as('place')])
      .where(due(now)).as('ranked'))
      .select('id').where('place', '<=', perAppLimit(limit)).orderBy('next_attempt_at').orderBy('id').limit(limit);
    const rows = this.postgres
      // One statement. The candidates are chosen once, in a materialized CTE, FOR UPDATE SKIP
      // LOCKED: a second claimer passes over rows the first holds and takes others. (As
      // `id IN (subquery … LIMIT n FOR UPDATE SKIP LOCKED)` PostgreSQL may run the subquery again
      // per row and claim far more than `limit`: measured, one claim of 4 took 40.) The condition
      // is checked again on every row written, so a row another claim leased since is left alone.
      ? await this.db
        .with((cte) => cte('candidates').materialized(), (db) => db.selectFrom('logout_deliveries').select('id')
          .where('id', 'in', fair(db as unknown as Kysely<Database>)).where(due(now)).forUpdate().skipLocked())
        .updateTable('logout_deliveries').from('candidates').set(claimed)
        .whereRef('logout_deliveries.id', '=', 'candidates.id')
        .where(due(now))
        .returningAll('logout_deliveries')
        .execute()
      // SQLite runs one writer at a time and evaluates the subquery once: the statement is atomic as it stands.
      : await this.db.updateTable('logout_deliveries').set(claimed)
        .where('id', 'in', fair(this.db))
        .where(due(now))
        .returningAll()
        .execute();
    return rows.map(toDelivery).sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
  }

  async delivered(id: number, claim: string, now: Instant): Promise<boolean> {
    return this.finish(id, claim, { delivered_at: now, lease_until: null, last_error: null });
  }

  async retryAt(id: number, claim: string, nextAttemptAt: Instant, error: string): Promise<boolean> {
    return this.finish(id, claim, { next_attempt_at: nextAttemptAt, lease_until: null, last_error: error.slice(0, ERROR_MAX_LENGTH) });
  }

  async abandon(id: number, claim: string, now: Instant, error: string): Promise<boolean> {
    return this.finish(id, claim, { abandoned_at: now, lease_until: null, last_error: error.slice(0, ERROR_MAX_LENGTH) });
  }

  /** Writes an attempt's outcome only while `claim` still holds the row (a lease taken over is not ours). */
  private async finish(id: number, claim: string, values: Partial<Omit<LogoutDeliveriesTable, 'id' | 'attempts'>>): Promise<boolean> {
    const result = await this.db.updateTable('logout_deliveries').set({ ...values, claim: null })
      .where('id', '=', id).where('claim', '=', claim)
      .where('delivered_at', 'is', null).where('abandoned_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
