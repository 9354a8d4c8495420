import { type Kysely, type QueryCreator, type Selectable, sql } from 'kysely';
import type { AuthorizationCode, CodeStore, GrantWithUser, PresentedCode } from '../../../core/oauth/ports.js';
import type { Instant } from '../../../core/time.js';
import type { CompiledQueries } from '../../database.js';
import type { AuthorizationCodesTable, Database } from '../../schema.js';
import { NEW_GRANT, consumeWithGrant, consumedWithGrant, createGrant, grantValues } from './grants.js';

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
    dpopJkt: row.dpop_jkt,
  };
}

type NewCode = Omit<AuthorizationCode, 'usedAt' | 'dpopJkt'> & { dpopJkt?: string | null };

/** The columns of a new code, in the order of the compiled inserts' parameters. */
function codeValues(code: NewCode) {
  return {
    code_hash: code.codeHash, grant_id: code.grantId, client_id: code.clientId, user_id: code.userId, redirect_uri: code.redirectUri,
    scope: code.scope, code_challenge: code.codeChallenge, nonce: code.nonce, auth_time: code.authTime, created_at: code.createdAt,
    expires_at: code.expiresAt, dpop_jkt: code.dpopJkt ?? null,
  };
}

/** The code's columns but `grant_id`, which the statement of `insertCodeUnderNewGrant` takes from the new grant. */
function valuesBesideGrant(code: Omit<NewCode, 'grantId'>) {
  const { grant_id: _, ...rest } = codeValues({ ...code, grantId: 0 });
  return rest;
}

const PLACEHOLDER_CODE = codeValues({
  codeHash: '', grantId: 0, clientId: '', userId: 0, redirectUri: '', scope: '', codeChallenge: '', nonce: '', authTime: 0, createdAt: 0, expiresAt: 0, dpopJkt: '',
});
const insertCode = (db: Kysely<Database>) => db.insertInto('authorization_codes').values(PLACEHOLDER_CODE);
/** A new grant and its code in one statement (PostgreSQL): the grant's columns, then the code's but `grant_id`. */
const insertCodeUnderNewGrant = (db: Kysely<Database>) => db
  .with('g', (w) => w.insertInto('grants').values(NEW_GRANT).returning('id'))
  .insertInto('authorization_codes').columns(Object.keys(PLACEHOLDER_CODE) as Array<keyof typeof PLACEHOLDER_CODE>)
  .expression((eb) => eb.selectFrom('g').select((s) => Object.keys(PLACEHOLDER_CODE).map((column) =>
    column === 'grant_id' ? s.ref('g.id').as(column) : s.val(PLACEHOLDER_CODE[column as keyof typeof PLACEHOLDER_CODE]).as(column))));
/**
 * The consuming write: the code changes only when it is unused, unexpired and presented with
 * everything it is bound to (client, redirect URI, PKCE challenge; `is not distinct from`, so a
 * code without a challenge matches only a request without a verifier; and the DPoP key of
 * `dpop_jkt` when the authorization request named one, RFC 9449 10).
 */
const consumeCode = (db: QueryCreator<Database>) => db.updateTable('authorization_codes').set({ used_at: 0 })
  .where('code_hash', '=', '').where('client_id', '=', '').where('redirect_uri', '=', '').where('expires_at', '>', 0)
  .where(sql<boolean>`code_challenge is not distinct from ${''}`)
  .where(sql<boolean>`(dpop_jkt is null or dpop_jkt = ${''})`)
  .where('used_at', 'is', null).returningAll();
const codeConsumption = consumedWithGrant(consumeCode);

function insertRow(db: Kysely<Database>, queries: CompiledQueries, code: NewCode) {
  return queries.execute(db, insertCode, Object.values(codeValues(code)));
}

export class KyselyCodeStore implements CodeStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async insert(code: NewCode): Promise<void> {
    await insertRow(this.db, this.queries, code);
  }

  async insertUnderNewGrant(code: Omit<NewCode, 'grantId'> & { amr?: readonly string[] | null }, sid: string | null): Promise<void> {
    const grant = Object.values(grantValues({ ...code, sid }, code.createdAt));
    if (this.queries.writesCombine) {
      await this.queries.execute(this.db, insertCodeUnderNewGrant, [...grant, ...Object.values(valuesBesideGrant(code))]);
      return;
    }
    const insertBoth = async (db: Kysely<Database>) => {
      const created = await this.queries.first(db, createGrant, grant);
      await insertRow(db, this.queries, { ...code, grantId: created!.id });
    };
    // SQLite: committed with the other transactions of its turn (`SqliteGroupCommit`).
    await this.queries.transaction(this.db, insertBoth);
  }

  async consume(presented: PresentedCode, now: Instant): Promise<{ code: AuthorizationCode; granted: GrantWithUser | undefined } | undefined> {
    // One conditional write: the row changes only for the first caller (RFC 6749 4.1.2).
    const consumed = await consumeWithGrant(this.db, this.queries, codeConsumption,
      [now, presented.codeHash, presented.clientId, presented.redirectUri, now, presented.codeChallenge, presented.dpopJkt ?? null]);
    return consumed && { code: toCode(consumed.row), granted: consumed.granted };
  }

  async find(codeHash: string): Promise<AuthorizationCode | undefined> {
    const row = await this.db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    return row && toCode(row);
  }
}
