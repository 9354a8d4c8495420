/** Keeps the tables bounded: what `svc janitor` does, on a timer inside the server. */
import { MAIL_MAX_AGE_MS } from './core/mail/outbox.js';
import { DELIVERY_MAX_AGE_MS } from './core/oidc/logout/delivery.js';
import { DOCUMENT_CLIENT_GRACE_MS } from './core/oauth/client-metadata.js';
import { SELF_REGISTERED_GRACE_MS } from './core/oauth/dynamic-registration.js';
import { SEALED_ANSWER_KEPT_MS } from './core/oauth/tokens/replay.js';
import type { Deps } from './deps.js';

/** How long a revoked or expired row is kept for audit before it is deleted. */
export const AUDIT_WINDOW_MS = 7 * 86_400_000;
/** How long the account security log keeps an event (issue 18 item 5). */
export const SECURITY_LOG_WINDOW_MS = 90 * 86_400_000;
/** Rows per DELETE, so no statement holds the hot tables for long. */
export const JANITOR_BATCH_SIZE = 500;

export function runJanitor(deps: Pick<Deps, 'stores' | 'clock' | 'settings'>): Promise<Record<string, number>> {
  return deps.stores.housekeeping.purge(deps.clock.now(), {
    auditWindowMs: AUDIT_WINDOW_MS,
    batchSize: JANITOR_BATCH_SIZE,
    grantLifetimeMs: deps.settings.refreshTokenTtlSeconds * 1000,
    deliveryMaxAgeMs: DELIVERY_MAX_AGE_MS,
    mailMaxAgeMs: MAIL_MAX_AGE_MS,
    securityLogWindowMs: SECURITY_LOG_WINDOW_MS,
    selfRegisteredGraceMs: SELF_REGISTERED_GRACE_MS,
    documentClientGraceMs: DOCUMENT_CLIENT_GRACE_MS,
    sealedAnswerMaxAgeMs: SEALED_ANSWER_KEPT_MS,
  });
}

/** Sweeps every `janitorIntervalSeconds` (with jitter, so instances spread out); returns a stop function. */
export function scheduleJanitor(deps: Deps, log: { info(o: object, m: string): void; warn(o: object, m: string): void }): () => void {
  const seconds = deps.settings.janitorIntervalSeconds;
  if (seconds === 0) return () => {};
  let timer: NodeJS.Timeout;
  const next = () => {
    timer = setTimeout(async () => {
      try {
        log.info({ deleted: await runJanitor(deps) }, 'janitor sweep');
      } catch (error) {
        log.warn({ err: error }, 'janitor sweep failed; will retry');
      }
      next();
    }, seconds * 1000 * (0.75 + Math.random() / 2));
    timer.unref();
  };
  next();
  return () => clearTimeout(timer);
}
