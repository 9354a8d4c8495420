import type { Kysely } from 'kysely';
import type { IdTokenAlg, KeyStore, SigningKey } from '../../core/ports.js';
import type { Instant } from '../../core/time.js';
import type { Database } from '../schema.js';

export class KyselyKeyStore implements KeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(key: Omit<SigningKey, 'retiredAt'>): Promise<void> {
    await this.db.insertInto('signing_keys').values({
      kid: key.kid,
      alg: key.alg,
      public_jwk: key.publicJwk,
      private_jwk: key.privateJwk,
      created_at: key.createdAt,
    }).execute();
  }

  async listUsable(retiredAfter: Instant): Promise<SigningKey[]> {
    const rows = await this.db.selectFrom('signing_keys').selectAll()
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredAfter)]))
      .orderBy('created_at', 'desc').orderBy('kid').execute();
    return rows.map((r) => ({
      kid: r.kid,
      alg: r.alg as IdTokenAlg,
      publicJwk: r.public_jwk,
      privateJwk: r.private_jwk,
      createdAt: r.created_at,
      retiredAt: r.retired_at,
    }));
  }

  async retire(alg: IdTokenAlg, now: Instant): Promise<number> {
    const result = await this.db.updateTable('signing_keys').set({ retired_at: now })
      .where('alg', '=', alg).where('retired_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
