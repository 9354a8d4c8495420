import { type ExpressionBuilder, type Kysely, PostgresAdapter, type Selectable, sql } from 'kysely';
import type { LogoutDelivery, LogoutDeliveryStore, NewLogoutDelivery } from '../../core/ports.js';
import type { Instant } from '../../core/time.js';
import type { Database, LogoutDeliveriesTable } from '../schema.js';

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

export class KyselyLogoutDeliveryStore implements LogoutDeliveryStore {
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async insert(deliveries: NewLogoutDelivery[], now: Instant): Promise<void> {
    if (deliveries.length === 0) return;
    await this.db.insertInto('logout_deliveries').values(deliveries.map((d) => ({
      client_id: d.clientId, user_id: d.userId, sid: d.sid, jti: d.jti, cause: d.cause, created_at: now, next_attempt_at: now,
    }))).execute();
  }

  async anyDue(now: Instant): Promise<boolean> {
    const row = await this.db.selectFrom('logout_deliveries').select('id').where(due(now)).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async claim(claim: string, now: Instant, leaseUntil: Instant, limit: number): Promise<LogoutDelivery[]> {
    // One statement. The condition is checked again on every row the UPDATE writes, so on
    // PostgreSQL a second claimer that waited for a row sees the lease the first one wrote and
    // passes over it; SKIP LOCKED lets it take other rows instead of waiting. SQLite runs one
    // writer at a time, so the statement is atomic there as it stands.
    const rows = await this.db.updateTable('logout_deliveries')
      .set({ claim, lease_until: leaseUntil, attempts: sql`attempts + 1` })
      .where('id', 'in', (eb) => {
        const candidates = eb.selectFrom('logout_deliveries').select('id').where(due(now)).orderBy('next_attempt_at').orderBy('id').limit(limit);
        return this.postgres ? candidates.forUpdate().skipLocked() : candidates;
      })
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
