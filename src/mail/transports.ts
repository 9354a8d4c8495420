/**
 * The mail transports (src/core/mail/ports.ts), through nodemailer: SMTP (`SMTP_URL`), or `.eml`
 * files on a developer's machine, which any mail program opens. Neither throws; an error says
 * what went wrong without the message, which may hold a single-use link.
 */
import { join } from 'node:path';
import type nodemailer from 'nodemailer';
import type { parseConnectionUrl } from 'nodemailer/lib/shared/index.js';
import type { MailTransportSetting } from '../config/settings.js';
import type { MailMessage, MailOutcome, MailTransport, SmtpReply } from '../core/mail/ports.js';
import { writePrivateFile } from '../storage/directories.js';

/**
 * nodemailer is loaded when the first mail is sent, not at start: a server holds about 10 MB less
 * until someone signs up or asks for a reset (docs/performance.md, decision 29). Node keeps no
 * failed import, so a load that failed (a chunk of dist/bundle/ replaced by a build under a
 * running server) is tried again at the next mail, as passkeys' and QR codes' loads are.
 */
const loadNodemailer = async (): Promise<typeof nodemailer> => (await import('nodemailer')).default;
const loadUrlParser = async (): Promise<typeof parseConnectionUrl> => (await import('nodemailer/lib/shared/index.js')).default.parseConnectionUrl;

/**
 * An SMTP exchange that has not moved on by then has failed; the mail is tried again later. Well
 * within the outbox's 5-minute lease (`MAIL_LEASE_MS`, src/core/mail/outbox.ts): an attempt still waiting when its lease
 * ends could be claimed and sent again by another instance. nodemailer's own waits (2 minutes to
 * connect, 10 minutes of silence) would let one relay that stops answering hold an attempt past it.
 */
export const SMTP_TIMEOUT_MS = 15_000;

function mailOptions(from: string, message: MailMessage): nodemailer.SendMailOptions {
  return {
    from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    ...(message.html === null ? {} : { html: message.html }),
    // RFC 3282: what a mail client or a screen reader reading the text part goes by.
    ...(message.language === null ? {} : { headers: { 'Content-Language': message.language } }),
  };
}

/** The steps of the exchange that are the mail's own, by nodemailer's name of their command; any other is the site's. */
const MAIL_STEPS = new Map<string, SmtpReply['step']>([['RCPT TO', 'recipient'], ['DATA', 'data']]);

/**
 * A server's reply code, when its reply starts with one: three digits, the first 2 to 5 (RFC 5321
 * section 4.2), and the enhanced status code after it, if any (RFC 3463 section 2: class 2, 4 or
 * 5, subject and detail of 1 to 3 digits). nodemailer reads any run of digits as the code, and a
 * broken or hostile relay may answer with ten digits or none.
 */
const REPLY = /^([2-5]\d{2})(?:[ -]([245]\.\d{1,3}\.\d{1,3})\b|(?!\d))/;

/**
 * What went wrong, without the message, and the server's refusal when it answered with a `4yz`
 * or `5yz` (`MailOutcome`). A server's reply is named by its code and enhanced status code
 * (RFC 3463) alone, and nodemailer's own words, which quote the reply, are dropped with it: the
 * reply's text is the server's to write, and often quotes the recipient's address.
 */
function failure(error: unknown): Extract<MailOutcome, { sent: false }> {
  if (!(error instanceof Error)) return { sent: false, error: String(error), reply: null };
  const { code, command, response } = error as { code?: unknown; command?: unknown; response?: unknown };
  if (typeof response !== 'string') {
    return { sent: false, error: typeof code === 'string' ? `${code}: ${error.message}` : error.message, reply: null };
  }
  const [, replyCode, enhanced] = REPLY.exec(response) ?? [];
  const step = typeof command === 'string' ? command : 'a command';
  return {
    sent: false,
    error: `${typeof code === 'string' ? code : 'error'}: ${step} answered ${replyCode ?? 'without a reply code'}${enhanced ? ` ${enhanced}` : ''}`,
    reply: replyCode === undefined || Number(replyCode) < 400 ? null : { step: MAIL_STEPS.get(step) ?? 'site', code: Number(replyCode), enhanced: enhanced ?? null },
  };
}

export class SmtpTransport implements MailTransport {
  private transporter: nodemailer.Transporter | undefined;

  constructor(private readonly url: string, private readonly from: string, private readonly timeoutMs = SMTP_TIMEOUT_MS) {}

  async send(_id: number, message: MailMessage): Promise<MailOutcome> {
    try {
      // The URL as nodemailer reads it, with the waits beside it: given the URL, `createTransport`
      // takes its second argument as every message's defaults, where a timeout means nothing.
      this.transporter ??= (await loadNodemailer()).createTransport({
        ...(await loadUrlParser())(this.url),
        connectionTimeout: this.timeoutMs,
        greetingTimeout: this.timeoutMs,
        socketTimeout: this.timeoutMs,
      });
      await this.transporter.sendMail(mailOptions(this.from, message));
      return { sent: true };
    } catch (error) {
      return failure(error);
    }
  }
}

/** Writes each mail, as the SMTP server would receive it, to `{directory}/{id}.eml`. */
export class EmlFileTransport implements MailTransport {
  private transporter: nodemailer.Transporter | undefined;

  constructor(private readonly directory: string, private readonly from: string) {}

  async send(id: number, message: MailMessage): Promise<MailOutcome> {
    try {
      this.transporter ??= (await loadNodemailer()).createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
      const info = await this.transporter.sendMail(mailOptions(this.from, message));
      // The mail's id makes the name: a retry writes the same file again, never a second one.
      const file = join(this.directory, `${String(id).padStart(8, '0')}.eml`);
      // Whole or not at all, through a new file renamed over the name: never written through a link
      // planted there, nor, run as root, through another user's directory.
      writePrivateFile(file, info.message as Buffer, 'a mail', this.directory);
      return { sent: true };
    } catch (error) {
      return failure(error);
    }
  }
}

/** The transport the settings name; `undefined` when the site sends no mail. */
export function createMailTransport(setting: MailTransportSetting, from: string): MailTransport | undefined {
  switch (setting.kind) {
    case 'smtp': return new SmtpTransport(setting.url, from);
    case 'files': return new EmlFileTransport(setting.directory, from);
    case 'off': return undefined;
  }
}
