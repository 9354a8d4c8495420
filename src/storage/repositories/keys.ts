import type { Kysely, Selectable } from 'kysely';
import type { IdTokenAlg, KeyStore, NewSigningKey, SigningKey } from '../../core/ports.js';
import type { Instant } from '../../core/time.js';
import type { Database, SigningKeysTable } from '../schema.js';

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

  async replacePrivateJwk(kid: string, expected: string, replacement: string): Promise<boolean> {
    const result = await this.db.updateTable('signing_keys').set({ private_jwk: replacement })
      .where('kid', '=', kid).where('private_jwk', '=', expected).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
