import { type Kysely, type QueryCreator, type Selectable, sql } from 'kysely';
import type { AuthorizationCode, CodeStore, GrantWithUser } from '../../core/ports.js';
import type { Instant } from '../../core/time.js';
import type { CompiledQueries } from '../database.js';
import type { AuthorizationCodesTable, Database } from '../schema.js';
import { GRANT_WITH_USER_COLUMNS, consumeWithGrant } from './grants.js';

function toCode(row: Selectable<AuthorizationCodesTable>): AuthorizationCode {
  return {
    codeHash: row.code_hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    redirectUri: row.redirect_uri,
    scope: row.scope,
    codeChallenge: row.code_challenge,
    nonce: row.nonce,
    authTime: row.auth_time,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
  };
}

const insertCode = (db: Kysely<Database>) => db.insertInto('authorization_codes').values({
  code_hash: '', grant_id: 0, client_id: '', user_id: 0, redirect_uri: '', scope: '', code_challenge: '',
  nonce: '', auth_time: 0, created_at: 0, expires_at: 0,
});
const consumeCode = (db: QueryCreator<Database>) => db.updateTable('authorization_codes').set({ used_at: 0 })
  .where('code_hash', '=', '').where('used_at', 'is', null).returningAll();
const consumeCodeJoined = (db: Kysely<Database>) => db.with('c', consumeCode)
  .selectFrom('c').leftJoin('grants as g', 'g.id', 'c.grant_id').leftJoin('users as u', 'u.id', 'g.user_id')
  .select(sql<Selectable<AuthorizationCodesTable>>`to_jsonb(c)`.as('consumed')).select(GRANT_WITH_USER_COLUMNS);
const codeConsumption = { consume: consumeCode, joined: consumeCodeJoined };

export class KyselyCodeStore implements CodeStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async insert(code: Omit<AuthorizationCode, 'usedAt'>): Promise<void> {
    await this.queries.execute(this.db, insertCode, [
      code.codeHash, code.grantId, code.clientId, code.userId, code.redirectUri, code.scope, code.codeChallenge,
      code.nonce, code.authTime, code.createdAt, code.expiresAt,
    ]);
  }

  async consume(codeHash: string, now: Instant): Promise<{ code: AuthorizationCode; granted: GrantWithUser | undefined } | undefined> {
    // One conditional write: the row changes only for the first caller (RFC 6749 4.1.2).
    const consumed = await consumeWithGrant(this.db, this.queries, codeConsumption, [now, codeHash]);
    return consumed && { code: toCode(consumed.row), granted: consumed.granted };
  }

  async find(codeHash: string): Promise<AuthorizationCode | undefined> {
    const row = await this.db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    return row && toCode(row);
  }
}
