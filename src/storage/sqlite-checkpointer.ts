/**
 * SQLite's WAL checkpoints, moved off the event loop (issue 8).
 *
 * In WAL mode a commit only appends pages to the `-wal` file; now and then a checkpoint copies
 * them into the database file and syncs both (`synchronous = NORMAL`). By default the connection
 * that commits runs that checkpoint itself, inside the commit, whenever the log passes 1,000
 * pages: under a stream of code exchanges that was a 7–17 ms stall of the whole server several
 * times a second (a commit's median was 34 µs, its 99th percentile 6.8 ms, and two thirds of all
 * commit time was spent in those few), while the process sat idle waiting on `fsync`.
 *
 * Here a worker thread with a connection of its own runs a PASSIVE checkpoint every
 * `CHECKPOINT_INTERVAL_MS`: it copies what is committed without ever blocking the writer or a
 * reader, and its `fsync`s block only the worker. The serving connection keeps an automatic
 * checkpoint at `BACKSTOP_PAGES` (about 40 MB of log): a passive checkpoint cannot restart the
 * log while the writer keeps appending to it, so under sustained writes the log is reset there,
 * and if the worker ever stops, the log is still bounded.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { type Log, QUIET } from '../core/log.js';

/**
 * Short, so that little is left uncopied when the serving connection's backstop comes: that
 * checkpoint runs on the event loop and syncs what the worker has not (docs/performance.md,
 * decision 53: every 250 ms it stalled the server 36-40 ms under sustained writes).
 */
export const CHECKPOINT_INTERVAL_MS = 50;
/** The serving connection's own automatic checkpoint, in pages (SQLite's default is 1,000). */
export const BACKSTOP_PAGES = 10_000;
/**
 * After a pass fails (a full disk, a file it cannot write) the next waits twice as long, up to
 * this: a pass that cannot write still syncs the log first, and at 20 passes a second that was
 * 20 failed writes and syncs a second against a disk already in trouble.
 */
export const FAILING_INTERVAL_MAX_MS = 5_000;

/** What the worker tells the server: a pass failed, or one worked after passes that failed. */
export type CheckpointReport = { failed: string; retryInMs: number } | { recovered: true };

/** Plain JavaScript, run as the worker's script: better-sqlite3 is located by the parent. */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
// Longer than the interval only after a failed pass (the interval is below the most it grows to).
let delay = workerData.intervalMs;
let ready = false;
let timer;
function pass() {
  try {
    // Set within a pass, so a file unreadable for a moment fails a pass, not the worker.
    if (!ready) db.pragma('synchronous = NORMAL');
    ready = true;
    db.pragma('wal_checkpoint(PASSIVE)');
    if (delay !== workerData.intervalMs) parentPort.postMessage({ recovered: true });
    delay = workerData.intervalMs;
  } catch (error) {
    // The serving connection's backstop still checkpoints; this one waits longer each time.
    delay = Math.min(delay * 2, workerData.maxIntervalMs);
    parentPort.postMessage({ failed: String(error && error.message), retryInMs: delay });
  }
  timer = setTimeout(pass, delay);
}
timer = setTimeout(pass, delay);
parentPort.on('message', () => { clearTimeout(timer); db.close(); parentPort.close(); });
`;

export interface Checkpointer {
  /** Where failures and recoveries are logged from now on. */
  reportTo(log: Log): void;
  /** Stops the worker and closes its connection. */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  intervalMs?: number;
  /** Hears every report, each failed pass included (the log has only the first of a run). */
  onReport?: (report: CheckpointReport) => void;
}

/** Starts checkpointing the WAL database at `path` from a worker thread. */
export function startCheckpointer(path: string, options: CheckpointerOptions = {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path, intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS, maxIntervalMs: FAILING_INTERVAL_MAX_MS },
    // A connection and a timer: a small heap is plenty, and it counts in the server's RSS.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
  });
  let log: Log = QUIET;
  let failing = false;
  worker.on('message', (report: CheckpointReport) => {
    options.onReport?.(report);
    const failed = 'failed' in report;
    if (failed === failing) return;
    failing = failed;
    if (failed) log.warn({ err: report.failed, retryInMs: report.retryInMs }, 'SQLite checkpoint failed; the serving connection still checkpoints at its backstop');
    else log.info({}, 'SQLite checkpoints work again');
  });
  // A worker that fails (the file gone, a limit hit) leaves checkpoints to the backstop.
  worker.on('error', (error) => log.warn({ err: error }, 'the SQLite checkpointer stopped; the serving connection still checkpoints at its backstop'));
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    reportTo(to) {
      log = to;
    },
    async stop() {
      worker.ref(); // unreferenced, the worker would let the process end before it has closed
      worker.postMessage('stop');
      await exited;
    },
  };
}
