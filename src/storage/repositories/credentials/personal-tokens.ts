import type { Kysely, Selectable } from 'kysely';
import type { PersonalToken, PersonalTokenStore } from '../../../core/credentials/ports.js';
import type { BearerRecord } from '../../../core/oauth/ports.js';
import type { Instant } from '../../../core/time.js';
import { type CompiledQueries, keyIsAnyOf } from '../../database.js';
import type { Database, PersonalTokensTable } from '../../schema.js';
import { USER_COLUMNS, toUser } from '../accounts/users.js';

function toPersonalToken(row: Omit<Selectable<PersonalTokensTable>, 'token_hash'>): PersonalToken {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    scope: row.scope,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

const COLUMNS = ['id', 'user_id', 'name', 'scope', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'] as const;

/** The bearer lookup of a personal token: one indexed read joining the user's row (see `CompiledQueries.lookup`). */
function bearerColumns(db: Kysely<Database>) {
  return db.selectFrom('personal_tokens as t').innerJoin('users as u', 'u.id', 't.user_id')
    .select(USER_COLUMNS.map((column) => `u.${column}` as const))
    .select(['t.token_hash', 't.id as token_id', 't.scope', 't.expires_at', 't.revoked_at']);
}
const personalBearer = (db: Kysely<Database>) => bearerColumns(db).where('t.token_hash', '=', '');
const personalBearers = (db: Kysely<Database>) => bearerColumns(db).where(keyIsAnyOf('t.token_hash'));
const bearerLookup = { one: personalBearer, many: personalBearers, keyOf: (row: { token_hash: string }) => row.token_hash, remember: true } as const;

/** A personal token's "last used" moved to a time (`[now, id, now]`), forward only and never once revoked, as `touchGrant`: never used, or used before it. */
const touchPersonal = (db: Kysely<Database>) => db.updateTable('personal_tokens').set({ last_used_at: 0 }).where('id', '=', 0)
  .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', 0)])).where('revoked_at', 'is', null);

export class KyselyPersonalTokenStore implements PersonalTokenStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async insert(token: { userId: number; name: string; tokenHash: string; scope: string; expiresAt: Instant | null }, now: Instant): Promise<PersonalToken> {
    const row = await this.db.insertInto('personal_tokens').values({
      user_id: token.userId,
      name: token.name,
      token_hash: token.tokenHash,
      scope: token.scope,
      created_at: now,
      expires_at: token.expiresAt,
    }).returning(COLUMNS).executeTakeFirstOrThrow();
    return toPersonalToken(row);
  }

  async listForUser(userId: number): Promise<PersonalToken[]> {
    const rows = await this.db.selectFrom('personal_tokens').select(COLUMNS).where('user_id', '=', userId)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map(toPersonalToken);
  }

  async countLive(userId: number, now: Instant): Promise<number> {
    const row = await this.db.selectFrom('personal_tokens').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId).where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)])).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async createdSince(userId: number, since: Instant, limit: number): Promise<Instant[]> {
    const rows = await this.db.selectFrom('personal_tokens').select('created_at').where('user_id', '=', userId).where('created_at', '>', since)
      .orderBy('created_at', 'desc').limit(limit).execute();
    return rows.map((row) => Number(row.created_at));
  }

  async findBearer(tokenHash: string): Promise<BearerRecord | undefined> {
    const row = await this.queries.lookup(this.db, tokenHash, bearerLookup);
    return row && {
      tokenId: row.token_id,
      user: toUser(row),
      clientId: null,
      grantId: null,
      scope: row.scope,
      expiresAt: row.expires_at,
      revokedAt: row.revoked_at,
      dpopJkt: null,
      resource: null,
    };
  }

  async revoke(id: number, userId: number, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('personal_tokens').set({ revoked_at: now })
      .where('id', '=', id).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async revokeForUser(userId: number, now: Instant): Promise<number> {
    const result = await this.db.updateTable('personal_tokens').set({ revoked_at: now })
      .where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async eraseForUser(userId: number): Promise<void> {
    await this.db.deleteFrom('personal_tokens').where('user_id', '=', userId).execute();
  }

  async touch(id: number, now: Instant): Promise<void> {
    await this.queries.executeQuiet(this.db, touchPersonal, [now, id, now]);
  }
}
