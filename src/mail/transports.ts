/**
 * The mail transports (src/core/mail/ports.ts), through nodemailer: SMTP (`SMTP_URL`), or `.eml`
 * files on a developer's machine, which any mail program opens. Neither throws; an error says
 * what went wrong without the message, which may hold a single-use link.
 */
import type { Socket } from 'node:net';
import { join } from 'node:path';
import type nodemailer from 'nodemailer';
import type MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { parseConnectionUrl } from 'nodemailer/lib/shared/index.js';
import type SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import type { MailTransportSetting } from '../config/settings.js';
import type { MailMessage, MailOutcome, MailTransport, SmtpReply } from '../core/mail/ports.js';
import { writePrivateFile } from '../storage/directories.js';

/**
 * nodemailer is loaded when the first mail is sent, not at start: a server holds about 10 MB less
 * until someone signs up or asks for a reset (docs/performance.md, decision 29). Node keeps no
 * failed import, so a load that failed (a chunk of dist/bundle/ replaced by a build under a
 * running server) is tried again at the next mail, as passkeys' and QR codes' loads are. SMTP
 * takes nodemailer's message composer and SMTP client (`SmtpTransport`), `.eml` files the whole.
 */
const loadNodemailer = async (): Promise<typeof nodemailer> => (await import('nodemailer')).default;
const loadSmtp = async (): Promise<{ SMTPConnection: typeof SMTPConnection; MailComposer: typeof MailComposer; parseConnectionUrl: typeof parseConnectionUrl }> => {
  const [connection, composer, shared] = await Promise.all([
    import('nodemailer/lib/smtp-connection/index.js'), import('nodemailer/lib/mail-composer/index.js'), import('nodemailer/lib/shared/index.js'),
  ]);
  return { SMTPConnection: connection.default, MailComposer: composer.default, parseConnectionUrl: shared.default.parseConnectionUrl };
};

/**
 * An SMTP exchange that has not moved on by then has failed; the mail is tried again later. Well
 * within the outbox's 5-minute lease (`MAIL_LEASE_MS`, src/core/mail/outbox.ts): an attempt still waiting when its lease
 * ends could be claimed and sent again by another instance. nodemailer's own waits (2 minutes to
 * connect, 10 minutes of silence) would let one relay that stops answering hold an attempt past it.
 * RFC 5321 section 4.5.3.2.6 gives a server 10 minutes to answer the end of a mail's data: one
 * slower than this may have taken the mail (`unanswered`).
 */
export const SMTP_TIMEOUT_MS = 15_000;

/**
 * The most one attempt takes, whatever the relay does: 2 minutes, 3 below the outbox's 5-minute
 * lease (`MAIL_LEASE_MS`), left for the outcome's write. A wait of 15 s (`SMTP_TIMEOUT_MS`) is one
 * of silence: a relay that trickles a byte every few seconds never trips it, and nodemailer has no
 * deadline of its own, so it held an attempt past the lease, and another instance took the mail
 * and sent it again. At the deadline the connection is closed: a mail whose data had not all gone
 * is not delivered (RFC 5321 section 3.8: a connection closed before the data's end cancels the
 * transaction) and is
 * tried again; one whose end had gone may have been (`unanswered`).
 */
export const SMTP_ATTEMPT_MS = 120_000;

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

/** nodemailer's codes of a connection that failed with no reply: its wait ran out, or the socket closed or broke. */
const NO_REPLY = new Set(['ETIMEDOUT', 'ECONNECTION', 'ESOCKET']);

/**
 * What went wrong, without the message, and the server's refusal when it answered with a `4yz`
 * or `5yz` (`MailOutcome`). A server's reply is named by its code and enhanced status code
 * (RFC 3463) alone, and nodemailer's own words, which quote the reply, are dropped with it: the
 * reply's text is the server's to write, and often quotes the recipient's address. `dataEnded`:
 * the whole message, its final "." included, had gone to the server; a failure then with no reply
 * at all leaves the mail `unanswered`. nodemailer names such a failure as it names one before
 * the data (`ETIMEDOUT` or `ECONNECTION` of the command `CONN`), so the transport watches the data itself.
 */
function failure(error: unknown, dataEnded: boolean): Exclude<MailOutcome, { sent: true }> {
  if (!(error instanceof Error)) return { sent: false, error: String(error), reply: null };
  const { code, command, response } = error as { code?: unknown; command?: unknown; response?: unknown };
  // A connection closed in the middle of a line: nodemailer gives the line's start as the server's
  // response, but a reply ends with its CRLF (RFC 5321 section 4.2), and "25" is none. One that
  // starts with a 4yz or 5yz code is taken as the refusal it began to say.
  const broken = code === 'ECONNECTION' && command === 'CONN' && typeof response === 'string' && !/^[45]\d{2}(?!\d)/.test(response);
  if (typeof response !== 'string' || broken) {
    const said = broken ? `${code}: connection closed in the middle of a reply` : typeof code === 'string' ? `${code}: ${error.message}` : error.message;
    if (dataEnded && typeof code === 'string' && NO_REPLY.has(code)) return { sent: 'unanswered', error: `${said}, after the end of the data` };
    return { sent: false, error: said, reply: null };
  }
  const [, replyCode, enhanced] = REPLY.exec(response) ?? [];
  const step = typeof command === 'string' ? command : 'a command';
  return {
    sent: false,
    error: `${typeof code === 'string' ? code : 'error'}: ${step} answered ${replyCode ?? 'without a reply code'}${enhanced ? ` ${enhanced}` : ''}`,
    reply: replyCode === undefined || Number(replyCode) < 400 ? null : { step: MAIL_STEPS.get(step) ?? 'site', code: Number(replyCode), enhanced: enhanced ?? null },
  };
}

/**
 * Sends each mail over a connection of its own, with nodemailer's SMTP client, watching what its
 * transport hides: whether the message's end had gone to the server when it failed (`failure`),
 * and the attempt's deadline (`SMTP_ATTEMPT_MS`), at which the connection is closed.
 */
export class SmtpTransport implements MailTransport {
  constructor(
    private readonly url: string, private readonly from: string,
    private readonly timeoutMs = SMTP_TIMEOUT_MS, private readonly attemptMs = SMTP_ATTEMPT_MS,
  ) {}

  async send(_id: number, message: MailMessage): Promise<MailOutcome> {
    let smtp: Awaited<ReturnType<typeof loadSmtp>>;
    try {
      smtp = await loadSmtp();
    } catch (error) {
      return failure(error, false);
    }
    // The URL as nodemailer reads it (host, port, TLS, sign-in), with the waits beside it.
    // A URL's sign-in is a user and a password, nothing else.
    const url = smtp.parseConnectionUrl(this.url) as Omit<SMTPConnection.Options, 'auth'> & { auth?: SMTPConnection.Credentials };
    const options: typeof url & { forceAuth?: boolean } = {
      ...url,
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs,
    };
    const mail = new smtp.MailComposer(mailOptions(this.from, message)).compile();
    const data = mail.createReadStream();
    const connection = new smtp.SMTPConnection(options);
    // The data has ended when its final "." (RFC 5321 section 4.1.1.4) has left for the server,
    // handed to the operating system on a connection still open: not when the message has been
    // read, which a relay gone right after its 354 never stops (its reset or close is noticed
    // later), nor when the "." was only queued on a socket the relay stopped reading. Once the
    // server has answered DATA, the client pipes the message into the stream that ends it with
    // the ".", and that stream into the socket; when it has ended, the "." has been written to
    // the socket, and an empty write behind it is called back, in order, once the "." has gone,
    // or with an error if the socket closed or broke first. The message starts only once the event
    // loop has read the socket again after the 354 (two turns: Node reads a close arriving with a
    // reply at the next turn's poll): a close the relay sent with its 354 would otherwise be read
    // after a short message, "." and all, had been handed to the operating system, and the mail
    // kept as maybe sent when the relay had gone before reading it.
    let dataEnded = false;
    const pipe = data.pipe.bind(data);
    data.pipe = <T extends NodeJS.WritableStream>(destination: T, pipeOptions?: { end?: boolean }): T => {
      setImmediate(() => setImmediate(() => pipe(destination, pipeOptions)));
      destination.once('end', () => {
        // nodemailer 7's socket, the TLS one after STARTTLS; no public name gives it.
        const socket = (connection as unknown as { _socket?: Socket })._socket;
        if (socket === undefined || socket.destroyed === true) return;
        socket.write(Buffer.alloc(0), (error?: Error | null) => { if (!error) dataEnded = true; });
      });
      return destination;
    };
    return new Promise<MailOutcome>((resolve) => {
      let done = false;
      const finish = (error: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        // nodemailer ends its side of the connection and waits for the server to end its own: a
        // relay that never did (silent, or trickling on) kept the socket open for good, one more
        // at every attempt. Nothing more is to be said to it, so the socket is closed outright.
        const socket = (connection as unknown as { _socket?: Socket })._socket;
        connection.close();
        socket?.destroy();
        resolve(error === null ? { sent: true } : failure(error, dataEnded));
      };
      const deadline = setTimeout(() => finish(Object.assign(new Error(`the attempt took ${this.attemptMs} ms`), { code: 'ETIMEDOUT' })), this.attemptMs);
      connection.on('error', finish);
      // Closed with no error (before the greeting): an error or the answer, if any, comes first.
      connection.once('end', () => setImmediate(() => finish(Object.assign(new Error('connection closed'), { code: 'ECONNECTION' }))));
      const sendMail = () => connection.send(mail.getEnvelope(), data, (error) => finish(error ?? null));
      connection.connect(() => {
        // Signed in as the URL says when the server offers it, as nodemailer's transport does.
        const { auth } = options;
        if (auth === undefined || !((connection as { allowsAuth?: boolean }).allowsAuth || options.forceAuth)) return sendMail();
        connection.login(auth, (error) => (error ? finish(error) : sendMail()));
      });
    });
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
      return failure(error, false);
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
