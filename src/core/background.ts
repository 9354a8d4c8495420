/**
 * Work a request starts and does not wait for: it begins once the answer is on its way, closing
 * the app waits for it (`settled`), and its errors reach the log instead of being lost. For work
 * whose cost must not show in the answer's timing (a forgotten-password request, INTERFACE
 * section 12: "the same timing whether or not the account exists").
 */
import { type Log, QUIET } from './log.js';

export class BackgroundTasks {
  private readonly running = new Set<Promise<void>>();
  private log: Log = QUIET;

  /** Failed tasks are logged through `log` from now on. */
  reportTo(log: Log): void {
    this.log = log;
  }

  /**
   * Runs `task` once `after` resolves (the answer of the request that started it is sent), tracked
   * from now on. `name` says in the log what failed; `log`, the request's, where it fails, so the
   * line carries the request's id (`reqId`) as the request's own lines do.
   */
  run(name: string, task: () => Promise<void>, after: Promise<void>, log?: Log): void {
    const done = after.then(task).catch((error: unknown) => (log ?? this.log).warn({ err: error, task: name }, `${name} failed`));
    this.running.add(done);
    void done.finally(() => this.running.delete(done));
  }

  /** Resolves once no task is running, those started meanwhile included. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
