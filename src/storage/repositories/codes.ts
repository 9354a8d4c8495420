import type { Kysely, Selectable } from 'kysely';
import type { AuthorizationCode, CodeStore } from '../../core/ports.js';
import type { Instant } from '../../core/time.js';
import type { AuthorizationCodesTable, Database } from '../schema.js';

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
  };
}

export class KyselyCodeStore implements CodeStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(code: Omit<AuthorizationCode, 'usedAt'>): Promise<void> {
    await this.db.insertInto('authorization_codes').values({
      code_hash: code.codeHash,
      grant_id: code.grantId,
      client_id: code.clientId,
      user_id: code.userId,
      redirect_uri: code.redirectUri,
      scope: code.scope,
      code_challenge: code.codeChallenge,
      nonce: code.nonce,
      auth_time: code.authTime,
      created_at: code.createdAt,
      expires_at: code.expiresAt,
    }).execute();
  }

  async consume(codeHash: string, now: Instant): Promise<AuthorizationCode | undefined> {
    // One conditional write: the row changes only for the first caller (RFC 6749 4.1.2).
    const row = await this.db.updateTable('authorization_codes').set({ used_at: now })
      .where('code_hash', '=', codeHash).where('used_at', 'is', null)
      .returningAll().executeTakeFirst();
    return row && toCode(row);
  }

  async find(codeHash: string): Promise<AuthorizationCode | undefined> {
    const row = await this.db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    return row && toCode(row);
  }
}
