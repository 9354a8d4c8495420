import { type Kysely, type QueryCreator, type Selectable, sql } from 'kysely';
import type { ReplayCandidate } from '../../../core/oauth/tokens/replay.js';
import type {
  BearerRecord, GrantWithUser, IssuedToken, NewIssuedToken, RefreshRotation, RefreshToken, RotationIssuance, Succession, TokenStore,
} from '../../../core/oauth/ports.js';
import type { Instant } from '../../../core/time.js';
import { type CompiledQueries, type QueryBuilder, aloneRetried, keyIsAnyOf } from '../../database.js';
import type { AccessTokensTable, Database, RefreshTokensTable } from '../../schema.js';
import { KyselyGrantStore, consumeWithGrant, consumedWithGrant, grantIsLive, storedWithGrantByKey, toGrantWithUser } from './grants.js';
import { USER_COLUMNS, toUser } from '../accounts/users.js';

function toIssued(row: Selectable<AccessTokensTable>): IssuedToken {
  return {
    id: row.id,
    tokenHash: row.token_hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    scope: row.scope,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    dpopJkt: row.dpop_jkt,
    resource: row.resource,
  };
}

function toRefresh(row: Selectable<RefreshTokensTable>): RefreshToken {
  return { ...toIssued(row), usedAt: row.used_at };
}

export const PLACEHOLDER_TOKEN: NewIssuedToken = { tokenHash: '', grantId: 0, clientId: '', userId: 0, scope: '', createdAt: 0, expiresAt: 0, dpopJkt: '', resource: '' };

/** The columns of a new token, in the order of the compiled inserts' parameters. */
export function tokenValues(token: NewIssuedToken) {
  return {
    token_hash: token.tokenHash,
    grant_id: token.grantId,
    client_id: token.clientId,
    user_id: token.userId,
    scope: token.scope,
    created_at: token.createdAt,
    expires_at: token.expiresAt,
    dpop_jkt: token.dpopJkt ?? null,
    resource: token.resource ?? null,
  };
}

/**
 * The bearer lookup of every API request: one indexed read that joins grant, client and the
 * user's row (which `/me` answers with); `accessBearer` for one token, `accessBearers` for many
 * (see `CompiledQueries.lookup`).
 */
function bearerColumns(db: Kysely<Database>) {
  return db.selectFrom('access_tokens as t')
    .innerJoin('grants as g', 'g.id', 't.grant_id')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('clients as c', 'c.client_id', 't.client_id')
    .select(USER_COLUMNS.map((column) => `u.${column}` as const))
    .select([
      't.token_hash', 't.id as token_id', 't.grant_id', 't.client_id', 't.scope', 't.expires_at',
      't.revoked_at', 't.dpop_jkt', 't.resource', 'g.revoked_at as grant_revoked_at', 'c.status as client_status',
    ]);
}
const accessBearer = (db: Kysely<Database>) => bearerColumns(db).where('t.token_hash', '=', '');
const accessBearers = (db: Kysely<Database>) => bearerColumns(db).where(keyIsAnyOf('t.token_hash'));
const bearerLookup = { one: accessBearer, many: accessBearers, keyOf: (row: { token_hash: string }) => row.token_hash, remember: true } as const;

/** A new token's row, nothing read back: an issuance knows all it needs of the tokens it stores. */
const insertAccessRow = (db: Kysely<Database>) => db.insertInto('access_tokens').values(tokenValues(PLACEHOLDER_TOKEN));
const insertRefreshRow = (db: Kysely<Database>) => db.insertInto('refresh_tokens').values(tokenValues(PLACEHOLDER_TOKEN));
const insertAccess = (db: Kysely<Database>) => insertAccessRow(db).returningAll();
const insertRefresh = (db: Kysely<Database>) => insertRefreshRow(db).returningAll();
const consumeRefresh = (db: QueryCreator<Database>) => db.updateTable('refresh_tokens').set({ used_at: 0 })
  .where('token_hash', '=', '').where('used_at', 'is', null).where('revoked_at', 'is', null).returningAll();
const refreshConsumption = consumedWithGrant(consumeRefresh);
/**
 * One statement: the rotated token's successor and sealed answer are written, and the sealed
 * answer of the token it succeeded (the row naming it as successor) is erased, since it has now
 * been used (INTERFACE section 11). Parameters: id, successor hash, id, sealed answer, id, token hash.
 */
const recordSuccessor = (db: QueryCreator<Database>) => db.updateTable('refresh_tokens').set({
  successor_hash: sql`case when id = ${0} then cast(${''} as text) else successor_hash end`,
  replay_sealed: sql`case when id = ${0} then cast(${null} as text) else null end`,
}).where((eb) => eb.or([eb('id', '=', 0), eb('successor_hash', '=', '')]));
/** Both tokens of an issuance in one statement (PostgreSQL): the access token's columns come first. */
const insertPair = (db: Kysely<Database>) => db
  .with('access', (w) => w.insertInto('access_tokens').values(tokenValues(PLACEHOLDER_TOKEN)))
  .insertInto('refresh_tokens').values(tokenValues(PLACEHOLDER_TOKEN));
/**
 * A rotation's writes after the consuming one, in one statement (PostgreSQL): the succession
 * (`recordSuccessor`'s six parameters), then the access token's columns, then the refresh
 * token's. The statement's parts see one snapshot, so the update cannot touch the row inserted.
 */
const insertPairSucceeding = (db: Kysely<Database>) => db
  .with('succession', () => recordSuccessor(db))
  .with('access', (w) => w.insertInto('access_tokens').values(tokenValues(PLACEHOLDER_TOKEN)))
  .insertInto('refresh_tokens').values(tokenValues(PLACEHOLDER_TOKEN));

const TOKEN_ROW = tokenValues(PLACEHOLDER_TOKEN);
const TOKEN_COLUMNS = Object.keys(TOKEN_ROW) as Array<keyof typeof TOKEN_ROW>;
/** Inserts one token's row (its columns, in `tokenValues`' order) for each row of `live` (PostgreSQL): none when the write before it gives none. */
export const insertTokenIfLive = (table: 'access_tokens' | 'refresh_tokens') => (w: QueryCreator<any>) => w.insertInto(table).columns(TOKEN_COLUMNS)
  .expression((eb: any) => eb.selectFrom('live').select((s: any) => TOKEN_COLUMNS.map((column) => s.val(TOKEN_ROW[column]).as(column))));
/**
 * The "last used" of the grant of each row of `live` (PostgreSQL): its time, then `touchGrant`'s
 * condition (the time again: forward only), then whether it is due. Never on a revoked grant, as
 * `touchGrant`: `live` saw the grant as of the statement's start, and a revocation that held the
 * row meanwhile is waited for, then its row checked again.
 */
export const touchLiveGrant = (w: QueryCreator<any>) => w.updateTable('grants').set({ last_used_at: 0 })
  .where('id', 'in', (eb: any) => eb.selectFrom('live').select('live.grant_id')).where('last_used_at', '<', 0).where(sql<boolean>`${false}::boolean`)
  .where('revoked_at', 'is', null);

const refreshLookup = storedWithGrantByKey<Selectable<RefreshTokensTable>>('refresh_tokens', 'token_hash');

/**
 * The consuming write of a rotation without a successor (the time, the token's hash): it takes the
 * token only while it is unused and unrevoked, its grant unrevoked and its user active (RFC 9700
 * 4.14.2: of racing rotations one; a family's revocation or an account's end committed since the
 * rotation read the token wins).
 */
const consumeIfLive = (w: QueryCreator<any>) => w.updateTable('refresh_tokens').set({ used_at: 0 })
  .where('token_hash', '=', '').where('used_at', 'is', null).where('revoked_at', 'is', null)
  .where((eb) => grantIsLive(eb, 'refresh_tokens.grant_id'));
/**
 * A rotation without a successor in one statement (PostgreSQL): `consumeIfLive`, then the access
 * token's row and the refresh token's, stored only when it took the token; then the grant's last
 * use (`touchLiveGrant`). Answers a row when it rotated.
 */
const rotateInOneWrite: QueryBuilder<{ id: number }> = (db) => (db as unknown as Kysely<any>)
  .with('live', (w) => consumeIfLive(w).returning('grant_id'))
  .with('access', insertTokenIfLive('access_tokens'))
  .with('refresh', (w) => insertTokenIfLive('refresh_tokens')(w).returning('id'))
  .with('touched', touchLiveGrant)
  .selectFrom('refresh').select('id');
const refreshByHash = (db: Kysely<Database>) => db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', '');

function successionParameters(refresh: NewIssuedToken, succeeds: Succession): unknown[] {
  const { tokenId, tokenHash, sealed } = succeeds;
  return [tokenId, refresh.tokenHash, tokenId, sealed, tokenId, tokenHash];
}

export class KyselyTokenStore implements TokenStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async insertAccess(token: NewIssuedToken): Promise<IssuedToken> {
    const row = await this.queries.first(this.db, insertAccess, Object.values(tokenValues(token)));
    return toIssued(row!);
  }

  async insertRefresh(token: NewIssuedToken): Promise<RefreshToken> {
    const row = await this.queries.first(this.db, insertRefresh, Object.values(tokenValues(token)));
    return toRefresh(row!);
  }

  async insertPair(access: NewIssuedToken, refresh: NewIssuedToken, succeeds?: Succession): Promise<void> {
    const tokens = [...Object.values(tokenValues(access)), ...Object.values(tokenValues(refresh))];
    if (this.queries.writesCombine) {
      if (succeeds) await this.queries.execute(this.db, insertPairSucceeding, [...successionParameters(refresh, succeeds), ...tokens]);
      else await this.queries.execute(this.db, insertPair, tokens);
      return;
    }
    // SQLite: a statement each. Reading the rows back (RETURNING) made better-sqlite3 build two row objects nobody used.
    await this.queries.execute(this.db, insertAccessRow, Object.values(tokenValues(access)));
    await this.queries.execute(this.db, insertRefreshRow, Object.values(tokenValues(refresh)));
    if (succeeds) await this.queries.execute(this.db, recordSuccessor, successionParameters(refresh, succeeds));
  }

  async findAccess(tokenHash: string): Promise<IssuedToken | undefined> {
    const row = await this.db.selectFrom('access_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row && toIssued(row);
  }

  async findRefresh(tokenHash: string): Promise<RefreshToken | undefined> {
    const row = await this.queries.first(this.db, refreshByHash, [tokenHash]);
    return row && toRefresh(row);
  }

  async findAccessBearer(tokenHash: string): Promise<BearerRecord | undefined> {
    const row = await this.queries.lookup(this.db, tokenHash, bearerLookup);
    if (!row) return undefined;
    // A deactivated client ends its tokens at once (INTERFACE section 2), like a revoked grant.
    const revokedAt = row.revoked_at ?? row.grant_revoked_at ?? (row.client_status === 'active' ? null : row.expires_at);
    return {
      tokenId: row.token_id,
      user: toUser(row),
      clientId: row.client_id,
      grantId: row.grant_id,
      scope: row.scope,
      expiresAt: row.expires_at,
      revokedAt,
      dpopJkt: row.dpop_jkt,
      resource: row.resource,
    };
  }

  async consumeRefresh(tokenHash: string, now: Instant): Promise<{ token: RefreshToken; granted: GrantWithUser | undefined } | undefined> {
    // One conditional write: of racing rotations only the first changes the row (RFC 9700 4.14.2).
    const consumed = await consumeWithGrant(this.db, this.queries, refreshConsumption, [now, tokenHash]);
    return consumed && { token: toRefresh(consumed.row), granted: consumed.granted };
  }

  rotate<T>(tokenHash: string, now: Instant, how: RefreshRotation<T>): Promise<T | undefined> {
    return how.recordsSuccessor ? this.rotateInTransaction(tokenHash, now, how) : this.rotateAfterRead(tokenHash, now, how);
  }

  /** The consuming write, then the pair made for it, in one transaction (SQLite: committed with the others of its group). */
  private rotateInTransaction<T>(tokenHash: string, now: Instant, how: RefreshRotation<T>): Promise<T | undefined> {
    return this.queries.transaction(this.db, async (trx) => {
      const tokens = new KyselyTokenStore(trx, this.queries);
      const consumed = await tokens.consumeRefresh(tokenHash, now);
      if (!consumed) return undefined;
      how.check(consumed.token, consumed.granted);
      const issuance = await how.issue(consumed.token, consumed.granted!);
      // PostgreSQL reads what committed before each statement: a grant ended while the id_token
      // was signed is seen by reading it again, held, or ends after this commit (and with it the
      // tokens issued). Refused, the consuming write rolls back, as without a replay window.
      if (this.queries.writesCombine) how.check(consumed.token, await new KyselyGrantStore(trx, this.queries).findWithUserHeld(consumed.token.grantId));
      await tokens.insertPair(issuance.access, issuance.refresh, issuance.succeeds);
      if (issuance.touchGrant) await new KyselyGrantStore(trx, this.queries).touch(issuance.access.grantId, now);
      return issuance.answer;
    });
  }

  /**
   * The token, its grant and user read first, the pair made and the id_token signed from that
   * read with no transaction open, then the write that rotates (`consumeAndStore`). On PostgreSQL
   * that is two round trips where a transaction took four, and no row is held locked while the
   * id_token is signed; on SQLite no group holds the one connection while a signature runs on
   * libuv's pool, so signatures run side by side and a group's transactions only write (issue 35
   * item 1). What the read decided of the token's own columns (its client, expiry, DPoP key, scope)
   * and its grant's (the resource) is never written again; what can change since (the token used
   * or revoked, the grant revoked, the account no longer active) the write checks again.
   */
  private async rotateAfterRead<T>(tokenHash: string, now: Instant, how: RefreshRotation<T>): Promise<T | undefined> {
    const found = await this.readForRotation(tokenHash);
    if (found === undefined || found.token.usedAt !== null || found.token.revokedAt !== null) return undefined;
    how.check(found.token, found.granted);
    const issuance = await how.issue(found.token, found.granted!);
    if (issuance.succeeds) throw new Error('a successor is recorded only by a rotation that says so (recordsSuccessor)');
    if (await this.consumeAndStore(tokenHash, now, issuance)) return issuance.answer;
    // Not taken: a racing rotation or a revocation came first (the replay and reuse paths read it),
    // or the grant or the account ended since the read. That is worded as the transaction would
    // word it, from the row read again: the write decided, the reading only words it.
    const again = await this.readForRotation(tokenHash);
    if (again !== undefined && again.token.usedAt === null && again.token.revokedAt === null) how.check(again.token, again.granted);
    return undefined;
  }

  /**
   * A refresh token with its grant and user, as a rotation reads them before it writes: on
   * PostgreSQL one lookup, sent with the other token requests of the turn; on SQLite the token,
   * then its grant (each statement runs at once when no transaction holds the connection).
   */
  private async readForRotation(tokenHash: string): Promise<{ token: RefreshToken; granted: GrantWithUser | undefined } | undefined> {
    if (this.queries.writesCombine) {
      const found = await this.queries.lookup(this.db, tokenHash, refreshLookup);
      return found && { token: toRefresh(found.stored), granted: toGrantWithUser(found) };
    }
    const token = await this.findRefresh(tokenHash);
    return token && { token, granted: await new KyselyGrantStore(this.db, this.queries).findWithUser(token.grantId) };
  }

  /**
   * `consumeIfLive`, and when it took the token, the new pair and the grant's last use: on
   * PostgreSQL one statement (`rotateInOneWrite`) committed alone; on SQLite a transaction,
   * committed with the others of its group. Whether it rotated.
   */
  private async consumeAndStore(tokenHash: string, now: Instant, issuance: RotationIssuance<unknown>): Promise<boolean> {
    if (this.queries.writesCombine) {
      // Run again as PostgreSQL's deadlock victim, as a transaction would be: an account's deletion holds
      // the grant this write waits to mark used, then erases it, and so wants the token this write took.
      const written = await aloneRetried(() => this.queries.first(this.db, rotateInOneWrite, [
        now, tokenHash, ...Object.values(tokenValues(issuance.access)), ...Object.values(tokenValues(issuance.refresh)), now, now, issuance.touchGrant,
      ]));
      return written !== undefined;
    }
    return this.queries.transaction(this.db, async (trx) => {
      const taken = await this.queries.execute(trx, consumeIfLive, [now, tokenHash]);
      if (taken.numAffectedRows !== 1n) return false;
      await new KyselyTokenStore(trx, this.queries).insertPair(issuance.access, issuance.refresh);
      if (issuance.touchGrant) await new KyselyGrantStore(trx, this.queries).touch(issuance.access.grantId, now);
      return true;
    });
  }

  async findReplay(tokenHash: string): Promise<ReplayCandidate | undefined> {
    const row = await this.db.selectFrom('refresh_tokens as o')
      .leftJoin('refresh_tokens as s', 's.token_hash', 'o.successor_hash')
      .selectAll('o')
      .select(['s.id as successor_id', 's.used_at as successor_used_at', 's.revoked_at as successor_revoked_at'])
      .where('o.token_hash', '=', tokenHash).executeTakeFirst();
    if (!row) return undefined;
    return {
      token: toRefresh(row),
      sealed: row.replay_sealed,
      successor: row.successor_id === null ? undefined : { usedAt: row.successor_used_at, revokedAt: row.successor_revoked_at },
    };
  }

  async revokeAccess(tokenHash: string, clientId: string, now: Instant): Promise<{ userId: number; grantId: number } | undefined> {
    const row = await this.db.updateTable('access_tokens').set({ revoked_at: now })
      .where('token_hash', '=', tokenHash).where('client_id', '=', clientId).where('revoked_at', 'is', null).where('expires_at', '>', now)
      .where((eb) => grantIsLive(eb, 'access_tokens.grant_id'))
      .returning(['user_id', 'grant_id']).executeTakeFirst();
    return row && { userId: row.user_id, grantId: row.grant_id };
  }

  async revokeByGrant(grantId: number, now: Instant): Promise<number> {
    if (this.queries.writesCombine) {
      // PostgreSQL: the family's refresh tokens are taken newest first, the order a rotation takes
      // them in (the token it consumes, then its predecessor, whose sealed answer it erases), so a
      // revocation racing a rotation waits for it instead of deadlocking with it (which the scan
      // order of a plain UPDATE allows), and the UPDATE below, a statement of its own, sees the
      // successor that rotation committed meanwhile and ends it too.
      await this.db.selectFrom('refresh_tokens').select('id')
        .where('grant_id', '=', grantId).where('revoked_at', 'is', null).orderBy('id', 'desc').forUpdate().execute();
    }
    const [access, refresh] = await Promise.all([
      this.db.updateTable('access_tokens').set({ revoked_at: now })
        .where('grant_id', '=', grantId).where('revoked_at', 'is', null).executeTakeFirst(),
      this.db.updateTable('refresh_tokens').set({ revoked_at: now })
        .where('grant_id', '=', grantId).where('revoked_at', 'is', null).executeTakeFirst(),
    ]);
    return Number(access.numUpdatedRows) + Number(refresh.numUpdatedRows);
  }
}
