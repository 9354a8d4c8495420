import type { Kysely } from 'kysely';
import type { DpopReplayStore } from '../../../core/oauth/ports.js';
import type { Instant } from '../../../core/time.js';
import type { CompiledQueries } from '../../database.js';
import type { Database } from '../../schema.js';

/** Parameters: the key, its expiry, the expiry again (a takeover), now. */
const claimKey = (db: Kysely<Database>) => db.insertInto('dpop_proofs').values({ key: '', expires_at: 0 })
  .onConflict((oc) => oc.column('key').doUpdateSet({ expires_at: 0 }).where('dpop_proofs.expires_at', '<=', 0));

/**
 * The replay cache of DPoP proofs in the database (without REDIS_URL, and when Redis is away):
 * one `INSERT … ON CONFLICT DO UPDATE … WHERE` the stored row has expired, so of racing
 * requests on any instances exactly one inserts or takes an expired row over, in one conditional
 * write; the janitor deletes the rest. No remembered read selects this table, so on SQLite the
 * write leaves the remembered bearer rows standing (a DPoP request writes once;
 * docs/performance.md).
 */
export class KyselyDpopProofStore implements DpopReplayStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async claim(key: string, expiresAt: Instant, now: Instant): Promise<boolean> {
    const result = await this.queries.executeQuiet(this.db, claimKey, [key, expiresAt, expiresAt, now]);
    return Number(result.numAffectedRows ?? 0) === 1;
  }
}
