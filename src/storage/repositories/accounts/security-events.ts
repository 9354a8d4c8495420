import { type Kysely, PostgresAdapter } from 'kysely';
import type { Page } from '../../../core/stores.js';
import type { SecurityEvent, SecurityEventStore } from '../../../core/accounts/ports.js';
import type { Database } from '../../schema.js';

/** A stored `detail` column (a JSON object of strings) read back; anything else reads as empty. */
export function detailOf(text: string): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, string> : {};
  } catch {
    return {};
  }
}

function row(event: Omit<SecurityEvent, 'id'>) {
  return {
    user_id: event.userId, kind: event.kind, created_at: event.createdAt, address: event.address.slice(0, 64),
    device: event.device.slice(0, 100), detail: JSON.stringify(event.detail),
  };
}

/** The account's security log (issue 18 item 5): written by `SecurityLog`, read by its owner. */
export class KyselySecurityEventStore implements SecurityEventStore {
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async insert(event: Omit<SecurityEvent, 'id'>): Promise<void> {
    await this.db.insertInto('security_events').values(row(event)).execute();
  }

  /**
   * One statement: the line is inserted from the account's row, read only while the account is
   * not deleted. On PostgreSQL the row is held `FOR NO KEY UPDATE` until the statement ends, as
   * `UserStore.holdActive` holds it, so a deletion that has changed the status and not yet
   * committed is waited for (and the row, read again once it commits, inserts nothing), and one
   * that comes after waits for this statement, then its erase sees the line. SQLite runs one
   * transaction at a time: the statement reads the status the deletion left or will find.
   */
  async insertUnlessDeleted(event: Omit<SecurityEvent, 'id'>): Promise<boolean> {
    const values = row(event);
    const columns = Object.keys(values) as Array<keyof typeof values>;
    const account = this.db.selectFrom('users')
      .select((eb) => columns.map((column) => eb.val(values[column]).as(column)))
      .where('id', '=', event.userId).where('status', '<>', 'deleted');
    const result = await this.db.insertInto('security_events').columns(columns)
      .expression(this.postgres ? account.forNoKeyUpdate() : account).executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async insertMany(events: ReadonlyArray<Omit<SecurityEvent, 'id'>>): Promise<void> {
    // 128 rows of 6 columns a statement: far below either database's limit on parameters.
    for (let start = 0; start < events.length; start += 128) {
      await this.db.insertInto('security_events').values(events.slice(start, start + 128).map(row)).execute();
    }
  }

  async listForUser(userId: number, offset: number, limit: number): Promise<Page<SecurityEvent>> {
    const [rows, count] = await Promise.all([
      this.db.selectFrom('security_events').selectAll().where('user_id', '=', userId)
        .orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      this.db.selectFrom('security_events').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirst(),
    ]);
    return {
      items: rows.map((row) => ({
        id: row.id, userId: row.user_id, kind: row.kind, createdAt: row.created_at, address: row.address, device: row.device,
        detail: detailOf(row.detail),
      })),
      total: Number(count?.n ?? 0),
    };
  }

  async eraseForUser(userId: number): Promise<void> {
    await this.db.deleteFrom('security_events').where('user_id', '=', userId).execute();
  }
}
