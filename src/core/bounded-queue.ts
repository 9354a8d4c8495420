/**
 * Work in turns: at most `atOnce` pieces run, at most `maxWaiting` more wait in arrival order,
 * and past that a new piece is refused at once, before it runs or holds anything. Used in front
 * of argon2 (src/core/accounts/passwords.ts), whose every computation holds 19 MiB: the bound on
 * those at once is the bound on that memory, and the bound on those waiting keeps a flood of
 * sign-ins from queueing without end (docs/performance.md, decision 39).
 */

/** Thrown by `BoundedQueue.run` when `maxWaiting` pieces already wait: nothing was run. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
}

export class BoundedQueue {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly atOnce: number, readonly maxWaiting: number) {
    if (!Number.isInteger(atOnce) || atOnce < 1) throw new RangeError('atOnce must be a positive integer');
    if (!Number.isInteger(maxWaiting) || maxWaiting < 0) throw new RangeError('maxWaiting must be a non-negative integer');
  }

  /** How many pieces hold a turn and how many wait for one (for tests and diagnostics). */
  get state(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length };
  }

  /**
   * Runs `work` in its turn and returns what it returns; rejects with `QueueFullError` at once,
   * without calling `work`, when every turn is taken and `maxWaiting` pieces already wait.
   */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running < this.atOnce) this.#running++;
    else if (this.#waiting.length >= this.maxWaiting) throw new QueueFullError('every turn is taken and the queue is full');
    // A finished piece hands its turn to the first in line, so `#running` stays as it is.
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
