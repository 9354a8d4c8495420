import type { Kysely, Selectable } from 'kysely';
import type { PushedAuthorizationRequest, PushedAuthorizationRequestStore } from '../../../core/oauth/ports.js';
import type { Instant } from '../../../core/time.js';
import type { Database, PushedAuthorizationRequestsTable } from '../../schema.js';

function toRequest(row: Selectable<PushedAuthorizationRequestsTable>): PushedAuthorizationRequest {
  return {
    requestHash: row.request_hash,
    clientId: row.client_id,
    parameters: JSON.parse(row.parameters) as Array<[string, string]>,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** Pushed authorization requests (RFC 9126): stored by hash, consumed once. */
export class KyselyPushedRequestStore implements PushedAuthorizationRequestStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(request: PushedAuthorizationRequest): Promise<void> {
    await this.db.insertInto('pushed_authorization_requests').values({
      request_hash: request.requestHash, client_id: request.clientId, parameters: JSON.stringify(request.parameters),
      created_at: request.createdAt, expires_at: request.expiresAt, used_at: null,
    }).execute();
  }

  async consume(requestHash: string, clientId: string, now: Instant, openUntil: Instant): Promise<PushedAuthorizationRequest | undefined> {
    // One conditional write (RFC 9126 4: single use): only the first caller changes the row.
    const row = await this.db.updateTable('pushed_authorization_requests').set({ used_at: now, expires_at: openUntil })
      .where('request_hash', '=', requestHash).where('client_id', '=', clientId)
      .where('used_at', 'is', null).where('expires_at', '>', now)
      .returningAll().executeTakeFirst();
    return row && toRequest(row);
  }

  async complete(requestHash: string, now: Instant): Promise<boolean> {
    const result = await this.db.deleteFrom('pushed_authorization_requests')
      .where('request_hash', '=', requestHash).where('used_at', 'is not', null).where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async findOpen(requestHash: string, clientId: string, now: Instant): Promise<PushedAuthorizationRequest | undefined> {
    const row = await this.db.selectFrom('pushed_authorization_requests').selectAll()
      .where('request_hash', '=', requestHash).where('client_id', '=', clientId)
      .where('used_at', 'is not', null).where('expires_at', '>', now)
      .executeTakeFirst();
    return row && toRequest(row);
  }
}
