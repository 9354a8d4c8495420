/**
 * Reads that many requests make at once, sent together: on PostgreSQL each query is a round
 * trip, a parse of its reply and an execution in the server, so the reads asked for in one turn of
 * the event loop go out as one query for all of them (`CompiledQueries.lookup` and
 * `CompiledQueries.readTogether`, issue 8). Every read still sees what is committed after it was
 * asked for.
 */
/** Most reads one query sends for a batch: keys of a lookup, or the reads of `readTogether`. */
export const LOOKUP_BATCH_KEYS = 128;

interface Waiter<A> {
  resolve(answer: A): void;
  reject(error: unknown): void;
}

/**
 * The reads of one turn of the event loop, sent together when the turn ends: `answerAll` answers
 * each of the questions it is given, in their order. With `keyOf`, a question asked again in the
 * same turn is sent once and its answer shared.
 */
export class TurnBatch<Q, A> {
  private questions: Q[] = [];
  private waiters: Array<Array<Waiter<A>>> = [];
  private asked = new Map<string, Array<Waiter<A>>>();

  constructor(private readonly answerAll: (questions: Q[]) => Promise<A[]>, private readonly keyOf?: (question: Q) => string) {}

  ask(question: Q): Promise<A> {
    return new Promise((resolve, reject) => {
      const key = this.keyOf?.(question);
      const waiting = key === undefined ? undefined : this.asked.get(key);
      if (waiting) {
        waiting.push({ resolve, reject });
        return;
      }
      const waiters = [{ resolve, reject }];
      this.questions.push(question);
      this.waiters.push(waiters);
      if (key !== undefined) this.asked.set(key, waiters);
      // After the I/O callbacks of this turn: every request parsed in it has asked by then.
      if (this.questions.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const { questions, waiters } = this;
    this.questions = [];
    this.waiters = [];
    this.asked = new Map();
    for (let start = 0; start < questions.length; start += LOOKUP_BATCH_KEYS) {
      const chunk = waiters.slice(start, start + LOOKUP_BATCH_KEYS);
      // An `answerAll` that throws at once fails its waiters too, never the event loop.
      new Promise<A[]>((resolve) => resolve(this.answerAll(questions.slice(start, start + LOOKUP_BATCH_KEYS)))).then(
        (answers) => chunk.forEach((each, i) => each.forEach((waiter) => waiter.resolve(answers[i] as A))),
        (error: unknown) => chunk.forEach((each) => each.forEach((waiter) => waiter.reject(error))),
      );
    }
  }
}

/**
 * Lookups of one row by key, sent together as a `TurnBatch`, a key asked twice once. `loadMany`
 * answers the rows found for some keys (in any order, none for a key it does not know); `keyOf`
 * names a row's key.
 */
export class LookupBatch<R> {
  private readonly turn: TurnBatch<string, R | undefined>;

  constructor(loadMany: (keys: string[]) => Promise<R[]>, keyOf: (row: R) => string) {
    this.turn = new TurnBatch(async (keys) => {
      const found = new Map((await loadMany(keys)).map((row) => [keyOf(row), row]));
      return keys.map((key) => found.get(key));
    }, (key) => key);
  }

  load(key: string): Promise<R | undefined> {
    return this.turn.ask(key);
  }
}
