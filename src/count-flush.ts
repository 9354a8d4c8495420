/**
 * Adds an instance's counts kept in memory to the database every few seconds while it listens,
 * and once more as it closes (`buildApp` starts and stops it): the overview's figures
 * (src/core/staff/figures.ts) and the posts' views (src/core/community/views.ts).
 */
import type { Stores } from './core/stores.js';

export const COUNT_FLUSH_INTERVAL_MS = 10_000;

/** Counts kept in memory: `flush` adds them to the database, and keeps those it could not write. */
export interface PendingCounts {
  flush(stores: Stores): Promise<void>;
}

/** Where a flush that failed is told. */
interface FlushLog {
  warn(object: object, message: string): void;
}

export class CountFlush {
  private timer: NodeJS.Timeout | undefined;
  private log: FlushLog | undefined;
  /** The flush under way, if any: turns never overlap, and closing waits for it. */
  private running: Promise<void> | undefined;

  /** `counters` by what they count, as the log names them. */
  constructor(private readonly counters: Readonly<Record<string, PendingCounts>>, private readonly stores: Stores, private readonly intervalMs = COUNT_FLUSH_INTERVAL_MS) {}

  start(log: FlushLog): void {
    if (this.timer) return;
    this.log = log;
    this.timer = setInterval(() => {
      // A turn still waiting for a database that is away leaves this one out: its counts wait.
      if (this.running) return;
      this.running = this.flush('counts not written; kept for the next turn').finally(() => { this.running = undefined; });
    }, this.intervalMs);
    this.timer.unref();
  }

  /**
   * Each counter apart, so one whose write fails holds up none of the others; a database that is
   * away keeps the counts for the next turn.
   */
  private async flush(failed: string): Promise<void> {
    await Promise.all(Object.entries(this.counters).map(([counts, counter]) => counter.flush(this.stores)
      .catch((error: unknown) => this.log?.warn({ err: error, counts }, failed))));
  }

  /** Stops the timer, waits for a turn under way and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    // No turn follows: what the database does not take now is lost, and the log says so (attack93).
    await this.flush('counts not written as the server closed; lost');
  }
}
