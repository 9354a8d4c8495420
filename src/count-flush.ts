/**
 * Adds an instance's counts kept in memory to the database every few seconds while it listens,
 * and once more as it closes (`buildApp` starts and stops it): the overview's figures
 * (src/core/staff/figures.ts) and the posts' views (src/core/community/views.ts).
 */
import type { Stores } from './core/stores.js';
import type { Clock, Instant } from './core/time.js';

export const COUNT_FLUSH_INTERVAL_MS = 10_000;

/** Counts kept in memory: `flush` adds them to the database and says how many, and keeps those it could not write. */
export interface PendingCounts {
  flush(stores: Stores): Promise<number>;
}

/** Where flushes are told: a counter's first failure in a row, its counts lost on closing, and its recovery. */
interface FlushLog {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

/** A counter whose writes fail turn after turn: since its first failure, and how many turns. */
interface Failing {
  since: Instant;
  turns: number;
}

export class CountFlush {
  private timer: NodeJS.Timeout | undefined;
  private log: FlushLog | undefined;
  /** The flush under way, if any: turns never overlap, and closing waits for it. */
  private running: Promise<void> | undefined;
  /** Counters whose last turn failed, by what they count. */
  private readonly failing = new Map<string, Failing>();

  /** `counters` by what they count, as the log names them. */
  constructor(private readonly counters: Readonly<Record<string, PendingCounts>>, private readonly stores: Stores, private readonly clock: Clock,
    private readonly intervalMs = COUNT_FLUSH_INTERVAL_MS) {}

  start(log: FlushLog): void {
    if (this.timer) return;
    this.log = log;
    this.timer = setInterval(() => {
      // A turn still waiting for a database that is away leaves this one out: its counts wait.
      if (this.running) return;
      this.running = this.flush(false).finally(() => { this.running = undefined; });
    }, this.intervalMs);
    this.timer.unref();
  }

  /**
   * Each counter apart, so one whose write fails holds up none of the others; a database that is
   * away keeps the counts for the next turn. A counter failing turn after turn is told once, with
   * its error, and once more when it writes again (a warning with its stack every 10 s per counter
   * filled the log while the database was away).
   */
  private async flush(closing: boolean): Promise<void> {
    await Promise.all(Object.entries(this.counters).map(async ([counts, counter]) => {
      try {
        const written = await counter.flush(this.stores);
        const failed = this.failing.get(counts);
        if (!failed) return;
        this.failing.delete(counts);
        this.log?.info({ counts, failedTurns: failed.turns, failedForMs: this.clock.now() - failed.since, written }, 'counts written again, kept while they could not be');
      } catch (error) {
        this.failed(counts, error, closing);
      }
    }));
  }

  private failed(counts: string, error: unknown, closing: boolean): void {
    const failed = this.failing.get(counts);
    // No turn follows: what the database does not take now is lost, and the log says so (attack93).
    if (closing) {
      const before = failed && { failedTurns: failed.turns, failedForMs: this.clock.now() - failed.since };
      this.log?.warn({ err: error, counts, ...before }, 'counts not written as the server closed; lost');
    } else if (failed) {
      failed.turns++;
    } else {
      this.failing.set(counts, { since: this.clock.now(), turns: 1 });
      this.log?.warn({ err: error, counts }, 'counts not written; kept for the next turn, and not told again until written');
    }
  }

  /** Stops the timer, waits for a turn under way and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.flush(true);
  }
}
