/**
 * Two flushes of one in-memory counter, the second asked for while the first's write is held
 * (what a flush by hand meets when the instance's timer is writing): when each answered, and
 * what was written, for the counters' rule that a flush settles only once every count made
 * before it is written (src/core/write-turns.ts).
 */
import type { Stores } from '../../src/core/stores.js';

export interface FlushRace<W> {
  /** What the first flush (the timer's) said it wrote. */
  first: number;
  /** What the second said it wrote. */
  second: number;
  /** When the second answered, counted in writes done. */
  secondAnswered: string;
  written: W[];
}

/** `storesWith(write)`: stores whose one write is `write`, held until the first flush's is let finish. */
export async function flushDuringHeldWrite<W>(
  flush: (stores: Stores) => Promise<number>,
  storesWith: (write: (value: W) => Promise<void>) => Stores,
): Promise<FlushRace<W>> {
  const written: W[] = [];
  const finishes: Array<() => void> = [];
  const stores = storesWith((value) => new Promise<void>((resolve) => { finishes.push(() => { written.push(value); resolve(); }); }));
  const first = flush(stores);
  let secondAnswered = 'not yet';
  const second = flush(stores).then((n) => { secondAnswered = `after ${written.length} write(s)`; return n; });
  // Every turn the second's answer could take runs before the first's write is let finish.
  await new Promise((resolve) => setImmediate(resolve));
  finishes.shift()!();
  return { first: await first, second: await second, secondAnswered, written };
}
