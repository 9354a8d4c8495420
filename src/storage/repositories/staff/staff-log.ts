import type { Kysely, Selectable } from 'kysely';
import type { Role, RoleStore, StaffAction, StaffLogEntry, StaffLogStore, StaffTargetKind } from '../../../core/staff/ports.js';
import type { Instant } from '../../../core/time.js';
import type { Database, StaffLogTable } from '../../schema.js';

function detailOf(text: string): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, string> : {};
  } catch {
    return {};
  }
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
}
