/**
 * Work in turns: at most `atOnce` pieces run, at most `maxWaiting` more wait in arrival order,
 * and past that a new piece is refused at once, before it runs or holds anything. A piece may name
 * who asks for it (an address); one asker holds at most `maxWaitingPerAsker` of the waiting
 * places, so no single sender can fill the line and turn everyone else away.
 *
 * Used in front of argon2 (src/core/accounts/passwords.ts), whose every computation holds 19 MiB:
 * the bound on those at once is the bound on that memory, and the bound on those waiting keeps a
 * flood of sign-ins from queueing without end (docs/performance.md, decision 39); and in front of
 * the avatar decoder (src/images/sharp-reencoder.ts), whose child takes a core.
 */

/** Thrown by `BoundedQueue.run` when the line, or the asker's share of it, is full: nothing was run. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
}

interface Waiting {
  start: () => void;
  asker: string | undefined;
}

export class BoundedQueue {
  #running = 0;
  readonly #waiting: Waiting[] = [];
  /** Waiting places held per asker; an asker holding none has no entry. */
  readonly #waitingPerAsker = new Map<string, number>();

  constructor(readonly atOnce: number, readonly maxWaiting: number, readonly maxWaitingPerAsker: number = maxWaiting) {
    for (const [name, value, least] of [['atOnce', atOnce, 1], ['maxWaiting', maxWaiting, 0], ['maxWaitingPerAsker', maxWaitingPerAsker, 0]] as const) {
      if (!Number.isInteger(value) || value < least) throw new RangeError(`${name} must be a whole number of at least ${least}`);
    }
  }

  /** How many pieces hold a turn and how many wait for one (for tests and diagnostics). */
  get state(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length };
  }

  /**
   * Runs `work` in its turn and returns what it returns; rejects with `QueueFullError` at once,
   * without calling `work`, when every turn is taken and either `maxWaiting` pieces already wait
   * or `asker` already holds `maxWaitingPerAsker` of the waiting places.
   */
  async run<T>(work: () => Promise<T>, asker?: string): Promise<T> {
    if (this.#running < this.atOnce) this.#running++;
    else await this.#wait(asker);
    try {
      return await work();
    } finally {
      // A finished piece hands its turn to the first in line, so `#running` stays as it is.
      const next = this.#waiting.shift();
      if (next) {
        this.#leave(next.asker);
        next.start();
      } else this.#running--;
    }
  }

  #wait(asker: string | undefined): Promise<void> {
    const held = asker === undefined ? 0 : this.#waitingPerAsker.get(asker) ?? 0;
    if (this.#waiting.length >= this.maxWaiting) throw new QueueFullError('every turn is taken and the line is full');
    if (held >= this.maxWaitingPerAsker) throw new QueueFullError('every turn is taken and this asker holds its share of the line');
    if (asker !== undefined) this.#waitingPerAsker.set(asker, held + 1);
    return new Promise<void>((start) => this.#waiting.push({ start, asker }));
  }

  #leave(asker: string | undefined): void {
    if (asker === undefined) return;
    const held = this.#waitingPerAsker.get(asker)! - 1;
    if (held === 0) this.#waitingPerAsker.delete(asker);
    else this.#waitingPerAsker.set(asker, held);
  }
}
