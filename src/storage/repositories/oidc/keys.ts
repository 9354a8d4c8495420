import { type Kysely, PostgresAdapter, type Selectable, sql } from 'kysely';
import type { IdTokenAlg, KeyStore, NewSigningKey, SigningKey } from '../../../core/oidc/ports.js';
import type { Instant } from '../../../core/time.js';
import { inTransaction } from '../../database.js';
import type { Database, SigningKeysTable } from '../../schema.js';

/**
 * The PostgreSQL advisory lock (transaction-level) under which a start creates the first keys:
 * READ COMMITTED lets two `INSERT … WHERE NOT EXISTS` both see no key, so the instances take
 * turns, and the second sees the first's key. (`SCHEMA_CHANGE_LOCK` in migrate.ts is 73052026.)
 */
export const FIRST_KEYS_LOCK = 7_305_2027;

function toKey(r: Selectable<SigningKeysTable>): SigningKey {
  return {
    kid: r.kid,
    alg: r.alg as IdTokenAlg,
    publicJwk: r.public_jwk,
    privateJwk: r.private_jwk,
    createdAt: r.created_at,
    activeAt: r.active_at,
    retiredAt: r.retired_at,
    withdrawnAt: r.withdrawn_at,
  };
}

export class KyselyKeyStore implements KeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(key: NewSigningKey): Promise<void> {
    await this.db.insertInto('signing_keys').values({
      kid: key.kid,
      alg: key.alg,
      public_jwk: key.publicJwk,
      private_jwk: key.privateJwk,
      created_at: key.createdAt,
      active_at: key.activeAt,
    }).execute();
  }

  /**
   * One conditional `INSERT … SELECT … WHERE NOT EXISTS`. SQLite runs a writing statement under the
   * database's one write lock, taken before it reads, so that alone is atomic there (and, on its
   * own, holds the lock no longer than the statement). PostgreSQL needs the advisory lock too,
   * held until the transaction ends.
   */
  async insertUnlessLive(key: NewSigningKey, at: Instant): Promise<boolean> {
    if (!(this.db.getExecutor().adapter instanceof PostgresAdapter)) return insertUnlessLive(this.db, key, at);
    return inTransaction(this.db, async (trx) => {
      await sql`select pg_advisory_xact_lock(${FIRST_KEYS_LOCK})`.execute(trx);
      return insertUnlessLive(trx, key, at);
    });
  }

  async listAll(): Promise<SigningKey[]> {
    const rows = await this.db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid').execute();
    return rows.map(toKey);
  }

  async listPublished(at: Instant): Promise<SigningKey[]> {
    const rows = await this.db.selectFrom('signing_keys').selectAll()
      .where((eb) => eb.or([eb('withdrawn_at', 'is', null), eb('withdrawn_at', '>', at)]))
      .orderBy('created_at', 'desc').orderBy('kid').execute();
    return rows.map(toKey);
  }

  async retire(alg: IdTokenAlg, at: Instant, withdrawnAt: Instant): Promise<number> {
    const result = await this.db.updateTable('signing_keys').set({ retired_at: at, withdrawn_at: withdrawnAt })
      .where('alg', '=', alg)
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', at)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async withdraw(alg: IdTokenAlg, at: Instant): Promise<number> {
    const result = await this.db.updateTable('signing_keys').set({ withdrawn_at: at })
      .where('alg', '=', alg)
      .where((eb) => eb.or([eb('withdrawn_at', 'is', null), eb('withdrawn_at', '>', at)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}

async function insertUnlessLive(db: Kysely<Database>, key: NewSigningKey, at: Instant): Promise<boolean> {
  const live = db.selectFrom('signing_keys').select('kid')
    .where('alg', '=', key.alg).where('retired_at', 'is', null)
    .where((eb) => eb.or([eb('withdrawn_at', 'is', null), eb('withdrawn_at', '>', at)]));
  // Typed by cast: PostgreSQL types a bare parameter in a select list as text.
  const row = db.selectNoFrom([
    sql<string>`cast(${key.kid} as text)`.as('kid'),
    sql<string>`cast(${key.alg} as text)`.as('alg'),
    sql<string>`cast(${key.publicJwk} as text)`.as('public_jwk'),
    sql<string>`cast(${key.privateJwk} as text)`.as('private_jwk'),
    sql<number>`cast(${key.createdAt} as bigint)`.as('created_at'),
    sql<number>`cast(${key.activeAt} as bigint)`.as('active_at'),
  ]).where(({ not, exists }) => not(exists(live)));
  const result = await db.insertInto('signing_keys')
    .columns(['kid', 'alg', 'public_jwk', 'private_jwk', 'created_at', 'active_at'])
    .expression(row)
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
