import type { Kysely } from 'kysely';
import type { ServerSecretStore } from '../../../core/credentials/ports.js';
import type { Instant } from '../../../core/time.js';
import type { Database } from '../../schema.js';

export class KyselyServerSecretStore implements ServerSecretStore {
  constructor(private readonly db: Kysely<Database>) {}

  async getOrCreate(name: string, fresh: string, now: Instant): Promise<string> {
    // Instances starting together may both offer a value: the first insert wins, every one reads it.
    await this.db.insertInto('server_secrets').values({ name, value: fresh, created_at: now })
      .onConflict((oc) => oc.column('name').doNothing()).execute();
    const row = await this.db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
    return row.value;
  }
}
