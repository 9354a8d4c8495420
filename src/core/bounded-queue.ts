/**
 * Work in turns: at most `atOnce` pieces run, at most `maxWaiting` more wait in arrival order,
 * and past that a new piece is refused at once, before it runs or holds anything. A piece may name
 * who asks for it (an address); one asker holds at most `maxWaitingPerAsker` of the waiting
 * places, and when the line is full an asker holding at least two fewer places than the one
 * holding the most takes that one's newest place, which is refused ("longest queue drop"): a
 * share alone lets `maxWaiting / maxWaitingPerAsker` senders fill the line, while to keep a
 * newcomer out every waiting place must be held by a different sender. A piece may also name whom
 * it is for within its asker (an account): the same rule holds inside an asker's full share, so one
 * of the many people behind a shared address cannot keep the others out by sending again and again.
 * A piece several askers wait for (`shareWith`) is a place of each of them, and is pushed out only
 * when every one of them holds at least two places more than the newcomer.
 *
 * Used in front of argon2 (src/core/accounts/passwords.ts), whose every computation holds its 12 MiB block:
 * the bound on those at once is the bound on that memory, and the bound on those waiting keeps a
 * flood of sign-ins from queueing without end (docs/performance.md, decision 39); and in front of
 * the avatar decoder (src/images/sharp-reencoder.ts), whose child takes a core; and per host in front of
 * the fetches of client ID metadata documents (src/core/oauth/client-metadata.ts).
 */

/** Thrown by `BoundedQueue.run` when the line, or the asker's share of it, is full: nothing was run. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
}

/** What `BoundedQueue.run` is told of a piece; each is optional (see the class). */
export interface PieceNames {
  /** Who asks for the piece (an address, a site): its share of the line. */
  asker?: string | undefined;
  /** Whom the piece is for within `asker`'s share (an account). */
  onBehalfOf?: string | undefined;
  /** The piece itself, for `shareWith`. */
  piece?: string | undefined;
}

interface Waiting {
  start: () => void;
  refuse: (error: QueueFullError) => void;
  /** Who wait for the piece: the asker that put it in line, then those `shareWith` added; none if it named none. */
  askers: string[];
  /** Whom the piece is for within its first asker's share. */
  onBehalfOf: string | undefined;
  /** The piece's name, for `shareWith`. */
  piece: string | undefined;
}

export class BoundedQueue {
  #running = 0;
  readonly #waiting: Waiting[] = [];
  /** Waiting places held per asker; an asker holding none has no entry. */
  readonly #waitingPerAsker = new Map<string, number>();
  /** Waiting places per asker and whom they are for; only places naming both are counted. */
  readonly #waitingOnBehalf = new Map<string, Map<string, number>>();

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
  async run<T>(work: () => Promise<T>, names: PieceNames = {}): Promise<T> {
    if (this.#running < this.atOnce) this.#running++;
    else await this.#wait(names);
    try {
      return await work();
    } finally {
      // A finished piece hands its turn to the first in line, so `#running` stays as it is.
      const next = this.#waiting.shift();
      if (next) {
        this.#leave(next);
        next.start();
      } else this.#running--;
    }
  }

  /** Refuses every piece still waiting (nothing of theirs was run); pieces holding a turn go on. */
  refuseWaiting(why: string): void {
    for (const waiting of this.#waiting.splice(0)) {
      this.#leave(waiting);
      waiting.refuse(new QueueFullError(why));
    }
  }

  /**
   * For a piece several askers wait for (a document fetch that others' requests join): the
   * waiting place of `piece` becomes `asker`'s too, counted in its share, and is pushed out only
   * when every asker waiting for it holds at least two places more than the newcomer. Held by its
   * first asker alone, that asker could fill the line around it and have it pushed out, refusing
   * everyone waiting for it (attack65); handed to one lighter asker, a decoy holding it alone could
   * (attack66). A piece that named no asker stays one that is never pushed out.
   */
  shareWith(piece: string, asker: string): void {
    const waiting = this.#waiting.find((entry) => entry.piece === piece);
    if (waiting === undefined || waiting.askers.length === 0 || waiting.askers.includes(asker)) return;
    waiting.askers.push(asker);
    countUp(this.#waitingPerAsker, asker);
  }

  #wait({ asker, onBehalfOf, piece }: PieceNames): Promise<void> {
    const held = asker === undefined ? 0 : this.#waitingPerAsker.get(asker) ?? 0;
    if (held >= this.maxWaitingPerAsker) {
      // A place taken within the asker's own share leaves the line as long as it was.
      if (asker === undefined || !this.#pushOutWithin(asker, onBehalfOf)) throw new QueueFullError('every turn is taken and this asker holds its share of the line');
    } else if (this.#waiting.length >= this.maxWaiting && !this.#pushOutFor(asker, held)) {
      throw new QueueFullError('every turn is taken and the line is full');
    }
    return new Promise<void>((start, refuse) => {
      const waiting = { start, refuse, askers: asker === undefined ? [] : [asker], onBehalfOf, piece };
      this.#enter(waiting);
      this.#waiting.push(waiting);
    });
  }

  /**
   * Frees a place for a named `asker` holding `held` in a full line: a place whose every asker
   * holds at least two more, so two askers never trade one place back and forth. Of those, the
   * one whose lightest asker holds the most (for a place of one asker, the newest place of the
   * asker holding the most), then the one fewer askers wait for, then the newest. Pieces that name
   * no asker (the CLI, start-up) are never pushed out.
   */
  #pushOutFor(asker: string | undefined, held: number): boolean {
    if (asker === undefined) return false;
    let chosen: number | undefined;
    let chosenLeast = held + 1;
    let chosenAskers = 0;
    this.#waiting.forEach((waiting, index) => {
      if (waiting.askers.length === 0) return;
      let least = Infinity;
      for (const each of waiting.askers) least = Math.min(least, this.#waitingPerAsker.get(each)!);
      if (least > chosenLeast || (chosen !== undefined && least === chosenLeast && waiting.askers.length <= chosenAskers)) {
        [chosen, chosenLeast, chosenAskers] = [index, least, waiting.askers.length];
      }
    });
    if (chosen === undefined) return false;
    this.#refuse(chosen, 'the line is full and a sender holding fewer places took this one');
    return true;
  }

  /** As `#pushOutFor`, among the places of `asker`'s full share, by whom they are for. */
  #pushOutWithin(asker: string, onBehalfOf: string | undefined): boolean {
    const places = this.#waitingOnBehalf.get(asker);
    if (onBehalfOf === undefined || places === undefined) return false;
    const holder = mostHeld(places, places.get(onBehalfOf) ?? 0);
    if (holder === undefined) return false;
    let newest = this.#waiting.length - 1;
    while (this.#waiting[newest]!.askers[0] !== asker || this.#waiting[newest]!.onBehalfOf !== holder) newest--;
    this.#refuse(newest, 'this sender\'s share is full and a place for someone it holds fewer places for took this one');
    return true;
  }

  /** Refuses the waiting piece at `index`, freeing its place. */
  #refuse(index: number, why: string): void {
    const [pushedOut] = this.#waiting.splice(index, 1);
    this.#leave(pushedOut!);
    pushedOut!.refuse(new QueueFullError(why));
  }

  #enter({ askers, onBehalfOf }: Waiting): void {
    const [asker] = askers;
    if (asker === undefined) return;
    countUp(this.#waitingPerAsker, asker);
    if (onBehalfOf === undefined) return;
    const places = this.#waitingOnBehalf.get(asker) ?? new Map<string, number>();
    countUp(places, onBehalfOf);
    this.#waitingOnBehalf.set(asker, places);
  }

  #leave({ askers, onBehalfOf }: Waiting): void {
    for (const each of askers) countDown(this.#waitingPerAsker, each);
    const [asker] = askers;
    if (asker === undefined || onBehalfOf === undefined) return;
    const places = this.#waitingOnBehalf.get(asker)!;
    countDown(places, onBehalfOf);
    if (places.size === 0) this.#waitingOnBehalf.delete(asker);
  }
}

/** The key holding the most places, if it holds at least two more than `held`. */
function mostHeld(counts: ReadonlyMap<string, number>, held: number): string | undefined {
  let most = held + 1;
  let holder: string | undefined;
  for (const [key, count] of counts) {
    if (count > most) [holder, most] = [key, count];
  }
  return holder;
}

/** One place more for `key`. */
function countUp(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** One place fewer for `key`; a key holding none has no entry. */
function countDown(counts: Map<string, number>, key: string): void {
  const held = counts.get(key)! - 1;
  if (held === 0) counts.delete(key);
  else counts.set(key, held);
}
