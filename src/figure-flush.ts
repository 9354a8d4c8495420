/**
 * Adds an instance's counts of the overview's figures to the database every few seconds while it
 * listens, and once more as it closes (`buildApp` starts and stops it; src/core/staff/figures.ts).
 */
import type { FigureCounter } from './core/staff/figures.js';
import type { Stores } from './core/stores.js';

export const FIGURE_FLUSH_INTERVAL_MS = 10_000;

export class FigureFlush {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly counter: FigureCounter, private readonly stores: Stores, private readonly intervalMs = FIGURE_FLUSH_INTERVAL_MS) {}

  start(log: { warn(object: object, message: string): void }): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // A database that is away keeps the counts for the next turn.
      this.counter.flush(this.stores).catch((error: unknown) => log.warn({ err: error }, 'overview figures not written; kept for the next turn'));
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.counter.flush(this.stores).catch(() => undefined);
  }
}
