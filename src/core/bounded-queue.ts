/**
 * Work in turns: at most `atOnce` pieces run, at most `maxWaiting` more wait in arrival order,
 * and past that a new piece is refused at once, before it runs or holds anything. A piece may name
 * who asks for it (an address); one asker holds at most `maxWaitingPerAsker` of the waiting
 * places, and when the line is full an asker holding at least two fewer places than the one
 * holding the most takes that one's newest place, which is refused ("longest queue drop"): a
 * share alone lets `maxWaiting / maxWaitingPerAsker` senders fill the line, while to keep a
 * newcomer out every waiting place must be held by a different sender.
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
  refuse: (error: QueueFullError) => void;
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
   * without calling `work`, when every turn is taken and either `asker` already holds
   * `maxWaitingPerAsker` of the waiting places or `maxWaiting` pieces already wait and none can
   * be pushed out for it; rejects so later, still without calling `work`, when it is pushed out.
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
    if (held >= this.maxWaitingPerAsker) throw new QueueFullError('every turn is taken and this asker holds its share of the line');
    if (this.#waiting.length >= this.maxWaiting && !this.#pushOutFor(asker, held)) throw new QueueFullError('every turn is taken and the line is full');
    if (asker !== undefined) this.#waitingPerAsker.set(asker, held + 1);
    return new Promise<void>((start, refuse) => this.#waiting.push({ start, refuse, asker }));
  }

  /**
   * Frees a place for a named `asker` holding `held` in a full line: the newest place of the asker
   * holding the most, if that is at least two more, so two askers never trade one place back and
   * forth. Pieces that name no asker (the CLI, start-up) are never pushed out.
   */
  #pushOutFor(asker: string | undefined, held: number): boolean {
    if (asker === undefined) return false;
    let most = held + 1;
    let holder: string | undefined;
    for (const [other, count] of this.#waitingPerAsker) {
      if (count > most) [holder, most] = [other, count];
    }
    if (holder === undefined) return false;
    let newest = this.#waiting.length - 1;
    while (this.#waiting[newest]!.asker !== holder) newest--;
    const [pushedOut] = this.#waiting.splice(newest, 1);
    this.#leave(holder);
    pushedOut!.refuse(new QueueFullError('the line is full and a sender holding fewer places took this one'));
    return true;
  }

  #leave(asker: string | undefined): void {
    if (asker === undefined) return;
    const held = this.#waitingPerAsker.get(asker)! - 1;
    if (held === 0) this.#waitingPerAsker.delete(asker);
    else this.#waitingPerAsker.set(asker, held);
  }
}
