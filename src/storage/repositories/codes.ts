import type { Kysely, QueryCreator, Selectable } from 'kysely';
import type { AuthorizationCode, CodeStore, GrantWithUser } from '../../core/ports.js';
import type { Instant } from '../../core/time.js';
import { type CompiledQueries, inTransaction } from '../database.js';
import type { AuthorizationCodesTable, Database } from '../schema.js';
import { NEW_GRANT, consumeWithGrant, consumedWithGrant, createGrant } from './grants.js';

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
const NEW_CODE_COLUMNS = [
  'code_hash', 'grant_id', 'client_id', 'user_id', 'redirect_uri', 'scope', 'code_challenge', 'nonce', 'auth_time', 'created_at', 'expires_at',
] as const;
/** A new grant and its code in one statement (PostgreSQL): the grant's columns, then the code's but `grant_id`. */
const insertCodeUnderNewGrant = (db: Kysely<Database>) => db
  .with('g', (w) => w.insertInto('grants').values(NEW_GRANT).returning('id'))
  .insertInto('authorization_codes').columns(NEW_CODE_COLUMNS)
  .expression((eb) => eb.selectFrom('g').select((s) => [
    s.val('').as('code_hash'), 'g.id', s.val('').as('client_id'), s.val(0).as('user_id'), s.val('').as('redirect_uri'),
    s.val('').as('scope'), s.val('').as('code_challenge'), s.val('').as('nonce'), s.val(0).as('auth_time'),
    s.val(0).as('created_at'), s.val(0).as('expires_at'),
  ]));
const consumeCode = (db: QueryCreator<Database>) => db.updateTable('authorization_codes').set({ used_at: 0 })
  .where('code_hash', '=', '').where('used_at', 'is', null).returningAll();
const codeConsumption = consumedWithGrant(consumeCode);

function insertRow(db: Kysely<Database>, queries: CompiledQueries, code: Omit<AuthorizationCode, 'usedAt'>) {
  return queries.execute(db, insertCode, [
    code.codeHash, code.grantId, code.clientId, code.userId, code.redirectUri, code.scope, code.codeChallenge,
    code.nonce, code.authTime, code.createdAt, code.expiresAt,
  ]);
}

export class KyselyCodeStore implements CodeStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async insert(code: Omit<AuthorizationCode, 'usedAt'>): Promise<void> {
    await insertRow(this.db, this.queries, code);
  }

  async insertUnderNewGrant(code: Omit<AuthorizationCode, 'usedAt' | 'grantId'>): Promise<void> {
    const grant = [code.userId, code.clientId, code.scope, code.nonce, code.authTime, code.createdAt, code.createdAt];
    if (this.queries.writesCombine) {
      await this.queries.execute(this.db, insertCodeUnderNewGrant, [
        ...grant, code.codeHash, code.clientId, code.userId, code.redirectUri, code.scope, code.codeChallenge,
        code.nonce, code.authTime, code.createdAt, code.expiresAt,
      ]);
      return;
    }
    const insertBoth = async (db: Kysely<Database>) => {
      const created = await this.queries.first(db, createGrant, grant);
      await insertRow(db, this.queries, { ...code, grantId: created!.id });
    };
    await inTransaction(this.db, insertBoth);
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
