/**
 * The timer that drains one durable queue of this server instance (back-channel logouts, mail):
 * every `intervalMs` it runs a pass that claims what is due and sends it. Every instance runs
 * one; the claims in the database keep them from sending the same row at once, and the rows
 * outlive any of them, so a restart resumes where the last run stopped. It runs while the app
 * listens (`buildApp` starts it on `onListen` and stops it on `onClose`, waiting for the attempts
 * under way).
 */

import { type Log, QUIET } from './core/log.js';


export class QueueWorker<Pass extends { claimed: number }> {
  private timer: NodeJS.Timeout | undefined;
  private log: Log = QUIET;
  private running = false;
  private readonly passes = new Set<Promise<Pass>>();

  /**
   * `pass` claims up to `batch` rows and sends them; `intervalMs` 0: no timer, passes run only
   * when `runOnce` is called (tests, or another instance sends). `name` says in the log what failed.
   */
  constructor(
    private readonly pass: (log: Log) => Promise<Pass>,
    private readonly options: { intervalMs: number; batch: number; name: string },
  ) {}

  /** Starts the timer (unless the interval is 0); passes log through `log`. */
  start(log: Log): void {
    this.log = log;
    if (this.options.intervalMs === 0 || this.running) return;
    this.running = true;
    this.schedule(this.options.intervalMs);
  }

  /**
   * One pass now: claims what is due, sends it, records the outcomes. Safe beside the timer's and
   * another instance's passes: each claims its own rows.
   */
  runOnce(): Promise<Pass> {
    const pass = this.pass(this.log);
    this.passes.add(pass);
    const forget = () => { this.passes.delete(pass); };
    pass.then(forget, forget);
    return pass;
  }

  /** Stops the timer and waits for the attempts under way (each ends within its send timeout). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.passes]);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(async () => {
      let again = this.options.intervalMs;
      try {
        const pass = await this.runOnce();
        // A full batch means more may be waiting: go on at once.
        if (pass.claimed === this.options.batch) again = 0;
      } catch (error) {
        this.log.warn({ err: error }, `${this.options.name} pass failed; will retry`);
      }
      if (this.running) this.schedule(again);
    }, delayMs);
    this.timer.unref();
  }
}
