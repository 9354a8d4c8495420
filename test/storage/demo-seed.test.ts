/** The demo's seed (`src/demo.ts`): all of it or none, and only where its condition holds. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { ensureSigningKeys } from '../../src/core/oidc/keys.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import type { Stores } from '../../src/core/stores.js';
import { type DemoCredentials, moveDemoApp, seedDemo } from '../../src/demo.js';
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

  /** A database with only the demo, seeded at `baseUrl`: its credentials as kept. */
  async function onlyTheDemo(): Promise<DemoCredentials> {
    await handle.db.deleteFrom('clients').execute();
    await handle.db.deleteFrom('users').execute();
    return (await seedDemo(stores, clock, { baseUrl, when: 'no demo user' }))!;
  }

  const addressesOf = async (clientId: string) => {
    const client = (await stores.clients.findById(clientId))!;
    return [client.homepageUrl, client.redirectUris, client.postLogoutRedirectUris, client.backchannelLogoutUri];
  };
  const demoAppAt = (base: string) => [`${base}/demo-app`, [`${base}/demo-app/callback`], [`${base}/demo-app/signed-out`], `${base}/demo-app/backchannel-logout`];
  const elsewhere = 'http://localhost:4000';

  test('a move of the demo app whose credentials cannot be kept changes nothing, and the next start moves it', async () => {
    const credentials = await onlyTheDemo();
    const diskFull = () => { throw new Error('ENOSPC: no space left on device'); };
    await assert.rejects(moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials, keep: diskFull }), /ENOSPC/);
    assert.deepEqual(await addressesOf(credentials.confidentialClient.clientId), demoAppAt(baseUrl));
    let kept: DemoCredentials | undefined;
    const moved = await moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials, keep: (c) => { kept = c; } });
    assert.deepEqual(kept, moved);
    assert.equal(moved.confidentialClient.redirectUri, `${elsewhere}/demo-app/callback`);
    assert.deepEqual(await addressesOf(credentials.confidentialClient.clientId), demoAppAt(elsewhere));
    assert.deepEqual((await stores.clients.findById(credentials.publicClient.clientId))!.redirectUris, ['http://127.0.0.1/callback', `${elsewhere}/demo-app/callback`]);
  });

  test('a move killed between keeping its file and its commit is finished by the next start, which the file names where the move came from', async () => {
    const credentials = await onlyTheDemo();
    let kept: DemoCredentials | undefined;
    // The file's rename done, the process gone before the commit: the file names the new address, the database the old.
    const killed = (c: DemoCredentials) => { kept = c; throw new Error('killed'); };
    await assert.rejects(moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials, keep: killed }), /killed/);
    assert.equal(kept!.confidentialClient.movedFrom, `${baseUrl}/demo-app/callback`);
    assert.deepEqual(await addressesOf(credentials.confidentialClient.clientId), demoAppAt(baseUrl));

    const finished = await moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials: kept!, keep: (c) => { kept = c; } });
    assert.deepEqual(await addressesOf(credentials.confidentialClient.clientId), demoAppAt(elsewhere));
    assert.deepEqual(kept, finished);
    // The start after finds the database where the file says, and the file stops naming where the move came from.
    const settled = await moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials: finished, keep: (c) => { kept = c; } });
    assert.equal(settled.confidentialClient.movedFrom, undefined);
    assert.deepEqual(settled.confidentialClient, { ...credentials.confidentialClient, redirectUri: `${elsewhere}/demo-app/callback`, postLogoutRedirectUri: `${elsewhere}/demo-app/signed-out` });
    assert.equal(await moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials: settled, keep: () => assert.fail('a settled file is not kept again') }), settled);

    // Killed again on its way to a third address: the next start there moves it from where the database has it.
    const third = 'http://localhost:5000';
    await assert.rejects(moveDemoApp(stores, clock, { baseUrl: third, credentials: settled, keep: killed }), /killed/);
    const again = await moveDemoApp(stores, clock, { baseUrl: baseUrl, credentials: kept!, keep: () => {} });
    assert.deepEqual(await addressesOf(credentials.confidentialClient.clientId), demoAppAt(baseUrl));
    assert.equal(again.confidentialClient.postLogoutRedirectUri, `${baseUrl}/demo-app/signed-out`);
  });

  test('a move keeps staff\'s verification of the demo app: the operator moves its homepage and addresses, which is no owner\'s claim', async () => {
    const credentials = await onlyTheDemo();
    const app = credentials.confidentialClient.clientId;
    const verifiedAt = (await stores.clients.setVerified(app, { verified: true, reviewed: (await stores.clients.findById(app))! }, clock.now()))?.verifiedAt;
    assert.notEqual(verifiedAt, undefined);
    await moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials, keep: () => {} });
    assert.deepEqual(await addressesOf(app), demoAppAt(elsewhere));
    assert.equal((await stores.clients.findById(app))?.verifiedAt, verifiedAt);
  });

  test('a move changes only the demo app\'s addresses at the kept file\'s origin: an operator\'s address ending as the demo app\'s stays', async () => {
    const credentials = await onlyTheDemo();
    const app = credentials.confidentialClient.clientId;
    const operators = 'https://ops.example/demo-app/callback';
    await stores.clients.setRedirectUris(app, [operators, `${baseUrl}/demo-app/callback`], clock.now(), 'operator');
    // A file naming an address the database does not have (edited by hand): nothing is taken for the demo app's.
    const astray = { ...credentials, confidentialClient: { ...credentials.confidentialClient, redirectUri: 'http://localhost:7600/demo-app/callback' } };
    await moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials: astray, keep: () => {} });
    assert.deepEqual((await stores.clients.findById(app))!.redirectUris, [operators, `${baseUrl}/demo-app/callback`]);
    await moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials, keep: () => {} });
    assert.deepEqual((await stores.clients.findById(app))!.redirectUris, [operators, `${elsewhere}/demo-app/callback`]);
  });

  test('a move changes only the demo account\'s clients: another owner\'s app named in the kept file stays as it is', async () => {
    const credentials = await onlyTheDemo();
    const { client: partner } = await registerClient(stores, clock, {
      name: 'Partner', type: 'confidential', homepageUrl: 'http://localhost:3000/demo-app', redirectUris: ['http://localhost:3000/demo-app/callback'],
    });
    const planted = { ...credentials, publicClient: { ...credentials.publicClient, clientId: partner.clientId } };
    await moveDemoApp(stores, clock, { baseUrl: elsewhere, credentials: planted, keep: () => {} });
    assert.deepEqual(await addressesOf(partner.clientId), ['http://localhost:3000/demo-app', ['http://localhost:3000/demo-app/callback'], [], null]);
    assert.deepEqual(await addressesOf(credentials.confidentialClient.clientId), demoAppAt(elsewhere));
  });
});
