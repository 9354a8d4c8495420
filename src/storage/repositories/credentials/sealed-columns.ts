import { type Kysely, sql } from 'kysely';
import type { SealedColumn, SealedColumnStore, StoredSecret } from '../../../core/credentials/ports.js';
import type { Database } from '../../schema.js';

/** Where each sealed column lives: its table, the key of its rows, and whether that key is a number. */
const PLACES: Record<SealedColumn, { table: keyof Database; key: string; value: string; numericKey: boolean }> = {
  'signing_keys.private_jwk': { table: 'signing_keys', key: 'kid', value: 'private_jwk', numericKey: false },
  'totp_credentials.secret': { table: 'totp_credentials', key: 'user_id', value: 'secret', numericKey: true },
  'server_secrets.value': { table: 'server_secrets', key: 'name', value: 'value', numericKey: false },
};

/** A row key as the column compares it: a user id in order of numbers, not of strings. */
function rowKey(column: SealedColumn, row: string): string | number {
  return PLACES[column].numericKey ? Number(row) : row;
}

export class KyselySealedColumnStore implements SealedColumnStore {
  constructor(private readonly db: Kysely<Database>) {}

  listWithoutPrefix(column: SealedColumn, prefix: string, after: string | undefined, limit: number): Promise<StoredSecret[]> {
    return this.list(column, prefix, false, after, limit);
  }

  listWithPrefix(column: SealedColumn, prefix: string, limit: number): Promise<StoredSecret[]> {
    return this.list(column, prefix, true, undefined, limit);
  }

  /** Up to `limit` values of `column` that start with `prefix` or not (`starting`), in row order after `after`. */
  private async list(column: SealedColumn, prefix: string, starting: boolean, after: string | undefined, limit: number): Promise<StoredSecret[]> {
    const { table, key, value } = PLACES[column];
    // substr, not LIKE: the prefix is matched as it is, whatever characters it holds.
    const { rows } = await sql<{ row: string | number; stored: string }>`
      select ${sql.ref(key)} as row, ${sql.ref(value)} as stored from ${sql.table(table)}
      where substr(${sql.ref(value)}, 1, ${prefix.length}) ${sql.raw(starting ? '=' : '<>')} ${prefix}
      ${after === undefined ? sql`` : sql`and ${sql.ref(key)} > ${rowKey(column, after)}`}
      order by ${sql.ref(key)} limit ${limit}`.execute(this.db);
    return rows.map((r) => ({ row: String(r.row), stored: r.stored }));
  }

  async replace(column: SealedColumn, row: string, stored: string, replacement: string): Promise<boolean> {
    const { table, key, value } = PLACES[column];
    const result = await sql`
      update ${sql.table(table)} set ${sql.ref(value)} = ${replacement}
      where ${sql.ref(key)} = ${rowKey(column, row)} and ${sql.ref(value)} = ${stored}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0n) === 1;
  }
}
