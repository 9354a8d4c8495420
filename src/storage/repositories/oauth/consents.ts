import type { Kysely, Selectable } from 'kysely';
import type { Consent, ConsentStore } from '../../../core/oauth/ports.js';
import type { Instant } from '../../../core/time.js';
import type { CompiledQueries } from '../../database.js';
import type { ConsentsTable, Database } from '../../schema.js';

function toConsent(row: Selectable<ConsentsTable>): Consent {
  return { userId: row.user_id, clientId: row.client_id, scope: row.scope, createdAt: row.created_at, updatedAt: row.updated_at };
}

const findConsent = (db: Kysely<Database>) => db.selectFrom('consents').selectAll()
  .where('user_id', '=', 0).where('client_id', '=', '');
const saveConsent = (db: Kysely<Database>) => db.insertInto('consents')
  .values({ user_id: 0, client_id: '', scope: '', created_at: 0, updated_at: 0 })
  .onConflict((oc) => oc.columns(['user_id', 'client_id']).doUpdateSet({ scope: '', updated_at: 0 }));

export class KyselyConsentStore implements ConsentStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async find(userId: number, clientId: string): Promise<Consent | undefined> {
    const row = await this.queries.first(this.db, findConsent, [userId, clientId]);
    return row && toConsent(row);
  }

  async save(userId: number, clientId: string, scope: string, now: Instant): Promise<void> {
    await this.queries.execute(this.db, saveConsent, [userId, clientId, scope, now, now, scope, now]);
  }

  async remove(userId: number, clientId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('consents')
      .where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async removeForUser(userId: number): Promise<number> {
    const result = await this.db.deleteFrom('consents').where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async listForUser(userId: number): Promise<Consent[]> {
    const rows = await this.db.selectFrom('consents').selectAll().where('user_id', '=', userId)
      .orderBy('created_at').execute();
    return rows.map(toConsent);
  }
}
