import type { Kysely } from 'kysely';
import type { TokenKind } from '../../../core/credentials/formats.js';
import type { LeakRevocation, LeakedCredentialStore, LeakedHashes, RevokedLeak } from '../../../core/credentials/ports.js';
import type { Instant } from '../../../core/time.js';
import { LOOKUP_BATCH_KEYS } from '../../lookup-batch.js';
import type { Database } from '../../schema.js';

/** `list` in slices of at most `LOOKUP_BATCH_KEYS`, the most keys one batched lookup sends. */
function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < list.length; start += LOOKUP_BATCH_KEYS) out.push(list.slice(start, start + LOOKUP_BATCH_KEYS));
  return out;
}

/** Runs `query` once per slice of `keys` and gathers the rows. */
async function perChunk<K, R>(keys: readonly K[], query: (chunk: K[]) => Promise<R[]>): Promise<R[]> {
  const rows: R[] = [];
  for (const chunk of chunks(keys)) rows.push(...await query(chunk));
  return rows;
}

/**
 * Leak reports (INTERFACE section 11): every lookup is by the hash of the reported string, a
 * slice of up to `LOOKUP_BATCH_KEYS` hashes per statement, so a report of 1,000 strings makes a
 * handful of statements whatever they name.
 */
export class KyselyLeakedCredentialStore implements LeakedCredentialStore {
  constructor(private readonly db: Kysely<Database>) {}

  async known(hashes: LeakedHashes): Promise<Set<string>> {
    const found = new Set<string>();
    const tokenTables: Array<[TokenKind, 'access_tokens' | 'refresh_tokens' | 'personal_tokens']> = [
      ['access', 'access_tokens'], ['refresh', 'refresh_tokens'], ['personal', 'personal_tokens'],
    ];
    for (const [kind, table] of tokenTables) {
      const rows = await perChunk(hashes[kind], (chunk) => this.db.selectFrom(table).select('token_hash').where('token_hash', 'in', chunk).execute());
      for (const row of rows) found.add(row.token_hash);
    }
    const clients = await perChunk(hashes.clientSecret, (chunk) => this.db.selectFrom('clients').select(['secret_hash', 'previous_secret_hash'])
      .where((eb) => eb.or([eb('secret_hash', 'in', chunk), eb('previous_secret_hash', 'in', chunk)])).execute());
    const reported = new Set(hashes.clientSecret);
    for (const row of clients) {
      for (const hash of [row.secret_hash, row.previous_secret_hash]) if (hash !== null && reported.has(hash)) found.add(hash);
    }
    return found;
  }

  async revoke(hashes: LeakedHashes, now: Instant, replayOpenSince: Instant): Promise<LeakRevocation> {
    const revoked: RevokedLeak[] = [];

    // Rows are taken clients first, then tokens, then grants: the order of `deactivateClient` and `revokeGrant`.
    // A rotated-out secret that still works (`rotateClientSecret`) is as live as the current one.
    const reportedSecrets = new Set(hashes.clientSecret);
    const clients = await perChunk(hashes.clientSecret, (chunk) => this.db.updateTable('clients')
      .set({ status: 'deactivated', updated_at: now })
      .where((eb) => eb.or([
        eb('secret_hash', 'in', chunk),
        eb.and([eb('previous_secret_hash', 'in', chunk), eb('previous_secret_expires_at', '>', now)]),
      ]))
      .where('status', '=', 'active')
      .returning(['client_id', 'owner_id', 'name', 'secret_hash', 'previous_secret_hash']).execute());
    for (const c of clients) {
      const tokenHash = c.secret_hash !== null && reportedSecrets.has(c.secret_hash) ? c.secret_hash : c.previous_secret_hash!;
      revoked.push({ kind: 'clientSecret', tokenHash, clientId: c.client_id, ownerId: c.owner_id, clientName: c.name });
    }

    const access = await perChunk(hashes.access, (chunk) => this.db.updateTable('access_tokens').set({ revoked_at: now })
      .where('token_hash', 'in', chunk).where('revoked_at', 'is', null).where('expires_at', '>', now)
      .returning(['id', 'token_hash', 'user_id', 'client_id', 'grant_id']).execute());
    // A rotated token whose replay answer is still sealed and whose window is open yields its
    // successors to whoever presents it (src/core/oauth/tokens/replay.ts): it is as live as an unused one.
    const refresh = await perChunk(hashes.refresh, (chunk) => this.db.updateTable('refresh_tokens').set({ revoked_at: now })
      .where('token_hash', 'in', chunk).where('revoked_at', 'is', null).where('expires_at', '>', now)
      .where((eb) => eb.or([
        eb('used_at', 'is', null),
        eb.and([eb('used_at', '>', replayOpenSince), eb('replay_sealed', 'is not', null)]),
      ]))
      .returning(['id', 'token_hash', 'user_id', 'client_id', 'grant_id']).execute());

    const personal = await perChunk(hashes.personal, (chunk) => this.db.updateTable('personal_tokens').set({ revoked_at: now })
      .where('token_hash', 'in', chunk).where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .returning(['id', 'token_hash', 'user_id', 'name']).execute());
    for (const p of personal) revoked.push({ kind: 'personal', tokenHash: p.token_hash, tokenId: p.id, userId: p.user_id, name: p.name });

    // A leaked refresh token ends its family: the grant's tokens first, then the grant (the order of `revokeGrant`).
    const grantIds = [...new Set(refresh.map((r) => r.grant_id))];
    for (const table of ['access_tokens', 'refresh_tokens'] as const) {
      await perChunk(grantIds, (chunk) => this.db.updateTable(table).set({ revoked_at: now })
        .where('grant_id', 'in', chunk).where('revoked_at', 'is', null).execute().then(() => []));
    }
    await perChunk(clients.map((c) => c.client_id), (chunk) => this.db.updateTable('grants')
      .set({ revoked_at: now, revoked_reason: 'client_deactivated' })
      .where('client_id', 'in', chunk).where('revoked_at', 'is', null).execute().then(() => []));
    const grants = await perChunk(grantIds, (chunk) => this.db.updateTable('grants')
      .set({ revoked_at: now, revoked_reason: 'reported_leaked' })
      .where('id', 'in', chunk).where('revoked_at', 'is', null)
      .returning(['client_id', 'user_id', 'sid']).execute());

    const clientIds = [...new Set([...access, ...refresh].map((t) => t.client_id))];
    const names = new Map((await perChunk(clientIds, (chunk) => this.db.selectFrom('clients').select(['client_id', 'name'])
      .where('client_id', 'in', chunk).execute())).map((c) => [c.client_id, c.name]));
    for (const [kind, rows] of [['access', access], ['refresh', refresh]] as const) {
      for (const t of rows) {
        revoked.push({
          kind, tokenHash: t.token_hash, tokenId: t.id, userId: t.user_id, clientId: t.client_id,
          clientName: names.get(t.client_id) ?? t.client_id, grantId: t.grant_id,
        });
      }
    }

    return { revoked, grants: grants.map((g) => ({ clientId: g.client_id, userId: g.user_id, sid: g.sid })) };
  }
}
