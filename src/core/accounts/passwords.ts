/** User passwords: argon2id (INTERFACE section 2), with OWASP's minimum parameters. */
import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';

/** `Algorithm.Argon2id`, spelled out: the package exports it as an ambient const enum. */
const ARGON2ID = 2;

const PARAMETERS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

/**
 * Argon2 computations at once, each holding its 19 MiB: a burst of sign-ins waits its turn
 * instead of growing the process by 19 MiB per sign-in in flight (docs/performance.md,
 * decision 20). One per core keeps the cores busy; at most three, so that one of libuv's four
 * threads stays free for the file and DNS work that shares them.
 */
export const MAX_CONCURRENT_HASHES = Math.max(1, Math.min(3, availableParallelism()));
let running = 0;
const waiting: Array<() => void> = [];

/** How many computations hold a slot and how many wait for one (for tests and diagnostics). */
export function hashSlots(): { running: number; waiting: number } {
  return { running, waiting: waiting.length };
}

async function withHashSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running < MAX_CONCURRENT_HASHES) running++;
  // A finished computation hands its slot to the next in line, so `running` stays as it is.
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

export function hashPassword(password: string): Promise<string> {
  return withHashSlot(() => hash(password, PARAMETERS));
}

/**
 * A hash of nothing anyone knows, verified when the account is unknown so both cases cost the
 * same. Made at start: made on first need, the first unknown account would cost two computations.
 */
const decoyHash = hashPassword('decoy password that matches no account');

/** Verifies `password` against `passwordHash`, or spends the same time when there is no hash. */
export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  try {
    if (passwordHash === undefined) {
      const decoy = await decoyHash;
      await withHashSlot(() => verify(decoy, password));
      return false;
    }
    return await withHashSlot(() => verify(passwordHash, password));
  } catch {
    return false;
  }
}
