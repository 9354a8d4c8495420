import type { Kysely } from 'kysely';
import type { DpopReplayStore } from '../../core/ports.js';
import type { Instant } from '../../core/time.js';
import type { Database } from '../schema.js';

/**
 * The replay cache of DPoP proofs in the database (without REDIS_URL, and when Redis is away):
 * one `INSERT … ON CONFLICT DO NOTHING` on the key, so of racing requests on any instances
 * exactly one inserts. An expired row is taken over by one conditional write; the janitor
 * deletes the rest.
 */
export class KyselyDpopProofStore implements DpopReplayStore {
  constructor(private readonly db: Kysely<Database>) {}

  async claim(key: string, expiresAt: Instant, now: Instant): Promise<boolean> {
    const result = await this.db.insertInto('dpop_proofs').values({ key, expires_at: expiresAt })
      .onConflict((oc) => oc.column('key').doUpdateSet({ expires_at: expiresAt }).where('dpop_proofs.expires_at', '<=', now))
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}
