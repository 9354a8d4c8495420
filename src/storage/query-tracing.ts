/**
 * Spans for SQLite's queries. better-sqlite3 has no OpenTelemetry instrumentation (pg has one),
 * so the storage layer reports each statement it runs to a tracer that src/observability/tracing.ts
 * sets at the process start when traces are on. Without it nothing is wrapped: a query costs
 * what it did before.
 */
export interface SqliteQueryTracer {
  /**
   * Runs `execute` (one statement, synchronously) inside a span for `text`, the SQL with its
   * placeholders: parameter values never reach the tracer.
   */
  trace<T>(text: string, execute: () => T): T;
}

let current: SqliteQueryTracer | undefined;

/** Set once at the process start, before any database is opened. */
export function traceSqliteQueriesWith(tracer: SqliteQueryTracer): void {
  current = tracer;
}

/** The tracer databases opened from now on report to, if traces are on. */
export function sqliteQueryTracer(): SqliteQueryTracer | undefined {
  return current;
}
