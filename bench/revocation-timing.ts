/**
 * What RFC 7009 revocation of an access token could tell a client by its time (attack144): an
 * unknown token beside another client's, through the store calls the endpoint makes. `revokeAccess`
 * (one conditional write naming the caller) now; `findAccess` (the whole row read, then compared
 * with the caller) before. Cases interleaved round by round; prints each call's median wall µs.
 * SQLite on a temporary file; with `LOOP_DATABASE_URL`, a fresh schema on that PostgreSQL server.
 *   npx tsx bench/revocation-timing.ts
 *   LOOP_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/revocation-timing.ts
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openDatabase } from '../src/storage/database.js';
import { migrateToLatest } from '../src/storage/migrate.js';
import { createStores } from '../src/storage/stores.js';
import { dropSchema, temporarySqlitePath, withSearchPath } from '../test/support/databases.js';
import { median } from './statistics.js';

const CALLS = 2_000;
const ROUNDS = 7;
const databaseUrl = process.env.LOOP_DATABASE_URL;
const schema = `revocation_${randomBytes(4).toString('hex')}`;
const admin = databaseUrl ? new pg.Client({ connectionString: databaseUrl }) : undefined;
await admin?.connect();
await admin?.query(`create schema ${schema}`);
const handle = openDatabase(databaseUrl ? { kind: 'postgres', url: withSearchPath(databaseUrl, schema) } : { kind: 'sqlite', path: temporarySqlitePath() });
try {
  await migrateToLatest(handle.db);
  const stores = createStores(handle.db, handle.queries);
  const user = await stores.users.create({ username: 'bench', passwordHash: 'h', bio: '', member: false, level: 1, xp: 0 }, 1);
  for (const clientId of ['owner', 'caller']) {
    await stores.clients.create({
      clientId, name: 'App', description: '', homepageUrl: '', ownerId: user.id, type: 'confidential',
      redirectUris: ['https://app.example/cb'], allowedScopes: ['profile:read'], secretHash: 'h', idTokenAlg: 'RS256',
    }, 1);
  }
  const grant = await stores.grants.create({ userId: user.id, clientId: 'owner', scope: 'profile:read', nonce: null, authTime: 1 }, 1);
  const owners = Array.from({ length: CALLS }, (_, i) => `owned-${i}-${randomBytes(8).toString('hex')}`);
  const unknown = Array.from({ length: CALLS }, (_, i) => `unknown-${i}-${randomBytes(8).toString('hex')}`);
  await stores.transaction(async (tx) => {
    for (const tokenHash of owners) {
      await tx.tokens.insertAccess({ tokenHash, grantId: grant.id, clientId: 'owner', userId: user.id, scope: 'profile:read', createdAt: 1, expiresAt: 9e12 });
    }
  });
  const now = 2;
  const cases = {
    'revokeAccess, unknown token': (i: number) => stores.tokens.revokeAccess(unknown[i]!, 'caller', now),
    "revokeAccess, another client's token": (i: number) => stores.tokens.revokeAccess(owners[i]!, 'caller', now),
    'findAccess (before), unknown token': (i: number) => stores.tokens.findAccess(unknown[i]!),
    "findAccess (before), another client's token": (i: number) => stores.tokens.findAccess(owners[i]!),
  };
  const rounds: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, call] of Object.entries(cases)) {
      const start = performance.now();
      for (let i = 0; i < CALLS; i++) await call(i);
      rounds[name]!.push(((performance.now() - start) * 1000) / CALLS);
    }
  }
  if ((await stores.tokens.findAccess(owners[0]!))?.revokedAt !== null) throw new Error("another client's token was revoked");
  const rounded = (x: number) => Math.round(x * 10) / 10;
  console.log(JSON.stringify({
    database: databaseUrl ? 'postgres' : 'sqlite', calls: CALLS, rounds: ROUNDS,
    wallUs: Object.fromEntries(Object.entries(rounds).map(([name, us]) => [name, { median: rounded(median(us)), rounds: us.map(rounded) }])),
  }, null, 1));
} finally {
  await handle.close();
  if (admin) {
    await dropSchema(admin, schema);
    await admin.end();
  }
}
