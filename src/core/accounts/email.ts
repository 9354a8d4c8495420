/**
 * A member's e-mail address (INTERFACE section 12): one per account, private, and verified by a
 * single-use link mailed to it (24 hours, stored as its SHA-256, used by one conditional write).
 * A change waits beside the verified address until its link is opened, and mails the verified
 * address a notice, so a hijacker cannot move the account's mail away quietly.
 */
import { siteUrls } from '../urls.js';
import { generateOpaqueId, hashSecret } from '../credentials/formats.js';
import { InputError } from '../errors.js';
import { DEFAULT_LOCALE, type Locale } from '../locales.js';
import type { Mailer } from '../mail/mailer.js';
import type { Stores } from '../stores.js';
import type { RateLimiter } from '../rate-limiter.js';
import { formatSiteTime, readerTimeZone } from '../site-time.js';
import type { Clock, Instant } from '../time.js';
import { type Throttled, throttled } from './sign-in.js';
import type { EventOrigin, SecurityLog } from './security-log.js';
import type { MemberEmail, User } from './ports.js';

export const VERIFY_LINK_MS = 24 * 3600 * 1000;
/** Verification mails one account may send in an hour: enough to fix a typo, too few to flood anyone. */
export const VERIFY_MAILS_PER_ACCOUNT = 5;
/** Verification mails one address may be sent in a day, whatever account asks: nobody is mail-bombed through the site. */
export const VERIFY_MAILS_PER_ADDRESS = 3;
/** RFC 5321 4.5.3.1.3: a path is at most 256 octets, an address in it 254. */
export const EMAIL_MAX_LENGTH = 254;

export interface EmailDeps {
  stores: Stores;
  limiter: RateLimiter;
  clock: Clock;
  mailer: Mailer;
  securityLog: SecurityLog;
  settings: { baseUrl: string; siteTimeZone: string };
}

/**
 * An address a mail can be sent to: one `@`, a local part and a domain with a dot, no spaces or
 * control characters, at most 254 characters (RFC 5321 4.5.3.1.3). Whether it exists only the
 * verification link tells.
 */
export function checkEmailAddress(raw: string): string {
  const address = raw.trim();
  if (address === '') throw InputError.worded('email', 'enter an e-mail address', { key: 'recovery.emailMissing' });
  if (address.length > EMAIL_MAX_LENGTH || !/^[^\s@<>()[\]\\,;:"\p{Cc}]+@[^\s@<>()[\]\\,;:"\p{Cc}]+\.[^\s@<>()[\]\\,;:"\p{Cc}.][^\s@<>()[\]\\,;:"\p{Cc}]*$/u.test(address)) {
    throw InputError.worded('email', 'enter an e-mail address such as name@example.com', { key: 'recovery.emailInvalid' });
  }
  return address;
}

/** The lower-cased address, by which a forgotten-password request finds it. */
export function emailKey(address: string): string {
  return address.trim().toLowerCase();
}

/**
 * The language of a mail to a member: their saved language; else the one of the page that caused
 * it, the one they last used; else, for a mail no page caused (a leak report, a change by staff),
 * the one of the page they gave their address on; else the site's default.
 */
export function mailLocale(user: Pick<User, 'language'>, pageLocale: Locale | undefined, address?: Pick<MemberEmail, 'language'>): Locale {
  return user.language ?? pageLocale ?? address?.language ?? DEFAULT_LOCALE;
}

/** A time in a mail to a member, as the pages show it to them: in their saved zone, else the site's. */
export function mailTime(instant: Instant, user: Pick<User, 'timeZone'>, siteTimeZone: string): string {
  return formatSiteTime(instant, readerTimeZone(user.timeZone, siteTimeZone));
}

/** Queues a new verification link for `address` (earlier ones stop working), in `tx`. */
async function mailVerificationLink(deps: EmailDeps, tx: Stores, user: User, address: string, locale: Locale): Promise<void> {
  const now = deps.clock.now();
  const token = generateOpaqueId();
  await tx.memberEmails.endLinks(user.id, 'verify_email', now);
  const link = { tokenHash: hashSecret(token), userId: user.id, purpose: 'verify_email', addressKey: emailKey(address), expiresAt: now + VERIFY_LINK_MS } as const;
  await tx.memberEmails.createLink(link, now);
  // Greeted by username, not nickname: the address is not known to be the member's yet, and a
  // nickname is free text that a stranger's mail from the site must not carry. The end of the
  // link is the one stored, as a time: the mail may wait in the outbox long after it was queued.
  await deps.mailer.send(tx, {
    to: address, userId: user.id, locale, name: 'verifyEmail',
    values: { name: user.username, link: siteUrls(deps.settings.baseUrl).verifyEmail(token), hours: VERIFY_LINK_MS / 3600_000, expires: mailTime(link.expiresAt, user, deps.settings.siteTimeZone) },
  }, now);
}

export type EmailChange = { ok: true; changed: boolean } | { ok: false; reason: 'no_mail' } | Throttled;

/**
 * Gives the account an address and mails it a link; the same address again, not yet verified,
 * mails a new link. A verified address stays the account's until the new one is verified (GitHub
 * and Google keep it too): a typo or a borrowed session never takes the way back in away. The
 * verified address is told of the change, with the way to cancel it; asking for it again cancels
 * a pending change.
 */
export async function changeEmail(deps: EmailDeps, user: User, raw: string, origin: EventOrigin, pageLocale: Locale): Promise<EmailChange> {
  if (!deps.mailer.enabled) return { ok: false, reason: 'no_mail' };
  const address = checkEmailAddress(raw);
  const current = await deps.stores.memberEmails.find(user.id);
  if (current && current.verifiedAt !== null && emailKey(current.address) === emailKey(address)) {
    if (current.pending !== null) await cancelEmailChange(deps, user.id);
    return { ok: true, changed: false };
  }
  const now = deps.clock.now();
  for (const [key, limit, seconds] of [[`verify-mail:account:${user.id}`, VERIFY_MAILS_PER_ACCOUNT, 3600], [`verify-mail:address:${hashSecret(emailKey(address))}`, VERIFY_MAILS_PER_ADDRESS, 86_400]] as const) {
    const hit = await deps.limiter.hit(key, limit, seconds, now);
    if (!hit.allowed) return throttled(hit, now);
  }
  const after = await deps.stores.transaction(async (tx) => {
    const before = await tx.memberEmails.find(user.id);
    const row = await tx.memberEmails.set(user.id, address, pageLocale, deps.clock.now());
    const locale = mailLocale(user, pageLocale);
    await mailVerificationLink(deps, tx, user, address, locale);
    // Told once a change, when it is asked: the verified address is the one a hijacker would
    // want gone, and it can still cancel the change.
    const wasPending = before?.pending ?? null;
    if (row.pending !== null && (wasPending === null || emailKey(wasPending) !== emailKey(address))) {
      await deps.mailer.send(tx, { to: row.address, userId: user.id, locale, name: 'noticeEmailChanged', values: { name: user.nickname, settingsLink: siteUrls(deps.settings.baseUrl).emailSettings() } }, deps.clock.now());
    }
    return { row, before };
  });
  const asked = after.row.pending ?? after.row.address;
  const before = after.before?.pending ?? after.before?.address;
  if (before === undefined || emailKey(before) !== emailKey(asked)) await deps.securityLog.record({ userId: user.id, kind: 'email.changed', origin });
  return { ok: true, changed: true };
}

/** Drops a change waiting for its link: the verified address stays, and the links mailed to the new one stop working. */
export async function cancelEmailChange(deps: Pick<EmailDeps, 'stores' | 'clock'>, userId: number): Promise<boolean> {
  return deps.stores.transaction(async (tx) => {
    const now = deps.clock.now();
    if (!await tx.memberEmails.cancelPending(userId, now)) return false;
    await tx.memberEmails.endLinks(userId, 'verify_email', now);
    return true;
  });
}

/** Uses a verification link: the address it was mailed to is verified, if it is still the account's or its pending one, which then replaces the old. */
export async function verifyEmail(deps: EmailDeps, token: string, origin: EventOrigin): Promise<boolean> {
  const now = deps.clock.now();
  const userId = await deps.stores.transaction(async (tx) => {
    const link = await tx.memberEmails.consumeLink(hashSecret(token), 'verify_email', now);
    if (!link || link.addressKey === null) return undefined;
    return (await tx.memberEmails.markVerified(link.userId, link.addressKey, now)) ? link.userId : undefined;
  });
  if (userId === undefined) return false;
  await deps.securityLog.record({ userId, kind: 'email.verified', origin });
  return true;
}

