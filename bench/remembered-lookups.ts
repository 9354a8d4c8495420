/**
 * Remembered lookups on a SQLite file, in process (decision 38): the client lookup of a token
 * request after each rotation (the database part of d2: the consuming write and the new pair),
 * the bearer lookup of `/me` after each write to a table it does not read (a sign-in session
 * stored), and the bearer lookup with no write in between. Each iteration waits one turn of the
 * event loop, as requests do. Prints the wall µs of each lookup alone and the CPU µs of a whole
 * iteration, medians of rounds. `npx tsx bench/remembered-lookups.ts`
 */
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../src/storage/database.js';
import { migrateToLatest } from '../src/storage/migrate.js';
import { createStores } from '../src/storage/stores.js';
import { temporarySqlitePath } from '../test/support/databases.js';
import { median } from './statistics.js';

const ITERATIONS = 4_000;
const ROUNDS = 5;
const handle = openDatabase({ kind: 'sqlite', path: temporarySqlitePath() });
await migrateToLatest(handle.db);
const stores = createStores(handle.db, handle.queries);
const user = await stores.users.create({ username: 'bench', passwordHash: 'h', bio: '', member: false, level: 1, xp: 0 }, 1);
await stores.clients.create({
  clientId: 'c', name: 'App', description: '', homepageUrl: '', ownerId: user.id, type: 'confidential',
  redirectUris: ['https://app.example/cb'], allowedScopes: ['openid', 'profile:read'], secretHash: 'h', idTokenAlg: 'RS256',
}, 1);
const grant = await stores.grants.create({ userId: user.id, clientId: 'c', scope: 'profile:read', nonce: null, authTime: 1 }, 1);
const token = (hash: string) => ({ tokenHash: hash, grantId: grant.id, clientId: 'c', userId: user.id, scope: 'profile:read', createdAt: 1, expiresAt: 9e12 });
const refresh: string[] = [];
for (let i = 0; i < ITERATIONS * ROUNDS; i++) refresh.push(`r${i}-${Math.random().toString(36).slice(2)}`);
await stores.transaction(async (tx) => { for (const hash of refresh) await tx.tokens.insertPair(token(`a${hash}`), token(hash)); });
const bearer = `a${refresh[0]}`;
let next = 0;
let serial = 0;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const rotate = () => stores.transaction(async (tx) => {
  await tx.tokens.consumeRefresh(refresh[next++]!, 2);
  serial++;
  await tx.tokens.insertPair(token(`na${serial}`), token(`nr${serial}`));
});
const storeSession = () => stores.sessions.create({ idHash: `s${serial++}`, userId: user.id, authTime: 1, expiresAt: 9e12 }, 1);

/** Runs `write` then `lookup` ITERATIONS times, a turn apart: the lookups' wall µs each, the iterations' CPU µs each. */
async function round(write: (() => Promise<unknown>) | undefined, lookup: () => Promise<unknown>): Promise<{ lookup: number; iteration: number }> {
  let inLookups = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) {
    await nextTurn();
    if (write) await write();
    const before = performance.now();
    if ((await lookup()) === undefined) throw new Error('lookup found nothing');
    inLookups += performance.now() - before;
  }
  const used = process.cpuUsage(start);
  return { lookup: (inLookups * 1000) / ITERATIONS, iteration: (used.user + used.system) / ITERATIONS };
}

const cases = {
  'client after a rotation': [rotate, () => stores.clients.findById('c')],
  'bearer after a session stored': [storeSession, () => stores.tokens.findAccessBearer(bearer)],
  'bearer after a rotation': [rotate, () => stores.tokens.findAccessBearer(bearer)],
  'bearer, no write': [undefined, () => stores.tokens.findAccessBearer(bearer)],
} as const;
const results: Record<string, { lookup: number[]; iteration: number[] }> = {};
for (const name of Object.keys(cases)) results[name] = { lookup: [], iteration: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, [write, lookup]] of Object.entries(cases)) {
    const measured = await round(write, lookup);
    results[name]!.lookup.push(measured.lookup);
    results[name]!.iteration.push(measured.iteration);
  }
}
const rounded = (x: number) => Math.round(x * 100) / 100;
console.log(JSON.stringify({
  iterations: ITERATIONS, rounds: ROUNDS,
  cases: Object.fromEntries(Object.entries(results).map(([name, { lookup, iteration }]) => [name, {
    lookupUs: rounded(median(lookup)), iterationCpuUs: rounded(median(iteration)), lookupUsRounds: lookup.map(rounded),
  }])),
}));
await handle.close();
