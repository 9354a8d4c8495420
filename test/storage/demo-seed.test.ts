/** The demo's seed (`src/demo.ts`): all of it or none, and only where its condition holds. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { ensureSigningKeys } from '../../src/core/oidc/keys.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import type { Stores } from '../../src/core/stores.js';
import { type DemoCredentials, seedDemo } from '../../src/demo.js';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { createStores } from '../../src/storage/stores.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';

const baseUrl = 'http://localhost:3000';

forEachDatabase('the demo\'s seed', (database) => {
  let handle: DatabaseHandle;
  let stores: Stores;
  const clock = new TestClock();
  before(async () => {
    handle = openDatabase(database.target);
    await migrateToLatest(handle.db);
    stores = createStores(handle.db, handle.queries);
  });
  after(() => handle.close());

  const count = async (table: 'users' | 'posts' | 'clients') => Number((await handle.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  test('a seed that fails at its last step (its credentials not kept) leaves nothing, and the next seeds the demo whole', async () => {
    const diskFull = () => { throw new Error('ENOSPC: no space left on device'); };
    await assert.rejects(seedDemo(stores, clock, { baseUrl, when: 'new database', keep: diskFull }), /ENOSPC/);
    assert.deepEqual([await count('users'), await count('posts'), await count('clients')], [0, 0, 0]);

    let kept: DemoCredentials | undefined;
    const created = await seedDemo(stores, clock, { baseUrl, when: 'new database', keep: (credentials) => { kept = credentials; } });
    assert.ok(created);
    assert.deepEqual(kept, created, 'what is kept is what was made');
    assert.equal(await count('users'), 6);
    assert.equal(await count('clients'), 2);
    assert.equal(await seedDemo(stores, clock, { baseUrl, when: 'new database' }), undefined, 'a database with accounts is not seeded again');
  });

  test('a start\'s seed ("new database") adds nothing to a database a start has prepared, nor beside an operator\'s app or account; `svc demo`\'s ("no demo user") adds the demo', async () => {
    await handle.db.deleteFrom('clients').execute();
    await handle.db.deleteFrom('users').execute();
    // A start with DEMO=0 (or one whose accounts were all removed since) made its signing keys.
    await ensureSigningKeys(stores, clock, undefined);
    assert.equal(await seedDemo(stores, clock, { baseUrl, when: 'new database' }), undefined);
    assert.equal(await count('users'), 0);
    await handle.db.deleteFrom('signing_keys').execute();
    // An app the operator registered before the first start, with no owner.
    await registerClient(stores, clock, { name: 'Ops App', type: 'confidential', redirectUris: ['https://app.example/callback'] });
    assert.equal(await seedDemo(stores, clock, { baseUrl, when: 'new database' }), undefined);
    assert.equal(await count('users'), 0);
    await handle.db.deleteFrom('clients').execute();
    await createAccount(stores, clock, { username: 'admin', password: 'the admin password' });
    assert.equal(await seedDemo(stores, clock, { baseUrl, when: 'new database' }), undefined);
    assert.equal(await count('users'), 1);
    assert.ok(await seedDemo(stores, clock, { baseUrl, when: 'no demo user' }));
    assert.equal(await count('users'), 7);
    assert.equal(await seedDemo(stores, clock, { baseUrl, when: 'no demo user' }), undefined);
  });
});
