/** How long a sign-in session lives (INTERFACE section 8; OWASP Session Management: idle and absolute timeouts). */
import { createHash } from 'node:crypto';
import type { Session, SessionStore, User } from './ports.js';
import { type Instant, days, lastUseDue } from '../time.js';

/** A session ends this long after its sign-in, however active. */
export const SESSION_LIFETIME_MS = days(14);
/** A session ends after this long without a request. */
export const SESSION_IDLE_MS = days(7);

export function isIdle(session: Pick<Session, 'lastSeenAt'>, now: Instant): boolean {
  return now - session.lastSeenAt >= SESSION_IDLE_MS;
}

/**
 * The sign-in a session's id (its hash) stands for at `now`: the session not ended, expired or
 * idle, and its account active (INTERFACE section 4: any other status ends every session); else
 * `undefined`. One rule for every page and for a download that outlasts its request.
 */
export async function liveSignIn(sessions: Pick<SessionStore, 'findLive'>, idHash: string, now: Instant): Promise<{ session: Session; user: User } | undefined> {
  const found = await sessions.findLive(idHash, now);
  return found && found.user.status === 'active' && !isIdle(found.session, now) ? found : undefined;
}

/** Activity is recorded to the minute, so a busy browser writes once a minute at most (`lastUseDue`: never while the clock is behind it). */
export function needsTouch(session: Pick<Session, 'lastSeenAt'>, now: Instant): boolean {
  return lastUseDue(session.lastSeenAt, now);
}

/**
 * The session's `sid` (OpenID Back-Channel Logout 1.0 section 2.1; Front-Channel Logout 1.0
 * section 3): the id_tokens of grants approved in it and the logout token sent when it ends
 * carry it, so an app can tell which of its sessions came from which sign-in here. Made from
 * the stored hash of the cookie, so every instance computes the same one and it tells nothing
 * about the cookie itself.
 */
export function sessionSid(session: Pick<Session, 'idHash'>): string {
  return createHash('sha256').update(`svc-sid:${session.idHash}`).digest('base64url');
}

/**
 * How recent a sign-in must be for the changes that could lock the owner out or let someone in
 * later (adding a passkey, turning two-step verification on or off, new recovery codes): a
 * session stolen from an unattended browser an hour ago cannot make them (GitHub's "sudo mode").
 */
export const RECENT_SIGN_IN_MS = 15 * 60 * 1000;

export function isRecentSignIn(session: Pick<Session, 'authTime'>, now: Instant): boolean {
  return now - session.authTime <= RECENT_SIGN_IN_MS && now >= session.authTime;
}
