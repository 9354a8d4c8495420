import type { Kysely, Selectable } from 'kysely';
import type { NewSession, Session, SessionStore, User } from '../../../core/accounts/ports.js';
import { type Instant, hasExpired } from '../../../core/time.js';
import { type CompiledQueries, keyIsAnyOf } from '../../database.js';
import type { Database, SessionsTable } from '../../schema.js';
import { USER_COLUMNS, toUser } from './users.js';

/**
 * A session not ended, with its user's row; whether it has expired is checked on the row. Not
 * remembered on SQLite: an authorization, which reads it, writes right after.
 */
const openSessionColumns = (db: Kysely<Database>) => db.selectFrom('sessions as s').innerJoin('users as u', 'u.id', 's.user_id')
  .select(['s.id_hash', 's.user_id', 's.auth_time', 's.created_at as session_created_at', 's.last_seen_at', 's.expires_at', 's.amr', 's.user_agent', 's.address'])
  .select(USER_COLUMNS.map((column) => `u.${column}` as const))
  .where('s.ended_at', 'is', null);
const openSession = (db: Kysely<Database>) => openSessionColumns(db).where('s.id_hash', '=', '');
const openSessions = (db: Kysely<Database>) => openSessionColumns(db).where(keyIsAnyOf('s.id_hash'));
/** Every page a signed-in browser loads, and every authorization request, looks its session up: see `CompiledQueries.lookup`. */
const sessionLookup = { one: openSession, many: openSessions, keyOf: (row: { id_hash: string }) => row.id_hash };

/** The stored form of an `amr` list: its methods separated by spaces. */
function amrList(text: string): string[] {
  return text.split(' ').filter((m) => m !== '');
}

type SessionRow = Pick<Selectable<SessionsTable>, 'id_hash' | 'user_id' | 'auth_time' | 'last_seen_at' | 'expires_at' | 'amr' | 'user_agent' | 'address'>;

function toSession(row: SessionRow, createdAt: Instant): Session {
  return {
    idHash: row.id_hash,
    userId: row.user_id,
    authTime: row.auth_time,
    createdAt,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
    amr: amrList(row.amr),
    userAgent: row.user_agent,
    address: row.address,
  };
}

export class KyselySessionStore implements SessionStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async create(input: NewSession, now: Instant): Promise<Session> {
    const session = { amr: ['pwd'], ...input, userAgent: (input.userAgent ?? '').slice(0, 512), address: (input.address ?? '').slice(0, 64) };
    await this.db.insertInto('sessions').values({
      id_hash: session.idHash,
      user_id: session.userId,
      auth_time: session.authTime,
      created_at: now,
      last_seen_at: now,
      expires_at: session.expiresAt,
      amr: session.amr.join(' '),
      user_agent: session.userAgent,
      address: session.address,
    }).execute();
    return { ...session, createdAt: now, lastSeenAt: now };
  }

  async findLive(idHash: string, now: Instant): Promise<{ session: Session; user: User } | undefined> {
    const row = await this.queries.lookup(this.db, idHash, sessionLookup);
    if (!row || hasExpired(row.expires_at, now)) return undefined;
    return { session: toSession(row, row.session_created_at), user: toUser(row) };
  }

  async listForUser(userId: number, now: Instant): Promise<Session[]> {
    const rows = await this.db.selectFrom('sessions').selectAll()
      .where('user_id', '=', userId).where('ended_at', 'is', null).where('expires_at', '>', now)
      .orderBy('last_seen_at', 'desc').orderBy('created_at', 'desc').execute();
    return rows.map((row) => toSession(row, row.created_at));
  }

  async endOthersForUser(userId: number, keepIdHash: string, now: Instant): Promise<string[]> {
    const rows = await this.db.updateTable('sessions').set({ ended_at: now })
      .where('user_id', '=', userId).where('id_hash', '!=', keepIdHash).where('ended_at', 'is', null)
      .returning('id_hash').execute();
    return rows.map((row) => row.id_hash);
  }

  async touch(idHash: string, now: Instant): Promise<void> {
    // Forward only, in the one statement: two instances (or a slow request) touching it in any order never set it back.
    await this.db.updateTable('sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).where('ended_at', 'is', null)
      .where('last_seen_at', '<', now).execute();
  }

  async end(idHash: string, now: Instant): Promise<{ userId: number } | undefined> {
    const row = await this.db.updateTable('sessions').set({ ended_at: now }).where('id_hash', '=', idHash).where('ended_at', 'is', null)
      .returning('user_id').executeTakeFirst();
    return row && { userId: row.user_id };
  }

  async endForUser(userId: number, now: Instant): Promise<number> {
    const result = await this.db.updateTable('sessions').set({ ended_at: now })
      .where('user_id', '=', userId).where('ended_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async eraseForUser(userId: number): Promise<void> {
    await this.db.deleteFrom('sessions').where('user_id', '=', userId).execute();
  }
}
