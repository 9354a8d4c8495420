/**
 * Lookups by key that many requests make at once, sent together: on PostgreSQL each query is a
 * round trip, a parse of its reply and an execution in the server, so the lookups asked for in
 * one turn of the event loop go out as one query for all their keys (`CompiledQueries.lookup`,
 * issue 8). Every lookup still reads what is committed after it was asked for.
 */
/** Most keys one batched lookup sends in one query. */
export const LOOKUP_BATCH_KEYS = 128;

interface Waiter<R> {
  resolve(row: R | undefined): void;
  reject(error: unknown): void;
}

/**
 * The lookups of one turn of the event loop, sent together when the turn ends. `loadMany` answers
 * the rows found for some keys (in any order, none for a key it does not know); `keyOf` names a row's key.
 */
export class LookupBatch<R> {
  private pending = new Map<string, Array<Waiter<R>>>();
  private scheduled = false;

  constructor(private readonly loadMany: (keys: string[]) => Promise<R[]>, private readonly keyOf: (row: R) => string) {}

  load(key: string): Promise<R | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O callbacks of this turn: every request parsed in it has asked by then.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const pending = this.pending;
    this.pending = new Map();
    this.scheduled = false;
    const keys = [...pending.keys()];
    for (let start = 0; start < keys.length; start += LOOKUP_BATCH_KEYS) {
      const chunk = keys.slice(start, start + LOOKUP_BATCH_KEYS);
      const settle = (answer: (waiter: Waiter<R>, key: string) => void) => {
        for (const key of chunk) for (const waiter of pending.get(key)!) answer(waiter, key);
      };
      // A loader that throws at once fails its waiters too, never the event loop.
      new Promise<R[]>((resolve) => resolve(this.loadMany(chunk))).then((rows) => {
        const found = new Map(rows.map((row) => [this.keyOf(row), row]));
        settle((waiter, key) => waiter.resolve(found.get(key)));
      }, (error: unknown) => settle((waiter) => waiter.reject(error)));
    }
  }
}
