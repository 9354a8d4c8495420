import { type ExpressionBuilder, type Kysely, type QueryCreator, type Selectable, sql } from 'kysely';
import type { AuthorizationCode, CodeStore, GrantWithUser, PresentedCode, TokenRows } from '../../../core/oauth/ports.js';
import type { Instant } from '../../../core/time.js';
import type { CompiledQueries, QueryBuilder } from '../../database.js';
import type { AuthorizationCodesTable, Database } from '../../schema.js';
import { type ConsumedWithGrant, GRANT_WITH_USER_COLUMNS, KyselyGrantStore, NEW_GRANT, consumeWithGrant, consumedWithGrant, createGrant, grantValues, toGrantWithUser } from './grants.js';
import { KyselyTokenStore, NEW_TOKEN, tokenValues } from './tokens.js';

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

/**
 * What the exchange issues tokens for (`redeemable` in src/core/oauth/grants/authorization-code.ts):
 * a grant not revoked, of a user who is active. `redeem` stores tokens only under it.
 */
const LIVE_GRANT = sql<boolean>`g.revoked_at is null and u.status = 'active'`;

const TOKEN_COLUMNS = Object.keys(NEW_TOKEN) as Array<keyof typeof NEW_TOKEN>;
/** A new token's row, inserted once for each row of `redeemed` (none or one). */
const insertTokenIfRedeemed = (table: 'access_tokens' | 'refresh_tokens') => (w: QueryCreator<any>) => w.insertInto(table).columns(TOKEN_COLUMNS)
  .expression((eb: ExpressionBuilder<any, any>) => eb.selectFrom('redeemed').select((s) => TOKEN_COLUMNS.map((column) => s.val(NEW_TOKEN[column]).as(column))));

/**
 * `redeem` with tokens on PostgreSQL, one statement: the consuming write (`consumeCode`'s seven
 * parameters) as `c`; `redeemed`, its row if its grant is live (`LIVE_GRANT`); for it, the access
 * token's row and the refresh token's (nine parameters each, `tokenValues`' order) and the grant
 * marked used (the instant, then whether to); then `consumedWithGrant`'s answer. Every part sees
 * the one snapshot the statement began with, and commits with it.
 */
const redeemStoringTokens: QueryBuilder<ConsumedWithGrant<Selectable<AuthorizationCodesTable>>> = (db) => (db as unknown as Kysely<any>)
  // Kysely cannot type a WITH over a write it knows only as generic (as `consumedWithGrant`).
  .with('c', consumeCode as never)
  .with('redeemed', (w) => w.selectFrom('c').innerJoin('grants as g', 'g.id', 'c.grant_id').innerJoin('users as u', 'u.id', 'g.user_id')
    .where(LIVE_GRANT).select('c.grant_id'))
  .with('access', insertTokenIfRedeemed('access_tokens'))
  .with('refresh', insertTokenIfRedeemed('refresh_tokens'))
  .with('touched', (w) => w.updateTable('grants').set({ last_used_at: 0 })
    .where('id', 'in', (eb: ExpressionBuilder<any, any>) => eb.selectFrom('redeemed').select('grant_id')).where(sql<boolean>`${false}`))
  .selectFrom('c').leftJoin('grants as g', 'g.id', 'c.grant_id').leftJoin('users as u', 'u.id', 'g.user_id')
  .select(sql`to_jsonb(c)`.as('consumed')).select(GRANT_WITH_USER_COLUMNS);

/** A code's columns beside `GRANT_WITH_USER_COLUMNS`: those whose names the grant's or the user's take are renamed. */
const CODE_BESIDE_GRANT_COLUMNS = [
  'c.code_hash', 'c.grant_id as code_grant_id', 'c.client_id as code_client_id', 'c.user_id as code_user_id', 'c.redirect_uri',
  'c.scope as code_scope', 'c.code_challenge', 'c.nonce as code_nonce', 'c.auth_time as code_auth_time',
  'c.created_at as code_created_at', 'c.expires_at', 'c.used_at', 'c.dpop_jkt',
] as const;
const codeWithGrant = (db: Kysely<Database>) => db.selectFrom('authorization_codes as c')
  .leftJoin('grants as g', 'g.id', 'c.grant_id').leftJoin('users as u', 'u.id', 'g.user_id')
  .select(CODE_BESIDE_GRANT_COLUMNS).select(GRANT_WITH_USER_COLUMNS)
  .where('c.code_hash', '=', '');

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

  async redeem(presented: PresentedCode, now: Instant, tokens?: TokenRows): Promise<{ code: AuthorizationCode; granted: GrantWithUser | undefined } | undefined> {
    // One conditional write: the row changes only for the first caller (RFC 6749 4.1.2).
    const consuming = [now, presented.codeHash, presented.clientId, presented.redirectUri, now, presented.codeChallenge, presented.dpopJkt ?? null];
    if (this.queries.writesCombine && tokens) {
      const row = await this.queries.first(this.db, redeemStoringTokens,
        [...consuming, ...Object.values(tokenValues(tokens.access)), ...Object.values(tokenValues(tokens.refresh)), now, tokens.touchGrant]);
      return row && { code: toCode(row.consumed), granted: toGrantWithUser(row) };
    }
    if (!tokens) {
      const consumed = await consumeWithGrant(this.db, this.queries, codeConsumption, consuming);
      return consumed && { code: toCode(consumed.row), granted: consumed.granted };
    }
    // SQLite: the consuming write, then the tokens, in one transaction (committed with those of its turn).
    return this.queries.transaction(this.db, async (trx) => {
      const consumed = await consumeWithGrant(trx, this.queries, codeConsumption, consuming);
      if (!consumed) return undefined;
      const { granted } = consumed;
      // LIVE_GRANT, read here from the row the transaction holds.
      if (granted && granted.grant.revokedAt === null && granted.user.status === 'active') {
        await new KyselyTokenStore(trx, this.queries).insertPair(tokens.access, tokens.refresh);
        if (tokens.touchGrant) await new KyselyGrantStore(trx, this.queries).touch(granted.grant.id, now);
      }
      return { code: toCode(consumed.row), granted };
    });
  }

  async find(codeHash: string): Promise<AuthorizationCode | undefined> {
    const row = await this.db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    return row && toCode(row);
  }

  async findWithGrant(codeHash: string): Promise<{ code: AuthorizationCode; granted: GrantWithUser | undefined } | undefined> {
    const row = await this.queries.first(this.db, codeWithGrant, [codeHash]);
    return row && {
      code: toCode({
        ...row, grant_id: row.code_grant_id, client_id: row.code_client_id, user_id: row.code_user_id, scope: row.code_scope,
        nonce: row.code_nonce, auth_time: row.code_auth_time, created_at: row.code_created_at,
      }),
      // The left join's nulls when the grant is gone.
      granted: toGrantWithUser(row as Parameters<typeof toGrantWithUser>[0]),
    };
  }
}
