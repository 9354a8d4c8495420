/**
 * One write at a time for counts kept in memory (the overview's figures, the posts' views), so a
 * flush's promise means what its caller reads it as: every count made before the call is in the
 * database, or the flush failed. Each instance's timer flushes (`src/count-flush.ts`), and a test
 * or the closing flushes too; a second flush that found the counts already taken by a write under
 * way answered at once, before that write committed, and the overview read just after missed them.
 */
export class WriteTurns {
  /** The write under way, settled either way; `undefined` when none is. */
  private writing: Promise<void> | undefined;

  /**
   * Runs `write` once no write of this object is under way, and returns what it returns. With none
   * under way it starts at once, in the caller's turn: what it takes from the pending counts is
   * what was counted before the call. A failed write hands its counts back inside `write`, before
   * its promise settles, so the next turn finds them.
   */
  async run<T>(write: () => Promise<T>): Promise<T> {
    while (this.writing !== undefined) await this.writing;
    const running = write();
    const settled = running.then(() => undefined, () => undefined);
    this.writing = settled;
    try {
      return await running;
    } finally {
      if (this.writing === settled) this.writing = undefined;
    }
  }
}
