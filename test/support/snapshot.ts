/** Every row of the tables a request could write, as one comparable string: "nothing stored changed". */
import { type Kysely, sql } from 'kysely';

export const STORED_TABLES = [
  'users', 'clients', 'consents', 'grants', 'authorization_codes', 'access_tokens', 'refresh_tokens',
  'personal_tokens', 'sessions', 'posts', 'comments', 'post_likes', 'categories', 'signing_keys', 'logout_deliveries',
  'member_emails', 'email_links', 'mail_outbox',
] as const;

/**
 * `ignore` names columns that a valid read legitimately touches (a token's "last used" time),
 * so they are left out of the comparison.
 */
export async function snapshotTables(db: Kysely<any>, ignore: string[] = []): Promise<string> {
  const parts: string[] = [];
  for (const table of STORED_TABLES) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
    const kept = rows.map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).filter(([k]) => !ignore.includes(k)))));
    parts.push(`${table}:${rows.length}`, ...kept.sort());
  }
  return parts.join('\n');
}
