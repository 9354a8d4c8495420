/** Where the core's long-running work (queues, background tasks) reports: the server's logger. */
export interface Log {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** Reports nowhere: until the app gives its logger. */
export const QUIET: Log = { info: () => {}, warn: () => {}, error: () => {} };
