/**
 * A published post's views, the `viewCount` its page and the API show. A view is the most common
 * hit of a live site, so counting one must not write: each instance counts in memory and adds its
 * counts to the posts every few seconds, in one statement (`PostStore.addViews`), as the staff
 * overview's figures are (src/core/staff/figures.ts). A write per view cost a transaction per page,
 * and on SQLite it made every remembered read, the API's bearer lookups included, be read again
 * (docs/architecture.md). A crash loses at most those seconds' views.
 *
 * A view counts what a reader would expect: people reading, not page loads. The author's own views
 * do not count, and one viewer counts at most once per post an hour (a script once counted 100,000
 * views in 34 s). The viewers counted are kept in memory only, each instance its own.
 */
import { addressKey } from '../addresses.js';
import type { Stores } from '../stores.js';
import { WriteTurns } from '../write-turns.js';
import type { Instant } from '../time.js';
import type { PostSummary } from './ports.js';

/** How long one viewer's views of one post count as one. */
export const VIEW_WINDOW_MS = 3_600_000;

/**
 * The most (post, viewer) pairs an instance remembers (about 16 MB when full): past it the oldest is
 * forgotten first, and that viewer's next view of that post counts again even within the hour.
 */
export const REMEMBERED_VIEWS = 100_000;

/** Who opened a post's page. */
export interface Viewer {
  /** The signed-in member, who counts as one from any address. */
  memberId: number | undefined;
  /** The client's address, which counts anyone not signed in: as the per-address limits count it (`addressKey`). */
  address: string;
}

/** An instance's views not yet added to the database, by post id, and the viewers it counted in the last hour. */
export class ViewCounter {
  private pending = new Map<number, number>();
  private readonly recent: RecentViews;
  private readonly turns = new WriteTurns();

  constructor(remembered = REMEMBERED_VIEWS) {
    this.recent = new RecentViews(remembered);
  }

  /** Counts `viewer`'s view of `post` at `now`, unless they wrote it or their view of it counted within the hour. */
  count(post: Pick<PostSummary, 'id' | 'authorId'>, viewer: Viewer, now: Instant): void {
    if (viewer.memberId === post.authorId) return;
    this.recent.forgetBefore(now - VIEW_WINDOW_MS);
    const pair = pairKey(post.id, viewer);
    const last = this.recent.when(pair);
    if (last !== undefined && now - last < VIEW_WINDOW_MS) return;
    this.recent.add(pair, now);
    this.pending.set(post.id, (this.pending.get(post.id) ?? 0) + 1);
  }

  /** The views of `postId` this instance counted and has not yet added to the database. */
  unwritten(postId: number): number {
    return this.pending.get(postId) ?? 0;
  }

  /**
   * Adds the counts to the database and says how many views; counts that could not be written are
   * kept for the next time. Settles once every view counted before the call is written: after a
   * flush under way (the instance's timer's) if there is one (`WriteTurns`).
   */
  flush(stores: Stores): Promise<number> {
    return this.turns.run(async () => {
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
    });
  }
}

/** One key per post and viewer: a member by id, anyone else by address (an IPv6 address by its /64). */
function pairKey(postId: number, viewer: Viewer): string {
  return viewer.memberId !== undefined ? `${postId} m${viewer.memberId}` : `${postId} ${addressKey(viewer.address)}`;
}

/**
 * The (post, viewer) pairs that counted, with when, at most `bound`, the oldest forgotten first: a
 * ring of them in the order they counted, beside a `Map` that finds one. Not the `Map`'s own order:
 * V8 keeps a deleted entry as a hole that every walk from the oldest steps over until the table is
 * rebuilt, and dropping the oldest of 100,000 that way cost 140 µs a view.
 */
class RecentViews {
  private readonly last = new Map<string, Instant>();
  private readonly pairs: string[] = [];
  private readonly times: Instant[] = [];
  private oldest = 0;
  private size = 0;

  constructor(private readonly bound: number) {}

  /** When `pair` last counted, if it is remembered. */
  when(pair: string): Instant | undefined {
    return this.last.get(pair);
  }

  add(pair: string, now: Instant): void {
    if (this.size === this.bound) this.dropOldest();
    const slot = (this.oldest + this.size) % this.bound;
    this.pairs[slot] = pair;
    this.times[slot] = now;
    this.size += 1;
    this.last.set(pair, now);
  }

  /** Forgets, oldest first, the pairs that counted before `cutoff`: an hour's viewers are all an instance keeps. */
  forgetBefore(cutoff: Instant): void {
    while (this.size > 0 && this.times[this.oldest]! < cutoff) this.dropOldest();
  }

  private dropOldest(): void {
    const pair = this.pairs[this.oldest]!;
    // A pair that counted again since is later in the ring too: only its last entry forgets it.
    if (this.last.get(pair) === this.times[this.oldest]) this.last.delete(pair);
    this.pairs[this.oldest] = '';
    this.oldest = (this.oldest + 1) % this.bound;
    this.size -= 1;
  }
}
