/**
 * A published post's views, the `viewCount` its page and the API show. A view is the most common
 * hit of a live site, so counting one must not write: each instance counts in memory and adds its
 * counts to the posts every few seconds, in one statement (`PostStore.addViews`), as the staff
 * overview's figures are (src/core/staff/figures.ts). A write per view cost a transaction per page,
 * and on SQLite it made every remembered read, the API's bearer lookups included, be read again
 * (docs/architecture.md). A crash loses at most those seconds' views.
 */
import type { Stores } from '../stores.js';

/** An instance's views not yet added to the database, by post id. */
export class ViewCounter {
  private pending = new Map<number, number>();

  count(postId: number): void {
    this.pending.set(postId, (this.pending.get(postId) ?? 0) + 1);
  }

  /** Adds the counts to the database and says how many views; counts that could not be written are kept for the next time. */
  async flush(stores: Stores): Promise<number> {
    if (this.pending.size === 0) return 0;
    const views = this.pending;
    this.pending = new Map();
    try {
      // In a transaction: on SQLite its turn for the write lock is waited for off the event loop,
      // where a bare statement slept in SQLite's busy wait, the instance serving nothing (attack93: 5 s).
      await stores.transaction((tx) => tx.posts.addViews(views));
      return [...views.values()].reduce((sum, n) => sum + n, 0);
    } catch (error) {
      for (const [postId, n] of views) this.pending.set(postId, (this.pending.get(postId) ?? 0) + n);
      throw error;
    }
  }
}
