/**
 * The audit sink over pino: every event is one JSON line, `{"level":30,"time":…,"audit":"<event>",
 * …fields…,"reqId":"<id>","msg":"audit"}`, on the server's standard output beside its other log
 * lines (the command line writes them to standard error: its standard output is the command's
 * answer). `reqId` is the id of the request whose answer wrote the event, as that request's own
 * lines carry it; an event no request caused has none.
 *
 * Audit lines are written at `info` whatever LOG_LEVEL says, except `silent`: LOG_LEVEL tunes
 * diagnostics, and an operator who quiets those still needs the record of who signed in.
 */
import { pino } from 'pino';
import type { AuditEvent, AuditSink } from '../core/audit.js';

export function pinoAuditSink(options: { logLevel: string; destination: 1 | 2 | { write(line: string): void } }): AuditSink {
  const stream = typeof options.destination === 'number'
    // Synchronous: the command line exits right after its one action, and must not lose its line.
    ? pino.destination({ dest: options.destination, sync: true })
    : options.destination;
  const logger = pino({ level: options.logLevel === 'silent' ? 'silent' : 'info' }, stream);
  return {
    record(event: AuditEvent, reqId?: string) {
      // `reqId` as the request's own lines carry it, so an operator finds the request of an event.
      logger.info(reqId === undefined ? event : { ...event, reqId }, 'audit');
    },
  };
}
