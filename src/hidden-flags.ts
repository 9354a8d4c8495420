/**
 * Marks the posts of members who are not active, and clears the marks of members made active
 * again, on every server instance (`PostStore.syncHiddenFlags`), on the timer every durable queue
 * shares (`queue-worker.ts`): the mark lets the home page skip a hidden member's posts without
 * reading them (docs/performance.md, decision 57). A status change writes no post; this catches
 * up after it, a batch at a time, each batch its own transaction, from the rows as they are, so a
 * restart or another instance's passes lose and repeat nothing harmful.
 */
import type { PostStore } from './core/community/ports.js';
import { QueueWorker } from './queue-worker.js';

/** Posts a pass changes at most, as the janitor's batches (`JANITOR_BATCH_SIZE`): no statement holds `posts` long. */
export const HIDDEN_FLAGS_BATCH = 500;
/**
 * How often an instance looks for members whose status changed: one read of the partial index
 * `users_post_flags_due`, which holds next to no one. A full pass goes on at once.
 */
export const HIDDEN_FLAGS_INTERVAL_MS = 2_000;

export class HiddenFlagsWorker extends QueueWorker<{ claimed: number }> {
  /** `intervalMs` 0: no timer; passes run only when `runOnce` is called (tests). */
  constructor(posts: Pick<PostStore, 'syncHiddenFlags'>, intervalMs = HIDDEN_FLAGS_INTERVAL_MS) {
    super(
      async () => ({ claimed: await posts.syncHiddenFlags(HIDDEN_FLAGS_BATCH) }),
      { intervalMs, batch: HIDDEN_FLAGS_BATCH, name: 'hidden authors\' post flags' },
    );
  }
}
