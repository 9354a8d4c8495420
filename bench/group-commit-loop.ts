/**
 * The database part of a rotation (the consuming write, the new pair, the COMMIT) in process, on a
 * SQLite file: committed one at a time (groups of one) or `GROUP` at a time (decision 36). Each
 * transaction waits one turn of the event loop inside, as a rotation waits for its signature, so
 * that the others queue. Prints CPU µs per rotation, median of rounds.
 */
import { sql } from 'kysely';
import { openDatabase } from '../src/storage/database.js';
import { migrateToLatest } from '../src/storage/migrate.js';
import { createStores } from '../src/storage/stores.js';
import { temporarySqlitePath } from '../test/support/databases.js';
import { median } from './statistics.js';

const ROTATIONS = 4_000;
const ROUNDS = 5;
const handle = openDatabase({ kind: 'sqlite', path: temporarySqlitePath() });
await migrateToLatest(handle.db);
await sql`pragma foreign_keys = off`.execute(handle.db);
const stores = createStores(handle.db, handle.queries);
let serial = 0;
const token = (hash: string) => ({ tokenHash: hash, grantId: 1, clientId: 'c', userId: 1, scope: 'openid', createdAt: 1, expiresAt: 9e12 });
const stored: string[] = [];
for (let i = 0; i < ROTATIONS * ROUNDS * 2 * 2; i++) stored.push(`seed-${i}-${Math.random().toString(36).slice(2)}`);
await stores.transaction(async (tx) => { for (let i = 0; i < stored.length; i += 2) await tx.tokens.insertPair(token(`a${stored[i]}`), token(stored[i + 1]!)); });
let next = 1;
const rotate = () => stores.transaction(async (tx) => {
  await tx.tokens.consumeRefresh(stored[next]!, 2);
  next += 2;
  await new Promise((resolve) => setImmediate(resolve));
  serial++;
  await tx.tokens.insertPair(token(`na${serial}-${Math.random()}`), token(`nr${serial}-${Math.random()}`));
});
async function round(group: number): Promise<number> {
  const start = process.cpuUsage();
  for (let done = 0; done < ROTATIONS; done += group) await Promise.all(Array.from({ length: group }, rotate));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / ROTATIONS;
}
const results: Record<string, number[]> = { one: [], 32: [] };
for (let r = 0; r < ROUNDS; r++) {
  results.one!.push(await round(1));
  results['32']!.push(await round(32));
}
console.log(JSON.stringify({ rotations: ROTATIONS, rounds: ROUNDS, cpuUsPerRotation: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, { median: median(v), all: v.map((x) => Math.round(x)) }])) }));
await handle.close();
