/**
 * The storage and the transport mail needs (INTERFACE section 12, "E-mail and the way back in").
 * A mail is written to the outbox, rendered, in the transaction of the event that causes it, and
 * sent later by whichever instance claims it, so a restart or an SMTP outage loses none.
 */
import type { Locale } from '../locales.js';
import type { Instant } from '../time.js';

/** A rendered message: what a person reads, in their language. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** A simple HTML alternative of `text`; `null`: plain text only. */
  html: string | null;
  /**
   * The language it is written in, sent as `Content-Language` (RFC 3282) with the tag its HTML
   * names in `<html lang>`; `null` (a mail queued before the language was kept): no header.
   */
  language: Locale | null;
}

export interface NewOutgoingMail extends MailMessage {
  /** The account it concerns, if any; the mail goes when the account is deleted. */
  userId: number | null;
  /** What it is about: the mail's name in `mail.json` (`verifyEmail`, `passwordReset`, `noticeSignIn`…), for the log. */
  kind: string;
}

export interface OutgoingMail extends NewOutgoingMail {
  id: number;
  createdAt: Instant;
  /** Attempts so far, the one just claimed included. */
  attempts: number;
  nextAttemptAt: Instant;
}

/**
 * The outbox: claimed by one instance at a time under a lease, marked sent or abandoned. An
 * outcome is written only by the claim that holds the row; a row that leaves the queue keeps no
 * body, so a link in it lives only as long as it is waiting.
 */
export interface MailOutboxStore {
  /** Queues a mail, due at once. */
  enqueue(mail: NewOutgoingMail, now: Instant): Promise<void>;
  /** Whether a pending mail is due at `now` and not leased: a read, so an idle poll writes nothing. */
  anyDue(now: Instant): Promise<boolean>;
  /**
   * Claims up to `limit` pending mails that are due and not leased (or whose lease has expired:
   * the instance that held it died), in one conditional write that records `claim`, `leaseUntil`
   * and one more attempt: two callers never get the same row while its lease runs.
   */
  claim(claim: string, now: Instant, leaseUntil: Instant, limit: number): Promise<OutgoingMail[]>;
  /** Marks the mail sent and forgets its body; false when `claim` no longer holds it. */
  sent(id: number, claim: string, now: Instant): Promise<boolean>;
  /** Releases the mail to be tried again at `nextAttemptAt`. */
  retryAt(id: number, claim: string, nextAttemptAt: Instant, error: string): Promise<boolean>;
  /**
   * Gives the mail up for good and forgets its body. `replyCode`: the SMTP reply with which its
   * server refused the last attempt (`MailOutcome`), kept so its reader can be told (`lastDelivery`).
   */
  abandon(id: number, claim: string, now: Instant, error: string, replyCode: number | null): Promise<boolean>;
  /**
   * What became of the newest mail for `userId` to `to` (in any case) that was sent, or given up
   * after its server refused it (a reply code); `undefined`: none the outbox still keeps. A mail
   * given up with no reply (the server away, replaced by a newer one) says nothing of the address.
   */
  lastDelivery(userId: number, to: string): Promise<MailDelivery | undefined>;
  /**
   * Gives up, as `abandon` does, the mails of `kind` to `userId` still waiting after an attempt
   * failed and not held by a claim (none is being sent), for a newer one that replaces them;
   * returns how many. A mail not tried yet is left to go out: replacing it too, asks faster than
   * the outbox sends kept every mail from going out (attack117).
   */
  supersede(userId: number, kind: string, now: Instant): Promise<number>;
  /** Deletes every mail to `userId`, queued, sent or given up, with its recipient and what its server answered. */
  eraseForUser(userId: number): Promise<void>;
}

/** The newest outcome of mail to an address: sent, or refused by its server with `replyCode` and given up. */
export type MailDelivery = { sent: true } | { sent: false; replyCode: number };

/**
 * What an attempt came to. `replyCode`: the server's reply (RFC 5321 section 4.2) when it refused
 * the mail's recipient or its data (RCPT, DATA), else `null` (it was not reached, went away, or
 * refused the site itself: its sign-in, or its sender at MAIL).
 */
export type MailOutcome = { sent: true } | { sent: false; error: string; replyCode: number | null };

/** Hands a message to the mail system: SMTP, or `.eml` files on a developer's machine (src/mail/). */
export interface MailTransport {
  /** Never throws; the error says what went wrong, without the message. `id` names the mail. */
  send(id: number, message: MailMessage): Promise<MailOutcome>;
}
