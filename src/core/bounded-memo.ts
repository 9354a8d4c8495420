/**
 * Answers worked out once per key and kept, at most `most` of them: past it, the oldest kept goes
 * first. For answers that cost far more to make than to keep (a date formatter, a letter's fold),
 * whose keys may come from requests, so that a flood of distinct keys holds a bounded amount of
 * memory (issue 35 item 5). A `make` that throws keeps nothing.
 */
export class BoundedMemo<K, V> {
  readonly #kept = new Map<K, V>();

  constructor(readonly most: number) {}

  /** The answer kept for `key`, made by `make` if none is. */
  get(key: K, make: (key: K) => V): V {
    let value = this.#kept.get(key);
    if (value === undefined) {
      value = make(key);
      if (this.#kept.size >= this.most) this.#kept.delete(this.#kept.keys().next().value!);
      this.#kept.set(key, value);
    }
    return value;
  }

  /** How many answers are kept. */
  get size(): number {
    return this.#kept.size;
  }
}
