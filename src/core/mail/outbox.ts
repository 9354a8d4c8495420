/**
 * Sending the outbox (INTERFACE section 12): at least once. One pass claims the due mails (one
 * conditional write, under a lease, so two instances never send one mail at once), hands each to
 * the transport and records the outcome: sent; given up at once when the server refused it for
 * good (`refusedForGood`); else tried again after an exponential back-off with jitter until the
 * mail is a day old, then given up. A give-up is logged, and keeps the server's reply code, by
 * which the member's e-mail settings say the mail did not arrive. The log names the mail's id,
 * kind and account, never its address, subject or body: a body may hold a single-use link.
 */
import { backoffDelayMs } from '../backoff.js';
import type { Log } from '../log.js';
import { generateOpaqueId } from '../credentials/formats.js';
import type { Clock, Instant } from '../time.js';
import type { MailOutboxStore, MailTransport, OutgoingMail } from './ports.js';

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
}

/**
 * Whether an SMTP reply refuses a mail for good. RFC 5321 section 4.2.1: after a 5yz reply "the
 * same request in the same sequence will fail again", so a retry only knocks again on a closed
 * door. Save 552 (a mailbox over its quota, which its owner may empty; a 552 to RCPT is to be
 * taken as the temporary 452, section 4.5.3.1.10), which is tried again as a 4yz is. A 4yz, or no
 * reply, is tried again.
 */
export function refusedForGood(replyCode: number | null): boolean {
  return replyCode !== null && replyCode >= 500 && replyCode <= 599 && replyCode !== 552;
}

export interface MailDeps {
  readonly stores: { readonly mailOutbox: MailOutboxStore };
  readonly clock: Clock;
}

/** One pass over the due mails; returns what became of them. */
export async function sendDueMail(deps: MailDeps, transport: MailTransport, log: Log, random: () => number = Math.random): Promise<MailPass> {
  const pass: MailPass = { claimed: 0, sent: 0, retrying: 0, abandoned: 0 };
  const store = deps.stores.mailOutbox;
  const now = deps.clock.now();
  // A read first: an idle poll never writes.
  if (!(await store.anyDue(now))) return pass;
  const claim = generateOpaqueId();
  const rows = await store.claim(claim, now, now + MAIL_LEASE_MS, MAIL_BATCH);
  pass.claimed = rows.length;
  const outcomes = await Promise.all(rows.map((row) => sendOne(deps, transport, log, claim, row, random)));
  for (const outcome of outcomes) pass[outcome] += 1;
  return pass;
}

async function sendOne(deps: MailDeps, transport: MailTransport, log: Log, claim: string, row: OutgoingMail, random: () => number): Promise<'sent' | 'retrying' | 'abandoned'> {
  const store = deps.stores.mailOutbox;
  const details = { mail_id: row.id, kind: row.kind, user_id: row.userId, attempt: row.attempts };
  const outcome = await transport.send(row.id, row);
  const at = deps.clock.now();
  if (outcome.sent) {
    await store.sent(row.id, claim, at);
    log.info(details, 'mail sent');
    return 'sent';
  }
  const next = at + backoffDelayMs(row.attempts, MAIL_FIRST_RETRY_MS, MAIL_RETRY_CAP_MS, random);
  const forGood = refusedForGood(outcome.replyCode);
  if (forGood || next - row.createdAt > MAIL_MAX_AGE_MS) {
    const error = forGood ? `${outcome.error}; refused for good` : `${outcome.error}; tried for ${Math.round((at - row.createdAt) / 60_000)} minutes`;
    await store.abandon(row.id, claim, at, error, outcome.replyCode);
    log.warn({ ...details, error, reply_code: outcome.replyCode }, 'mail given up');
    return 'abandoned';
  }
  await store.retryAt(row.id, claim, next, outcome.error);
  log.info({ ...details, error: outcome.error, next_attempt_at: new Date(next).toISOString() }, 'mail not sent; will retry');
  return 'retrying';
}
