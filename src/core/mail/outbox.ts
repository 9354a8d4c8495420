/**
 * Sending the outbox (INTERFACE section 12): at least once. One pass claims the due mails (one
 * conditional write, under a lease, so two instances never send one mail at once), hands each to
 * the transport and records the outcome: sent; given up at once when the server's refusal will
 * not change (`readReply`); else tried again after an exponential back-off with jitter until the
 * mail is a day old, then given up. A give-up is logged (an error when the site's message or
 * policy was refused for good); the relay's own trouble is logged as it starts and ends
 * (`RelayWatch`), not per attempt. A give-up whose refusal was of the member's address keeps its
 * reply code with that address (`MailRecipientStore`), by which their e-mail settings say the
 * mail did not arrive until a mail to it is accepted. The log names the mail's id, kind and
 * account, never its address, subject or body: a body may hold a single-use link.
 */
import { backoffDelayMs } from '../backoff.js';
import type { Log } from '../log.js';
import { generateOpaqueId } from '../credentials/formats.js';
import type { Clock, Instant } from '../time.js';
import type { CounterPort } from '../oauth/tokens/context.js';
import type { Stores } from '../stores.js';
import type { MailTransport, OutgoingMail, SmtpReply } from './ports.js';

/** A mail is tried for this long after it was queued, then given up. */
export const MAIL_MAX_AGE_MS = 24 * 3600 * 1000;
/** How long a claim holds a row: far longer than an attempt (SMTP timeouts), so only a dead instance loses it. */
export const MAIL_LEASE_MS = 5 * 60_000;
/** The wait before the first retry; it doubles with every attempt, up to MAIL_RETRY_CAP_MS. */
export const MAIL_FIRST_RETRY_MS = 30_000;
export const MAIL_RETRY_CAP_MS = 3600 * 1000;
/** Mails claimed by one pass, sent side by side. */
export const MAIL_BATCH = 10;

export interface MailPass {
  claimed: number;
  sent: number;
  /** Failed this time, to be tried again. */
  retrying: number;
  /** Given up: refused for good, or a day of failures. */
  abandoned: number;
  /** Sent whole with no reply: they may have arrived, and are not sent again (`MailState` `maybe_sent`). */
  unanswered: number;
}

/**
 * What a server's refusal means for the mail: `giveUp`, tried no more (else tried again with
 * back-off until it is a day old); `addressRefused`, the member's address is what was refused, so
 * a give-up is kept with it and their e-mail settings say so (else it is the site's problem: its
 * relay, setup or message, which no member can fix, and the log tells the operator);
 * `unproven`, read by the basic code alone at RCPT (or `x.2.2`, a full mailbox, or `x.1.0`): the member's
 * address only once the relay is seen taking other mail (`RelayWatch.refusedAgain`), till then
 * the site's, tried again.
 */
export interface ReplyReading {
  giveUp: boolean;
  addressRefused: boolean;
  unproven?: true;
}

const RETRY_SITE: ReplyReading = { giveUp: false, addressRefused: false };
const RETRY_ADDRESS: ReplyReading = { giveUp: false, addressRefused: true };
const GIVE_UP_SITE: ReplyReading = { giveUp: true, addressRefused: false };
const GIVE_UP_ADDRESS: ReplyReading = { giveUp: true, addressRefused: true };
const RETRY_UNPROVEN: ReplyReading = { ...RETRY_ADDRESS, unproven: true };
const GIVE_UP_UNPROVEN: ReplyReading = { ...GIVE_UP_ADDRESS, unproven: true };

/**
 * The last detail the registry of enhanced status codes lists (RFC 5248, IANA "Enumerated Status
 * Codes") for the subjects that name the member's address or mailbox: `x.1.0` to `x.1.10` (RFC
 * 3463 section 3.2, RFC 3886, RFC 7505 section 4.2), `x.2.0` to `x.2.4` (RFC 3463 section 3.3).
 * Every registered code of the recipient's address or mailbox is among them; a later one is a
 * relay's own, and those relays answer are about the site's sender (Exchange Online's `5.2.252`
 * SendAsDenied for a `MAIL_FROM` it will not send as, `5.1.90` for the site's daily limit).
 */
const LAST_DETAIL: Readonly<Record<number, number>> = { 1: 10, 2: 4 };

/**
 * Reads a refusal by its codes alone, never its words (docs/operations.md, "Mail"). A reply to
 * anything but RCPT or DATA (the greeting, sign-in, MAIL FROM) refuses the site, for every mail
 * alike: tried again, so fixing the setting within the day loses nothing. A code about the site's
 * sender or its policy is read the same at whichever step it comes. To RCPT or DATA, a refusal
 * is for good when the basic code is a 5yz (RFC 5321 section 4.2.1) and its enhanced status code,
 * if any, is of class 5; a class that disagrees with the basic code's first digit (`554 4.7.1`,
 * `550 4.2.2`: RFC 3463 section 2 makes 4.x.x a persistent transient failure, 5.x.x a permanent
 * one) leaves it unknown, so it is read as for now: tried again, never the address refused for
 * good. The enhanced code's subject and detail say whose it is (RFC 3463 section 3; whether a
 * code names the sender or the recipient as the IANA registry's descriptions do):
 * - `x.1.y` addressing (a bad mailbox, address or domain) is the member's address, save `x.1.7`
 *   and `x.1.8`, the sender's address (the site's `MAIL_FROM`): the site's, tried again; and
 *   `x.1.0`, "other address status", which names no side ("something about the address
 *   specified in the message"): unproven, as a bare code (Postfix answers `550 5.1.0` at RCPT
 *   for a `MAIL_FROM` its own domain does not list, its sender checks delayed to RCPT by default);
 * - `x.2.y` mailbox status is the member's mailbox, save `x.2.3`, a message over the mailbox's
 *   size limit, and `x.2.2` (full), a persistent transient condition by the registry however it
 *   is sent, tried again; unproven, as relays answer it for the site's own quota too (Exchange
 *   Online's `554 5.2.2` QuotaExceeded of the sending account);
 * - an `x.1.y` or `x.2.y` whose detail no registry lists (`LAST_DETAIL`) is a relay's own about
 *   the site's sender: the site's, tried again;
 * - `5.2.3` and `5.3.4`, a message too large, and `x.6.y`, its content, fail again on retry: given
 *   up at once, the site's (its message), not the member's;
 * - `x.7.y` security or policy (RFC 3463 section 3.8: the relay will not take mail from the site,
 *   `5.7.1` relay access denied or not allowed to send as `MAIL_FROM`, the site's sign-in `x.7.8`,
 *   its domain's SPF, DKIM or DMARC `x.7.20` to `x.7.26`, a relay's own `5.7.60` SendAsDenied):
 *   the site's, tried again, so a setting fixed within the day loses nothing (the registry's
 *   `x.7.17`, `x.7.18` of the recipient answer only the RRVS extension, which the site never asks);
 * - `x.3.y` the mail system and `x.5.y` the protocol are the site's relay refusing the site: tried again;
 * - `x.0.y`, `x.4.y` network and routing, or no enhanced code: by the basic code.
 * By the basic code, its second digit first (RFC 5321 section 4.2.1): `x0z` the syntax (500 to
 * 504), `x1z` information, `x2z` the connection (421) and `x3z` the sign-in (530, 534, 535, 538:
 * RFC 4954 section 6) are the relay answering the site, whatever the mail: tried again. Else by
 * the step it answered: to DATA the message or the site (the recipient was accepted at RCPT),
 * never the member's address (a 5yz, `554` or `552` alike, given up at once; a 4yz tried again);
 * to RCPT the recipient, so the member's address (a 5yz given up at once, save `552`, a mailbox
 * over its quota, tried again as section 4.5.3.1.10 reads it as the temporary 452; a 4yz tried
 * again), unproven: a relay answers its own policy so too (`554` relaying denied, for every
 * recipient alike).
 */
export function readReply(reply: SmtpReply): ReplyReading {
  if (reply.step === 'site') return RETRY_SITE;
  const [category, subject, detail] = reply.enhanced === null ? [] : reply.enhanced.split('.').map(Number);
  const permanent = reply.code >= 500 && (category === undefined || category === 5);
  const lastDetail = subject === undefined ? undefined : LAST_DETAIL[subject];
  if (lastDetail !== undefined && detail! > lastDetail) return RETRY_SITE;
  switch (subject) {
    case 1:
      if (detail === 7 || detail === 8) return RETRY_SITE;
      // x.1.0 names no side (RFC 3463 section 3.2): Postfix refuses an unlisted MAIL_FROM with it at RCPT.
      if (detail === 0) return permanent ? GIVE_UP_UNPROVEN : RETRY_UNPROVEN;
      return permanent ? GIVE_UP_ADDRESS : RETRY_ADDRESS;
    case 2:
      if (detail === 3) return permanent ? GIVE_UP_SITE : RETRY_SITE;
      if (detail === 2) return RETRY_UNPROVEN;
      return permanent ? GIVE_UP_ADDRESS : RETRY_ADDRESS;
    case 3:
      return permanent && detail === 4 ? GIVE_UP_SITE : RETRY_SITE;
    case 6:
      return permanent ? GIVE_UP_SITE : RETRY_SITE;
    case 5:
    case 7:
      return RETRY_SITE;
    default:
      if (Math.floor(reply.code / 10) % 10 < 4) return RETRY_SITE;
      if (reply.step === 'data') return permanent ? GIVE_UP_SITE : RETRY_SITE;
      return permanent && reply.code !== 552 ? GIVE_UP_UNPROVEN : RETRY_UNPROVEN;
  }
}

/** Whose trouble an attempt met, as `mail_attempts_total` counts it: none (sent), the member's address, or the site's. */
type Whose = 'none' | 'address' | 'site';

export interface MailDeps {
  readonly stores: Pick<Stores, 'mailOutbox' | 'transaction'>;
  readonly clock: Clock;
  /** Every attempt, by its outcome and whose trouble it met (`mail_attempts_total`). */
  readonly metrics: { readonly mailAttempts: CounterPort<'outcome' | 'whose'> };
}

/** How often, at most, the log says again that the site's mail relay still fails the site. */
export const RELAY_REMINDER_MS = 3600 * 1000;

/**
 * The trouble of the site's mail relay as one instance's sender meets it: unreachable, or
 * refusing the site (its sign-in, `MAIL_FROM`, its rules for the site: `readReply`). Behind a
 * broken relay every waiting mail fails again every few minutes, so the log says it when it
 * starts (a warning), again at most once an hour while it lasts, and when it ends, an attempt
 * answered for the mail itself (sent, or its address refused); each attempt counts only in
 * `mail_attempts_total`. It also tells whose an unproven refusal is (`ReplyReading.unproven`):
 * a relay refusing for its own reasons (relaying denied, the site's quota) refuses every
 * recipient alike and takes no mail, so such a refusal is the address's only when the relay
 * refuses the same mail so again after it took another one. Held in memory: a restart says the
 * trouble again at its first failure, and proves a refusal again from its next one.
 */
export class RelayWatch {
  private since: Instant | null = null;
  private toldAt = 0;
  private failures = 0;
  /** Mails the relay took: counted, not timed, so one taken in the millisecond of a refusal is told apart. */
  private taken = 0;
  /** The waiting mails refused unproven, oldest first: how many mails the relay had taken at the first such refusal, and when. */
  private readonly unproven = new Map<number, { taken: number; at: Instant }>();

  /**
   * Whether mail `id`, refused unproven at `at`, is refused for its address: it was refused so
   * before, and the relay took another mail since. A first such refusal is remembered for a day,
   * a mail's life (one another instance sent or gave up is forgotten then).
   */
  refusedAgain(id: number, at: Instant): boolean {
    const first = this.unproven.get(id);
    if (first !== undefined) return this.taken > first.taken;
    for (const [old, { at: since }] of this.unproven) {
      if (at - since <= MAIL_MAX_AGE_MS) break;
      this.unproven.delete(old);
    }
    this.unproven.set(id, { taken: this.taken, at });
    return false;
  }

  /** Mail `id` was taken by the relay: its trouble, if any, is over. */
  sent(id: number, log: Log): void {
    this.taken += 1;
    this.unproven.delete(id);
    this.working(log);
  }

  /** Mail `id` was given up: nothing of it is kept. */
  forget(id: number): void {
    this.unproven.delete(id);
  }

  /** An attempt the relay failed for the site's reason; `details` say the last one (its codes, its error). */
  failed(at: Instant, log: Log, details: object): void {
    this.failures += 1;
    if (this.since === null) {
      this.since = this.toldAt = at;
      log.warn(details, 'the site\'s mail relay fails the site (SMTP_URL, MAIL_FROM, its rules); mail waits and is tried again');
    } else if (at - this.toldAt >= RELAY_REMINDER_MS) {
      this.toldAt = at;
      log.warn({ ...details, since: new Date(this.since).toISOString(), failed_attempts: this.failures }, 'the site\'s mail relay still fails the site; mail waits and is tried again');
    }
  }

  /** An attempt the relay answered for the mail itself: its trouble, if any, is over. */
  working(log: Log): void {
    if (this.since === null) return;
    log.info({ since: new Date(this.since).toISOString(), failed_attempts: this.failures }, 'the site\'s mail relay takes mail again');
    this.since = null;
    this.failures = 0;
  }
}

/** One pass over the due mails; returns what became of them. `relay`: the instance's watch over its relay, kept across passes. */
export async function sendDueMail(deps: MailDeps, transport: MailTransport, log: Log, relay: RelayWatch, random: () => number = Math.random): Promise<MailPass> {
  const pass: MailPass = { claimed: 0, sent: 0, retrying: 0, abandoned: 0, unanswered: 0 };
  const store = deps.stores.mailOutbox;
  const now = deps.clock.now();
  // A read first: an idle poll never writes.
  if (!(await store.anyDue(now))) return pass;
  const claim = generateOpaqueId();
  const rows = await store.claim(claim, now, now + MAIL_LEASE_MS, MAIL_BATCH);
  pass.claimed = rows.length;
  const outcomes = await Promise.all(rows.map((row) => sendOne(deps, transport, log, relay, claim, row, random)));
  for (const [outcome, whose] of outcomes) {
    pass[outcome] += 1;
    deps.metrics.mailAttempts.inc({ outcome, whose });
  }
  return pass;
}

async function sendOne(
  deps: MailDeps, transport: MailTransport, log: Log, relay: RelayWatch, claim: string, row: OutgoingMail, random: () => number,
): Promise<['sent' | 'retrying' | 'abandoned' | 'unanswered', Whose]> {
  const details = { mail_id: row.id, kind: row.kind, user_id: row.userId, attempt: row.attempts };
  const outcome = await transport.send(row.id, row);
  const at = deps.clock.now();
  if (outcome.sent === 'unanswered') {
    // The server had the whole message and said nothing (RFC 5321 section 4.5.3.2.6 gives it 10
    // minutes, the transport waits less): it may have delivered it. Sending it again would mail
    // the member a second copy of the same link, and, behind a relay whose filters always take
    // longer than the wait, one a retry for a day; not sending it loses a mail only when the relay
    // lost it, and the member's page says it may have arrived and how to get a new link. Kept as
    // such, never a failure: its count stays spent and no newer mail supersedes it (RFC 1047).
    relay.forget(row.id);
    await deps.stores.mailOutbox.maybeSent(row.id, claim, at, outcome.error);
    log.warn({ ...details, error: outcome.error }, 'mail may have been sent: the relay never answered the end of its data; not sent again');
    return ['unanswered', 'site'];
  }
  if (outcome.sent) {
    // The row and the member's address in one transaction: an accepted mail clears a refusal kept for its address.
    await deps.stores.transaction(async (tx) => {
      if (await tx.mailOutbox.sent(row.id, claim, at) && row.userId !== null) await tx.mailRecipients.accepted(row.userId, row.to);
    });
    relay.sent(row.id, log);
    log.info(details, 'mail sent');
    return ['sent', 'none'];
  }
  const { reply } = outcome;
  const read = reply === null ? RETRY_SITE : readReply(reply);
  const reading = read.unproven && !relay.refusedAgain(row.id, at) ? RETRY_SITE : read;
  const whose = reading.addressRefused ? 'address' : 'site';
  const replyLog = reply === null ? {} : { reply_code: reply.code, enhanced_code: reply.enhanced };
  if (reading.addressRefused) relay.working(log);
  else if (!reading.giveUp) relay.failed(at, log, { error: outcome.error, ...replyLog });
  const next = at + backoffDelayMs(row.attempts, MAIL_FIRST_RETRY_MS, MAIL_RETRY_CAP_MS, random);
  if (reading.giveUp || next - row.createdAt > MAIL_MAX_AGE_MS) {
    relay.forget(row.id);
    const error = reading.giveUp ? `${outcome.error}; refused for good` : `${outcome.error}; tried for ${Math.round((at - row.createdAt) / 60_000)} minutes`;
    // The address's refusal is kept with the member's address, in the give-up's transaction, past the row.
    const refusedCode = reply !== null && reading.addressRefused ? reply.code : null;
    await deps.stores.transaction(async (tx) => {
      if (await tx.mailOutbox.abandon(row.id, claim, at, error, refusedCode) && row.userId !== null && refusedCode !== null) {
        await tx.mailRecipients.refused(row.userId, row.to, refusedCode);
      }
    });
    const given = { ...details, error, ...replyLog, address_refused: refusedCode !== null };
    // Refused for good for the site's reasons (its message, policy or reputation: SPF, DKIM,
    // DMARC): each such mail is lost, no member can fix it, and the operator must; an error, once.
    if (reading.giveUp && !reading.addressRefused) log.error(given, 'mail refused for good for the site\'s reasons (its message, policy or reputation); given up');
    else log.warn(given, 'mail given up');
    return ['abandoned', whose];
  }
  await deps.stores.mailOutbox.retryAt(row.id, claim, next, outcome.error);
  // A mail waiting for its address is told each attempt; the relay's own trouble is told by `relay`.
  if (reading.addressRefused) log.info({ ...details, error: outcome.error, ...replyLog, next_attempt_at: new Date(next).toISOString() }, 'mail not sent; will retry');
  return ['retrying', whose];
}
