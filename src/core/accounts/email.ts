/**
 * A member's e-mail address (INTERFACE section 12): one per account, private, and verified by a
 * single-use link mailed to it (24 hours, stored as its SHA-256, used by one conditional write).
 * A change waits beside the verified address until its link is opened, and mails the verified
 * address a notice, so a hijacker cannot move the account's mail away quietly.
 */
import { createHmac } from 'node:crypto';
import { domainToASCII, domainToUnicode } from 'node:url';
import { siteUrls } from '../urls.js';
import { constantTimeEqual, generateOpaqueId, hashSecret } from '../credentials/formats.js';
import { AccountUnusableError, InputError } from '../errors.js';
import { DEFAULT_LOCALE, type Locale } from '../locales.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailState } from '../mail/ports.js';
import type { Stores } from '../stores.js';
import { type RateLimitDecision, type RateLimiter, sameWindow } from '../rate-limiter.js';
import { formatSiteTime, readerTimeZone } from '../site-time.js';
import type { SharedKeys } from '../credentials/shared-keys.js';
import type { Clock, Instant } from '../time.js';
import { isolated, unitsBeforeNormalizing } from '../text.js';
import { type Throttled, throttled } from './sign-in.js';
import type { EventOrigin, SecurityLog } from './security-log.js';
import type { EmailLink, MemberEmail, User } from './ports.js';

export const VERIFY_LINK_MS = 24 * 3600 * 1000;
/** Verification mails one account may send in an hour: enough to fix a typo, too few to flood anyone. */
export const VERIFY_MAILS_PER_ACCOUNT = 5;
/** Verification mails one address may be sent in a day, whatever account asks: nobody is mail-bombed through the site. */
export const VERIFY_MAILS_PER_ADDRESS = 3;
/** RFC 5321 4.5.3.1.3: a path is at most 256 octets, an address in it 254. */
export const EMAIL_MAX_LENGTH = 254;
/** Longer, trimmed, is refused before NFKC reads it (`unitsBeforeNormalizing`): a form field holds up to 64 KB. */
const EMAIL_MAX_UNITS = unitsBeforeNormalizing(EMAIL_MAX_LENGTH);

export interface EmailDeps {
  stores: Stores;
  limiter: RateLimiter;
  clock: Clock;
  mailer: Mailer;
  securityLog: SecurityLog;
  sharedKeys: SharedKeys;
  settings: { baseUrl: string; siteTimeZone: string };
}

/**
 * An address as typed, read as mail reads it: trimmed, after NFKC (Unicode UAX #15), and with the
 * domain's ideographic full stops as dots. A domain is read by IDNA, whose mapping (UTS #46 section
 * 4) holds NFKC and those dots (section 2.3), so `name@ｇｍａｉｌ.com` and `name@qq。com`, what a
 * Chinese input method types in full-width or Chinese mode, reach the mailbox they read as; a local
 * part in full-width letters is an input method's slip, not another mailbox.
 */
export function readEmailAddress(raw: string): string {
  const address = raw.normalize('NFKC').trim();
  const at = address.lastIndexOf('@');
  return at < 0 ? address : address.slice(0, at + 1) + address.slice(at + 1).replaceAll('\u3002', '.');
}

/** What an address has none of: a character that ends or splits it, a space, control or format character. */
const NOT_IN_ADDRESS = String.raw`\s@<>()[\]\\,;:"\p{Cc}\p{Cf}`;
/**
 * A domain label: not empty (RFC 5321 4.1.2, `Domain`), and not begun by a combining mark (RFC 5891
 * 4.2.3.2): a label of only a variation selector is empty to IDNA, and mailed as a label that
 * names no domain.
 */
const LABEL = `[^${NOT_IN_ADDRESS}.\\p{M}][^${NOT_IN_ADDRESS}.]*`;
/** A domain of two labels or more (`LABEL`), with the root's final dot or not. */
const ADDRESS_SHAPE = new RegExp(`^[^${NOT_IN_ADDRESS}]+@(?:${LABEL}\\.)+${LABEL}\\.?$`, 'u');

/**
 * An address a mail can be sent to, as read (`readEmailAddress`): one `@`, a local part and a
 * domain with a dot and no empty label (`ex..ample.test`, `.example.test`, `ex.\uFE0F.test`: no mail
 * server takes one, and the outbox would try it for a day), no spaces, control or invisible format characters (a soft hyphen or a
 * zero-width space makes an address look like another, and is never the one meant), at most 254
 * characters (RFC 5321 4.5.3.1.3). Whether it exists only the verification link tells.
 */
export function checkEmailAddress(raw: string): string {
  const invalid = () => InputError.worded('email', 'enter an e-mail address such as name@example.com', { key: 'recovery.emailInvalid' });
  if (raw.trim().length > EMAIL_MAX_UNITS) throw invalid();
  const address = readEmailAddress(raw);
  if (address === '') throw InputError.worded('email', 'enter an e-mail address', { key: 'recovery.emailMissing' });
  if (address.length > EMAIL_MAX_LENGTH || !ADDRESS_SHAPE.test(address)) throw invalid();
  return address;
}

/**
 * The lower-cased address: the key an address is stored and found by (a forgotten-password
 * request, a verification link, the refusal of a mail to it). Folded here, in application code,
 * alike on every database: SQLite's `lower()` folds ASCII letters only, so `Ä` and `ä` were two
 * addresses there and one on PostgreSQL.
 */
export function emailKey(address: string): string {
  return address.trim().toLowerCase();
}

/**
 * The mailbox an address reaches, as the per-address limit of verification mails and a "Not you?"
 * pass count it (T65): as read (`readEmailAddress`), lower-cased, with no subaddress (what follows
 * a `+` in the local part, RFC 5233 section 1), no final dot of the domain, the domain in its
 * IDNA ASCII form (UTS #46 ToASCII: `例子.com` and `xn--fsqu00a.com` are one domain in DNS, so one
 * mailbox; a domain IDNA refuses, or maps to one the mail does not go to, is kept as read:
 * `asciiDomain`), and, at Gmail, which reads none, no dots in the local part and one domain for
 * gmail.com and googlemail.com. Counted by the address as typed, one account mailed a stranger's
 * inbox three times a spelling, as many spellings as it liked.
 */
export function mailboxKey(address: string): string {
  const key = emailKey(readEmailAddress(address));
  const at = key.lastIndexOf('@');
  let local = key.slice(0, at);
  let domain = asciiDomain(key.slice(at + 1).replace(/\.+$/, ''));
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  if (domain === 'googlemail.com') domain = 'gmail.com';
  if (domain === 'gmail.com') local = local.replace(/\./g, '');
  return `${local}@${domain}`;
}

/**
 * A domain in its IDNA ASCII form (UTS #46 ToASCII) where that is the domain its mail goes to,
 * else as read. The mail transport punycodes each label as it stands, so a label IDNA would first
 * map (a `%` escape it decodes, a variation selector or combining grapheme joiner it drops, a
 * number it reads as an IPv4 address) names another domain: counted as the one it maps to, mail
 * that never reaches a mailbox used up its limit, and its holder got no "Not you?" link (T65).
 * Each label must be its ASCII form, or the Unicode form that ASCII form stands for.
 */
function asciiDomain(read: string): string {
  const ascii = domainToASCII(read);
  const labels = read.split('.');
  const asciiLabels = ascii.split('.');
  const unicodeLabels = domainToUnicode(ascii).split('.');
  const asMailed = ascii !== '' && asciiLabels.length === labels.length
    && labels.every((label, i) => label === asciiLabels[i] || label === unicodeLabels[i]);
  return asMailed ? ascii : read;
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

/** The outbox's name for a verification mail (`mail.json`). */
const VERIFY_MAIL = 'verifyEmail';

/**
 * Queues a new verification link for `address` (earlier ones stop working), in `tx`, with its
 * mail, at `now`, the time its limits counted it: the account's newest verification mail is its
 * last link's (`lastLinkTo`). Its verification mails still waiting after a failed attempt (the
 * relay down) carry links that have just stopped working: they are superseded, never sent, and
 * returned, so a member does not get, once the relay is back, one mail that works and others whose
 * links say they are used or invalid.
 */
async function mailVerificationLink(deps: EmailDeps, tx: Stores, user: User, address: string, locale: Locale, now: Instant): Promise<Array<{ to: string; createdAt: Instant }>> {
  const token = generateOpaqueId();
  await tx.memberEmails.endLinks(user.id, 'verify_email', now);
  const link = { tokenHash: hashSecret(token), userId: user.id, purpose: 'verify_email', addressKey: emailKey(address), expiresAt: now + VERIFY_LINK_MS } as const;
  await tx.memberEmails.createLink(link, now);
  // Greeted by username, not nickname: the address is not known to be the member's yet, and a
  // nickname is free text that a stranger's mail from the site must not carry. The end of the
  // link is the one stored, as a time: the mail may wait in the outbox long after it was queued.
  const queued = await deps.mailer.send(tx, {
    to: address, userId: user.id, locale, name: VERIFY_MAIL,
    values: { name: user.username, link: siteUrls(deps.settings.baseUrl).verifyEmail(token), refuseLink: siteUrls(deps.settings.baseUrl).refuseEmail(token), hours: VERIFY_LINK_MS / 3600_000, expires: mailTime(link.expiresAt, user, deps.settings.siteTimeZone) },
  }, now);
  // The new mail, not tried yet, is not superseded (`MailOutboxStore.supersede`).
  return queued ? tx.mailOutbox.supersede(user.id, VERIFY_MAIL, now) : [];
}

export type EmailChange =
  /** `cancelled`: the pending change dropped by mailing the verified address a new link (its last mail refused), if one was waiting. */
  | { ok: true; changed: true; cancelled: string | null }
  /** The verified address again: nothing to mail; `cancelled` is the pending change it dropped, if one was waiting. */
  | { ok: true; changed: false; cancelled: string | null }
  | { ok: false; reason: 'no_mail' }
  /**
   * `byAddress`: the address's own limit, which a browser that answered one of its mails passes
   * (`refuseEmailLink`). `lastLink`: the link last mailed to this account for that mailbox, while
   * it still works: a member waiting for their own link needs no new one, and one whose mail the
   * outbox gave up must be told no link is coming.
   */
  | (Throttled & { byAddress: boolean; lastLink: LastLink | null });

/**
 * The account's newest verification link, while it works: the address it verifies (lower-cased),
 * when it ends, and where its mail is: handed to the mail server, waiting in the outbox, handed
 * whole to a server that never answered its end, so it may have arrived or not, or given up by the
 * outbox for the site's own reasons (its relay, its message), so that it never arrives.
 */
export interface LastLink {
  address: string;
  expiresAt: Instant;
  mail: MailState;
}

/**
 * The link last mailed to the account for `address`'s mailbox, while it works: a refused save mails
 * nothing, so that link is still the one to open, once its mail went out. None when the mailbox's
 * server refused its mail (`refusalCode`: the page says so already, attack236) or the outbox has no
 * record of it. A mail the outbox gave up is returned as such: the member waits for nothing, and
 * is not sent to the "Not you?" link of a mail that never arrived.
 */
async function lastLinkTo(deps: EmailDeps, userId: number, current: MemberEmail | undefined, address: string, now: Instant): Promise<LastLink | null> {
  const link = await deps.stores.memberEmails.findAccountLiveLink(userId, 'verify_email', now);
  if (link === undefined || link.addressKey === null || mailboxKey(link.addressKey) !== mailboxKey(address)) return null;
  const refused = undeliveredOf(current).some((undelivered) => mailboxKey(undelivered.address) === mailboxKey(address));
  if (refused) return null;
  const mail = await newestVerifyMailTo(deps.stores, userId, link.addressKey);
  return mail === undefined ? null : { address: link.addressKey, expiresAt: link.expiresAt, mail };
}

/**
 * Where the account's newest verification mail is, when it was mailed to `addressKey` (`emailKey`):
 * none when a newer one went to another address, or the outbox keeps no record of it.
 */
async function newestVerifyMailTo(stores: Stores, userId: number, addressKey: string): Promise<MailState | undefined> {
  const mail = await stores.mailOutbox.newest(userId, VERIFY_MAIL);
  return mail !== undefined && emailKey(mail.to) === addressKey ? mail.state : undefined;
}

/**
 * Gives the account an address and mails it a link; the same address again, not yet verified,
 * mails a new link. A verified address stays the account's until the new one is verified (GitHub
 * and Google keep it too): a typo or a borrowed session never takes the way back in away. The
 * verified address is told of the change, with the way to cancel it; asking for it again cancels
 * a pending change. `pass` is the browser's mailbox pass (`mailboxPass`), if it holds one.
 */
export async function changeEmail(deps: EmailDeps, user: User, raw: string, origin: EventOrigin, pageLocale: Locale, pass?: string): Promise<EmailChange> {
  if (!deps.mailer.enabled) return { ok: false, reason: 'no_mail' };
  const address = checkEmailAddress(raw);
  const current = await deps.stores.memberEmails.find(user.id);
  // The verified address again keeps it, unless its last mail was refused: then, as for an address
  // not verified, saving it again sends it a new link, whose delivery shows it receives mail again.
  if (current && current.verifiedAt !== null && emailKey(current.address) === emailKey(address) && current.refusalCode === null) {
    // The member who types the address they have means to keep it: a change waiting is dropped,
    // and the page says which (only the one this call dropped: another page may have asked anew).
    const cancelled = (current.pending !== null && await cancelEmailChange(deps, user.id, emailKey(current.pending))) ? current.pending : null;
    return { ok: true, changed: false, cancelled };
  }
  const now = deps.clock.now();
  const limits: Array<readonly [string, number, number, boolean]> = [[`verify-mail:account:${user.id}`, VERIFY_MAILS_PER_ACCOUNT, 3600, false]];
  // Whoever answered a mail sent to the address holds it: its own ask is not one more unwanted mail.
  // Both by the mailbox (`mailboxKey`): its spellings share one limit, and its reader's one pass.
  if (!(pass !== undefined && await holdsMailboxPass(deps, pass, mailboxKey(address), now))) {
    limits.push([`verify-mail:address:${hashSecret(mailboxKey(address))}`, VERIFY_MAILS_PER_ADDRESS, 86_400, true]);
  }
  // A save refused, or one that mails nothing, takes back every hit it counted (`RateLimiter.refund`),
  // the refusing one too: the limits count mails, so a save the address's limit refuses uses up
  // none of the account's mails an hour, whatever order racing saves were counted in (attack236).
  const counted: Array<{ key: string; seconds: number; byAddress: boolean; decision: RateLimitDecision }> = [];
  const refund = () => Promise.all(counted.map((c) => deps.limiter.refund(c.key, c.seconds, now, c.decision)));
  for (const [key, limit, seconds, byAddress] of limits) {
    const hit = await deps.limiter.hit(key, limit, seconds, now);
    counted.push({ key, seconds, byAddress, decision: hit });
    if (!hit.allowed) {
      await refund();
      return { ...throttled(hit, now), byAddress, lastLink: await lastLinkTo(deps, user.id, current, address, now) };
    }
  }
  const { asked, cancelled, superseded } = await deps.stores.transaction(async (tx) => {
    // The address, its link and its mails are written only for an active account, which the
    // member's own deletion then waits for, or they wait for it and see it: written after its
    // erase, they would keep the address of an account that is gone.
    if (!(await tx.users.holdActive(user.id))) throw new AccountUnusableError(`account "${user.username}" is not active; only an active account can give an e-mail address`);
    const { email: row, changeStarted } = await tx.memberEmails.set(user.id, address, pageLocale, deps.clock.now());
    const locale = mailLocale(user, pageLocale);
    const superseded = await mailVerificationLink(deps, tx, user, address, locale, now);
    // Told once a change, by the write that made it pending: the verified address is the one a
    // hijacker would want gone, and it can still cancel the change. A new link for the same
    // pending address, or a racing request for it, tells it nothing new.
    if (changeStarted) {
      // The nickname, isolated where it could reorder the greeting (UAX #9, `isolated`).
      await deps.mailer.send(tx, { to: row.address, userId: user.id, locale, name: 'noticeEmailChanged', values: { name: isolated(user.nickname), settingsLink: siteUrls(deps.settings.baseUrl).emailSettings() } }, deps.clock.now());
    }
    // The verified address again drops a change waiting (`set`), as keeping it does: the page says which.
    const dropped = row.verifiedAt !== null && row.pending === null && emailKey(row.address) === emailKey(address) ? current?.pending ?? null : null;
    // The security log's `email.changed` is a change asked: a new pending address, or a new address not verified.
    return { asked: changeStarted || (row.verifiedAt === null && (current === undefined || emailKey(current.address) !== emailKey(address))), cancelled: dropped, superseded };
  }).catch(async (error: unknown) => {
    // Rolled back (an account no longer active, the database away): no mail was queued.
    await refund();
    throw error;
  });
  // The limits count mails that may reach someone. A superseded mail never left (every attempt
  // failed, and it is given up) and bothered no one: this save's mail takes its place, so this
  // save's count is taken back from each limit that counted that mail in this window (the
  // address's only for a mail to the same mailbox), once a save, from the counter that counted
  // it (Redis, or this instance's memory); each mail is superseded by one conditional write, so
  // once. A relay down for hours thus leaves a member one mail waiting, and their day's mails unspent.
  for (const c of counted) {
    const replaced = superseded.some((mail) => sameWindow(mail.createdAt, now, c.seconds) && (!c.byAddress || mailboxKey(mail.to) === mailboxKey(address)));
    if (replaced) await deps.limiter.refund(c.key, c.seconds, now, c.decision);
  }
  if (asked) await deps.securityLog.record({ userId: user.id, kind: 'email.changed', origin });
  return { ok: true, changed: true, cancelled };
}

/** An address of the member's whose newest mail its server refused, and the server's reply code (never its words). */
export interface UndeliveredAddress {
  address: string;
  replyCode: number;
}

/**
 * The member's address as their e-mail settings show it, with the addresses (theirs, and the one
 * a change waits for) whose newest mail their server refused and was given up (refused for good,
 * or for a day), kept with the address (`refusalCode`), so they learn it did not arrive however

 * long after; a mail accepted since, a change or a verification clears it. `linkMail`: where the
 * newest verification mail of the address waiting for its link (the pending one, else one not
 * verified) is when the page cannot say "open the link we mailed": `given_up` by the outbox for
 * the site's own reasons (its relay, its message; not its server refusing the address, which
 * `undelivered` says), so no link is coming; or `maybe_sent`, its server never answered its end,
 * so it may have arrived or not.
 */
export async function emailSettings(deps: Pick<EmailDeps, 'stores'>, userId: number): Promise<{ email: MemberEmail | undefined; undelivered: UndeliveredAddress[]; linkMail: LinkMail | null }> {
  const email = await deps.stores.memberEmails.find(userId);
  const [waiting, refusal] = email === undefined ? [null, null]
    : email.pending !== null ? [email.pending, email.pendingRefusalCode]
    : email.verifiedAt === null ? [email.address, email.refusalCode] : [null, null];
  const mail = waiting !== null && refusal === null ? await newestVerifyMailTo(deps.stores, userId, emailKey(waiting)) : undefined;
  return { email, undelivered: undeliveredOf(email), linkMail: mail === 'given_up' || mail === 'maybe_sent' ? mail : null };
}

/** Where a verification mail is when its link may not be in the member's mailbox (`emailSettings`). */
export type LinkMail = Extract<MailState, 'given_up' | 'maybe_sent'>;

/** The member's addresses (theirs, and the one a change waits for) whose newest mail their server refused. */
function undeliveredOf(email: MemberEmail | undefined): UndeliveredAddress[] {
  const refusals = email === undefined ? [] : [[email.address, email.refusalCode], [email.pending, email.pendingRefusalCode]] as const;
  return refusals.flatMap(([address, replyCode]) => (address === null || replyCode === null ? [] : [{ address, replyCode }]));
}

/**
 * Drops a change waiting for its link: the verified address stays, and the links mailed to the new
 * one stop working. `pendingKey`: only if that (lower-cased) address is the one waiting.
 */
export async function cancelEmailChange(deps: Pick<EmailDeps, 'stores' | 'clock'>, userId: number, pendingKey?: string): Promise<boolean> {
  return deps.stores.transaction(async (tx) => {
    const now = deps.clock.now();
    if (!await tx.memberEmails.cancelPending(userId, now, pendingKey)) return false;
    await tx.memberEmails.endLinks(userId, 'verify_email', now);
    return true;
  });
}

/** How long a browser that refused a verification link may ask for its address past the address's limit. */
export const MAILBOX_PASS_MS = 24 * 3600 * 1000;

function passMac(key: Buffer, addressKey: string, end: number): string {
  return createHmac('sha256', key).update(`svc-mailbox-pass:${end}:${addressKey}`).digest('base64url');
}

/**
 * A pass proving that this browser opened a link mailed to the mailbox `addressKey` (`mailboxKey`:
 * any spelling of it; its end and an HMAC under a key every instance shares; the address is not in
 * it). Nothing is stored.
 */
async function mailboxPass(deps: EmailDeps, addressKey: string, now: Instant): Promise<string> {
  const end = now + MAILBOX_PASS_MS;
  return `${end}.${passMac(await deps.sharedKeys.key('mailbox-pass-hmac'), addressKey, end)}`;
}

async function holdsMailboxPass(deps: EmailDeps, pass: string, addressKey: string, now: Instant): Promise<boolean> {
  const [endText, mac, ...rest] = pass.split('.');
  if (rest.length > 0 || endText === undefined || mac === undefined || !/^\d{1,15}$/.test(endText)) return false;
  const end = Number(endText);
  if (end <= now) return false;
  return constantTimeEqual(mac, passMac(await deps.sharedKeys.key('mailbox-pass-hmac'), addressKey, end));
}

/**
 * A verification link as its "Not you?" page shows it: the account that asked, the address, and
 * whether the link was refused already. Any link mailed to the address that has not expired, used
 * or ended too: it proves a mail reached the address, which is all refusing needs (an account that
 * asked for the address and then changed it ends its links, and must not leave the reader of its
 * mails without their "Not you?").
 */
export async function findVerificationLink(deps: Pick<EmailDeps, 'stores' | 'clock'>, token: string): Promise<{ username: string; address: string; refused: boolean } | undefined> {
  const link = await deps.stores.memberEmails.findLink(hashSecret(token), 'verify_email');
  if (link === undefined || link.addressKey === null || link.expiresAt <= deps.clock.now()) return undefined;
  const user = await deps.stores.users.findById(link.userId);
  return user && { username: user.username, address: link.addressKey, refused: link.refusedAt !== null };
}

/**
 * `released`: the account that asked still waited for the address, and lost it (else it had
 * verified it, or moved on). `already_refused`: the link was refused before, which did all there
 * was to do.
 */
export type EmailRefusal = { ok: true; address: string; pass: string; released: boolean } | { ok: false; reason: 'already_refused' | 'invalid' };

/**
 * "Not you?" (docs/threat-model.md T65): the reader of a verification mail who did not ask for it
 * refuses its link (any not expired: `findVerificationLink`), once. The link ends, the account
 * that asked loses the address if it still waits for it (its pending change to it, or the address
 * not verified; a verified address stays) with its links, and the browser is given a pass
 * (`MAILBOX_PASS_MS`) with which the address's own limit, used up by unwanted mails, does not
 * refuse its reader's own request. The refusal is one conditional write on the link (`refuseLink`),
 * so the form sent again, or a link refused before the account asked for the address anew, takes
 * nothing off it a second time.
 */
export async function refuseEmailLink(deps: EmailDeps, token: string, requestId?: string): Promise<EmailRefusal> {
  const now = deps.clock.now();
  const tokenHash = hashSecret(token);
  const refused = await deps.stores.transaction(async (tx) => {
    const link = await tx.memberEmails.refuseLink(tokenHash, now);
    if (link === undefined || link.addressKey === null) {
      // Nothing refused now: one read of the link words the answer (the write above decided;
      // refused before, by another request too, or no link to refuse).
      const stored = await tx.memberEmails.findLink(tokenHash, 'verify_email');
      return stored?.refusedAt != null && stored.addressKey !== null && stored.expiresAt > now ? 'already_refused' as const : 'invalid' as const;
    }
    const released = await tx.memberEmails.release(link.userId, link.addressKey, now);
    if (released) await tx.memberEmails.endLinks(link.userId, 'verify_email', now);
    return { userId: link.userId, addressKey: link.addressKey, released };
  });
  if (typeof refused === 'string') return { ok: false, reason: refused };
  // Recorded with no origin: the refuser is the reader of the mailbox, a stranger to the account
  // that typed the address, whose holder reads this log; their network address and browser are
  // none of its business (T65; the request log keeps them for the operator, as a leak report's,
  // and the audit line names that request, `requestId`).
  if (refused.released) await deps.securityLog.record({ userId: refused.userId, kind: 'email.refused', requestId });
  return { ok: true, address: refused.addressKey, pass: await mailboxPass(deps, mailboxKey(refused.addressKey), now), released: refused.released };
}

/** Who opened a verification link: where from, and which account its browser is signed in as, if any. */
export interface LinkOpener {
  origin: EventOrigin;
  signedInUserId: number | undefined;
}

/**
 * What opening a verification link did, or finds: `verified` also for a link opened again once its
 * address is verified; `account_inactive` is a link of an account that is not active, which verifies nothing.
 */
export type EmailVerification = 'verified' | 'invalid' | 'account_inactive';

/**
 * Uses a verification link: the address it was mailed to is verified, if it is still the account's
 * or its pending one, which then replaces the old, and the account is active (INTERFACE section 4:
 * nothing is made for an account that is not; leaving `active` ended its links and its pending
 * change, `revokeAccountCredentials`, and the write checks the status again in its own statement).
 */
export async function verifyEmail(deps: EmailDeps, token: string, opener: LinkOpener): Promise<EmailVerification> {
  const now = deps.clock.now();
  const tokenHash = hashSecret(token);
  const userId = await deps.stores.transaction(async (tx) => {
    const link = await tx.memberEmails.consumeLink(tokenHash, 'verify_email', now);
    if (!link || link.addressKey === null) return undefined;
    return (await tx.memberEmails.markVerified(link.userId, link.addressKey, now)) ? link.userId : undefined;
  });
  if (userId === undefined) {
    // Its reader is told why, not to ask for a new link that an account not active cannot ask for.
    const link = await deps.stores.memberEmails.findLink(tokenHash, 'verify_email');
    const user = link === undefined ? undefined : await deps.stores.users.findById(link.userId);
    if (link === undefined || user === undefined) return 'invalid';
    if (user.status !== 'active') return 'account_inactive';
    // A link opened again once its address is the account's verified one (a mail scanner opened it
    // first, or the page was reloaded in another language) says so, and does nothing again: "used
    // or invalid" sent members whose address was verified to ask for links they did not need.
    const email = await deps.stores.memberEmails.find(user.id);
    return email !== undefined && email.verifiedAt !== null && emailKey(email.address) === link.addressKey ? 'verified' : 'invalid';
  }
  // The opener is written down only when it is the account's own signed-in browser: a link mailed
  // to an address someone else typed is opened by that address's holder, a stranger to the account,
  // whose network address and browser its security log would show to whoever typed it (attack126).
  // Its audit line names the request all the same (`requestId`), as every request's does.
  await deps.securityLog.record({ userId, kind: 'email.verified', ...(opener.signedInUserId === userId ? { origin: opener.origin } : { requestId: opener.origin.requestId }) });
  return 'verified';
}
