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
 * Where a mail stands: `waiting` to be sent (not tried yet, or to be tried again), `sent` (handed
 * to the mail server), `maybe_sent` (its whole message went to the server, which never answered:
 * it may have arrived, and is not sent again), or `given_up` (refused for good, a day of failures,
 * or superseded).
 */
export type MailState = 'waiting' | 'sent' | 'maybe_sent' | 'given_up';

/**
 * The outbox: claimed by one instance at a time under a lease, marked sent or abandoned. An
 * outcome is written only by the claim that holds the row; a row that leaves the queue keeps no
 * body, so a link in it lives only as long as it is waiting.
 */
export interface MailOutboxStore {
  /**
   * Queues a mail, due at once; false, queuing nothing, when the mail is a member's and `to` is
   * no longer their address or pending address (`emailKey`): one conditional write, so a mail
   * whose address was read before the member's account was deleted (which erases it and their
   * outbox) never brings the address back.
   */
  enqueue(mail: NewOutgoingMail, now: Instant): Promise<boolean>;
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
  /**
   * Records that the mail may have been sent (`MailState` `maybe_sent`): out of the queue, never
   * tried again, superseded by nothing, its body forgotten; false when `claim` no longer holds it.
   * One conditional write, as every outcome.
   */
  maybeSent(id: number, claim: string, now: Instant, error: string): Promise<boolean>;
  /** Releases the mail to be tried again at `nextAttemptAt`. */
  retryAt(id: number, claim: string, nextAttemptAt: Instant, error: string): Promise<boolean>;
  /**
   * Gives the mail up for good and forgets its body. `replyCode`: the SMTP reply code with which
   * its server refused the mail's address (`MailRecipientStore.refused`), kept for the operator.
   */
  abandon(id: number, claim: string, now: Instant, error: string, replyCode: number | null): Promise<boolean>;
  /**
   * Gives up, as `abandon` does, the mails of `kind` to `userId` still waiting after an attempt
   * failed and not held by a claim (none is being sent), for a newer one that replaces them;
   * returns each one's address and when it was queued (one conditional write: a mail is
   * superseded once, by one caller). A mail not tried yet is left to go out: replacing it too,
   * asks faster than the outbox sends kept every mail from going out (attack117).
   */
  supersede(userId: number, kind: string, now: Instant): Promise<Array<{ to: string; createdAt: Instant }>>;
  /**
   * The newest mail of `kind` to `userId`, its address and where it stands; none when there is
   * none (never queued, or deleted after the audit window).
   */
  newest(userId: number, kind: string): Promise<{ to: string; state: MailState } | undefined>;
  /** Deletes every mail to `userId`, queued, sent or given up, with its recipient and what its server answered. */
  eraseForUser(userId: number): Promise<void>;
}

/**
 * Where the newest outcome of a member's mail is kept with the member's address (their e-mail
 * record), past the outbox row, which the janitor deletes after the audit window: a member who
 * comes back later still learns that mail to their address is refused. An address is matched by
 * its key (`emailKey`: lower-cased in application code, alike on every database).
 */
export interface MailRecipientStore {
  /** Keeps `replyCode` on the account's address or pending address that `to` is, if it still is one. */
  refused(userId: number, to: string, replyCode: number): Promise<void>;
  /** Forgets a refusal kept for the account's address or pending address that `to` is: mail to it was accepted. */
  accepted(userId: number, to: string): Promise<void>;
}

/**
 * A server's reply to one step of the exchange, by its codes alone (never its words): `step` is
 * `recipient` (RCPT TO), `data` (DATA), or `site` for any other (the greeting, EHLO, AUTH, MAIL
 * FROM: the site's connection, sign-in or sender); `code` three digits, 4yz or 5yz (RFC 5321
 * section 4.2); `enhanced` the enhanced status code the reply starts with, if any (RFC 3463).
 */
export interface SmtpReply {
  step: 'recipient' | 'data' | 'site';
  code: number;
  enhanced: string | null;
}

/**
 * What an attempt came to: `sent`: `true`, the server took it; `unanswered`, the whole message,
 * its final "." included, went to the server, and no reply came (the connection closed, or the
 * wait ran out): the server may have delivered it (RFC 5321 section 4.5.3.2.6 gives it 10 minutes
 * to answer; RFC 1047 is the duplicate mail a sender that sends again makes); `false`, it was not
 * sent. `reply`: the server's refusal (a 4yz or 5yz), else `null` (it was not reached, went away
 * before the message's end, or answered without a three-digit code).
 */
export type MailOutcome =
  | { sent: true }
  | { sent: 'unanswered'; error: string }
  | { sent: false; error: string; reply: SmtpReply | null };

/** Hands a message to the mail system: SMTP, or `.eml` files on a developer's machine (src/mail/). */
export interface MailTransport {
  /** Never throws; the error says what went wrong, without the message. `id` names the mail. */
  send(id: number, message: MailMessage): Promise<MailOutcome>;
}
