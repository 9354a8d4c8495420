/**
 * PostgreSQL keeps one plan for the lookups a code flow makes (`CompiledQueries.lookup`; decision
 * 58 in docs/performance.md): a key alone in its turn goes as the lookup's `one` statement, which
 * the server plans once per connection, not as `many` with an array of one key, which it planned
 * anew at every execution for the clients' table (an array's elements are counted when planning,
 * so its generic plan never looked cheaper). Several keys of one turn still go as one statement,
 * each answered with its own row.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import type { Stores } from '../../src/core/stores.js';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { createStores } from '../../src/storage/stores.js';
import { unique } from '../oauth/helpers.js';
import { onPostgres } from '../support/databases.js';

const T0 = Date.UTC(2026, 10, 29, 0, 0, 0);

onPostgres('lookups planned once', (database) => {
  let handle: DatabaseHandle;
  let stores: Stores;
  before(async () => {
    // One connection: every statement below is prepared, planned and counted on it.
    handle = openDatabase(database.target, { poolSize: 1 });
    await migrateToLatest(handle.db);
    stores = createStores(handle.db, handle.queries);
  });
  after(() => handle.close());

  const newClient = () => stores.clients.create({
    clientId: unique('client'), name: 'App', description: '', homepageUrl: '', ownerId: null, type: 'public',
    redirectUris: ['https://app.example/cb'], allowedScopes: ['profile:read'], secretHash: null, idTokenAlg: 'RS256',
  }, T0);

  /** The plans PostgreSQL made for the prepared statements reading `table`, on the one connection. */
  async function plansOf(table: string): Promise<Array<{ statement: string; generic: number; custom: number }>> {
    const { rows } = await sql<{ statement: string; generic: string; custom: string }>`
      select statement, generic_plans as generic, custom_plans as custom from pg_prepared_statements where statement like ${`select % from "${table}"%`}`
      .execute(handle.db);
    return rows.map((row) => ({ statement: row.statement, generic: Number(row.generic), custom: Number(row.custom) }));
  }

  test('a client looked up alone, turn after turn, is read by a statement PostgreSQL keeps one plan for', async () => {
    const client = await newClient();
    for (let i = 0; i < 12; i++) assert.equal((await stores.clients.findById(client.clientId))?.clientId, client.clientId);
    const plans = await plansOf('clients');
    assert.ok(plans.length > 0, 'the lookups were prepared statements');
    for (const plan of plans) {
      assert.ok(plan.custom <= 5 && plan.generic >= 7, `planned anew at each execution: ${JSON.stringify(plan)}`);
    }
  });

  test('clients looked up in one turn come from one statement, each with its own row, an unknown one none', async () => {
    const [a, b] = [await newClient(), await newClient()];
    const found = await Promise.all([a.clientId, 'client-unknown', b.clientId, a.clientId].map((id) => stores.clients.findById(id)));
    assert.deepEqual(found.map((client) => client?.clientId), [a.clientId, undefined, b.clientId, a.clientId]);
    const alone = await stores.clients.findById(b.clientId);
    assert.equal(alone?.clientId, b.clientId);
    assert.equal(await stores.clients.findById('client-unknown-alone'), undefined);
  });
});
