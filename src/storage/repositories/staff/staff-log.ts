import { type Kysely, type Selectable, sql } from 'kysely';
import type { User } from '../../../core/accounts/ports.js';
import type { Client } from '../../../core/oauth/ports.js';
import type { AppDirectory, DailyCount, DailyFigureStore, Figure, MemberDirectory, Role, RoleStore, StaffAction, StaffLogEntry, StaffLogStore, StaffTargetKind } from '../../../core/staff/ports.js';
import type { Instant } from '../../../core/time.js';
import type { Database, StaffLogTable } from '../../schema.js';
import { detailOf } from '../accounts/security-events.js';
import { USER_COLUMNS, toUser } from '../accounts/users.js';
import { KyselyClientStore } from '../oauth/clients.js';

/** What was typed, for a LIKE pattern: LIKE's own characters in it match themselves (`escape '\\'`). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function toEntry(row: Selectable<StaffLogTable>): StaffLogEntry {
  return {
    id: row.id, createdAt: row.created_at, actorId: row.actor_id, actorName: row.actor_name, action: row.action as StaffAction,
    targetKind: row.target_kind as StaffTargetKind, targetId: row.target_id, targetName: row.target_name,
    detail: detailOf(row.detail), reason: row.reason,
  };
}

/** The staff log (INTERFACE section 14): inserts and reads only; the table's triggers refuse the rest. */
export class KyselyStaffLogStore implements StaffLogStore {
  constructor(private readonly db: Kysely<Database>) {}

  async append(entry: Omit<StaffLogEntry, 'id'>): Promise<StaffLogEntry> {
    const row = await this.db.insertInto('staff_log').values({
      created_at: entry.createdAt, actor_id: entry.actorId, actor_name: entry.actorName, action: entry.action,
      target_kind: entry.targetKind, target_id: entry.targetId, target_name: entry.targetName,
      detail: JSON.stringify(entry.detail), reason: entry.reason,
    }).returningAll().executeTakeFirstOrThrow();
    return toEntry(row);
  }

  async list(options: { limit: number; beforeId?: number; target?: { kind: StaffTargetKind; id: string } }): Promise<StaffLogEntry[]> {
    let query = this.db.selectFrom('staff_log').selectAll().orderBy('id', 'desc').limit(options.limit);
    if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
    if (options.target) query = query.where('target_kind', '=', options.target.kind).where('target_id', '=', options.target.id);
    return (await query.execute()).map(toEntry);
  }
}

/** Every account's role, in its own column of `users` (read only by the staff console). */
export class KyselyRoleStore implements RoleStore {
  constructor(private readonly db: Kysely<Database>) {}

  async roleOf(userId: number): Promise<Role | undefined> {
    const row = await this.db.selectFrom('users').select('role').where('id', '=', userId).executeTakeFirst();
    return row?.role as Role | undefined;
  }

  async setRole(userId: number, role: Role, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('users').set({ role, updated_at: now }).where('id', '=', userId).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async holdsRole(userId: number, role: Role): Promise<boolean> {
    // An update that changes nothing, for its row lock (PostgreSQL; SQLite runs one writing
    // transaction at a time): a plain read would let two admins each demote the other at once.
    const result = await this.db.updateTable('users').set({ role }).where('id', '=', userId).where('role', '=', role).where('status', '=', 'active').executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}

/** The console's member search: at most `limit` rows, from one pass over the accounts (a member list of 100,000 is read in milliseconds). */
export class KyselyMemberDirectory implements MemberDirectory {
  constructor(private readonly db: Kysely<Database>) {}

  async search(query: string, limit: number): Promise<User[]> {
    const text = query.trim();
    // PostgreSQL text holds no NUL: such a query names no one.
    if (text === '' || text.includes('\0')) return [];
    const key = text.toLowerCase();
    const literal = likeLiteral(key);
    const rows = await this.db.selectFrom('users').select(USER_COLUMNS)
      .where((eb) => eb.or([
        // An id as the column holds it (32 bits): PostgreSQL refuses a larger number outright.
        ...(/^\d{1,10}$/.test(text) && Number(text) <= 2_147_483_647 ? [eb('id', '=', Number(text))] : []),
        eb('username_key', 'like', sql<string>`${`${literal}%`} escape '\\'`),
        eb(sql`lower(nickname)`, 'like', sql<string>`${`%${literal}%`} escape '\\'`),
        // A pending address too: staff asked who holds an address find the member who asked for it.
        eb('id', 'in', eb.selectFrom('member_emails').select('user_id').where((e) => e.or([e('address_key', '=', key), e('pending_address_key', '=', key)]))),
      ]))
      .orderBy('id').limit(limit).execute();
    return rows.map(toUser);
  }

  async countJoined(bounds: readonly Instant[]): Promise<number[]> {
    const counts = bounds.slice(1).map(() => 0);
    if (counts.length === 0) return counts;
    // One range scan of the `users_created` index, each row placed in its range by comparisons: the
    // database answers a row per range, not a row per new member for the caller to place.
    const ranges = bounds.slice(1).map((end, i) => sql`when created_at < ${end} then ${sql.lit(i)}`);
    const { rows } = await sql<{ slot: number | string; joined: number | string }>`
      select case ${sql.join(ranges, sql` `)} end as slot, count(*) as joined from users
      where created_at >= ${bounds[0]!} and created_at < ${bounds.at(-1)!}
      group by 1`.execute(this.db);
    for (const row of rows) counts[Number(row.slot)] = Number(row.joined);
    return counts;
  }
}

/** The overview's daily counts: each flush adds to the rows in one statement. */
export class KyselyDailyFigureStore implements DailyFigureStore {
  constructor(private readonly db: Kysely<Database>) {}

  async add(counts: readonly DailyCount[]): Promise<void> {
    if (counts.length === 0) return;
    await this.db.insertInto('daily_figures')
      .values(counts.map((c) => ({ day: c.day, figure: c.figure, count: c.count })))
      .onConflict((oc) => oc.columns(['day', 'figure']).doUpdateSet({ count: sql`daily_figures.count + excluded.count` }))
      .execute();
  }

  async since(firstDay: string): Promise<DailyCount[]> {
    const rows = await this.db.selectFrom('daily_figures').selectAll().where('day', '>=', firstDay).execute();
    return rows.map((row) => ({ day: row.day, figure: row.figure as Figure, count: Number(row.count) }));
  }
}

/** The console's app search and each app's use; apps are few (registrations), their tokens many (an index serves those). */
export class KyselyAppDirectory implements AppDirectory {
  private readonly clients: KyselyClientStore;

  constructor(private readonly db: Kysely<Database>, clients: KyselyClientStore) {
    this.clients = clients;
  }

  async search(query: string, limit: number): Promise<Client[]> {
    const text = query.trim();
    if (text.includes('\0')) return [];
    let q = this.db.selectFrom('clients').select('client_id').orderBy('created_at', 'desc').orderBy('client_id').limit(limit);
    if (text !== '') {
      const literal = likeLiteral(text.toLowerCase());
      q = q.where((eb) => eb.or([eb('client_id', '=', text), eb(sql`lower(name)`, 'like', sql<string>`${`%${literal}%`} escape '\\'`)]));
    }
    const ids = (await q.execute()).map((row) => row.client_id);
    const found = await Promise.all(ids.map((id) => this.clients.findById(id)));
    return found.filter((c): c is Client => c !== undefined);
  }

  async usage(clientId: string, since: Instant): Promise<{ users: number; tokensSince: number }> {
    const [users, tokens] = await Promise.all([
      this.db.selectFrom('grants').select((eb) => eb.fn.count<number>('user_id').distinct().as('n'))
        .where('client_id', '=', clientId).where('revoked_at', 'is', null).executeTakeFirst(),
      this.db.selectFrom('access_tokens').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('client_id', '=', clientId).where('created_at', '>=', since).executeTakeFirst(),
    ]);
    return { users: Number(users?.n ?? 0), tokensSince: Number(tokens?.n ?? 0) };
  }
}
