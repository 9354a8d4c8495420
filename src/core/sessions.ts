/** How long a sign-in session lives (INTERFACE section 8; OWASP Session Management: idle and absolute timeouts). */
import type { Session } from './ports.js';
import { type Instant, LAST_USED_RESOLUTION_MS, days } from './time.js';

/** A session ends this long after its sign-in, however active. */
export const SESSION_LIFETIME_MS = days(14);
/** A session ends after this long without a request. */
export const SESSION_IDLE_MS = days(7);

export function isIdle(session: Pick<Session, 'lastSeenAt'>, now: Instant): boolean {
  return now - session.lastSeenAt >= SESSION_IDLE_MS;
}

/** Activity is recorded to the minute, so a busy browser writes once a minute at most. */
export function needsTouch(session: Pick<Session, 'lastSeenAt'>, now: Instant): boolean {
  return now - session.lastSeenAt >= LAST_USED_RESOLUTION_MS || now < session.lastSeenAt;
}
