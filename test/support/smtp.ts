/**
 * A real SMTP server in the test process (the `smtp-server` package) on a free port, which keeps
 * every message it accepts, parsed (`mailparser`). It can be stopped and started again on the
 * same port, as a mail server that goes down and comes back.
 */
import { type AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string;
  from: string;
  subject: string;
  text: string;
  html: string | undefined;
  parsed: ParsedMail;
}

export class TestSmtpServer {
  readonly received: ReceivedMail[] = [];
  private server: SMTPServer | undefined;
  /** Recipients the server refuses, at RCPT or at the end of DATA, with the reply code and text it answers. */
  private readonly refusals = new Map<string, { code: number; text: string; step: 'rcpt' | 'data' }>();
  /** Recipients whose message's end is never answered (`unanswer`). */
  private readonly unanswered = new Set<string>();

  private constructor(private port: number) {}

  static async start(): Promise<TestSmtpServer> {
    const smtp = new TestSmtpServer(0);
    await smtp.listen();
    return smtp;
  }

  /** `smtp://127.0.0.1:PORT`, for SMTP_URL. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The mails sent to `address`, oldest first. */
  to(address: string): ReceivedMail[] {
    return this.received.filter((m) => m.to === address);
  }

  /**
   * Refuses `address` at RCPT (or, `step` `data`, the message sent to it, at the end of DATA) with
   * `code` and `text` (a 550 "5.1.1 no such mailbox", a 450 greylisting…) until `accept`. The
   * reply carries an enhanced status code (RFC 3463) only where `text` starts with one.
   */
  refuse(address: string, code: number, text: string, step: 'rcpt' | 'data' = 'rcpt'): void {
    this.refusals.set(address, { code, text, step });
  }

  /**
   * Takes a message to `address` whole, keeps it (it arrived), and drops the connection without
   * answering its end, as a relay that crashed or whose link broke then, until `accept`.
   */
  unanswer(address: string): void {
    this.unanswered.add(address);
  }

  /** Accepts mail to `address` again. */
  accept(address: string): void {
    this.refusals.delete(address);
    this.unanswered.delete(address);
  }

  async listen(): Promise<void> {
    const server = new SMTPServer({
      // No TLS and no sign-in: a mail server on the loopback, as a developer's relay.
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      // smtp-server would add an enhanced status code of its choosing to every reply: a refusal's
      // text says whether it has one, and which.
      hideENHANCEDSTATUSCODES: true,
      onRcptTo: (address, _session, callback) => {
        const refusal = this.refusals.get(address.address);
        callback(refusal?.step === 'rcpt' ? Object.assign(new Error(refusal.text), { responseCode: refusal.code }) : undefined);
      },
      onData: (stream, session, callback) => {
        simpleParser(stream).then((parsed) => {
          const refusal = session.envelope.rcptTo.map((r) => this.refusals.get(r.address)).find((r) => r?.step === 'data');
          if (refusal) {
            callback(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
            return;
          }
          this.received.push({
            to: session.envelope.rcptTo.map((r) => r.address).join(','),
            from: parsed.from?.text ?? '',
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : undefined,
            parsed,
          });
          if (session.envelope.rcptTo.some((r) => this.unanswered.has(r.address))) {
            // smtp-server keeps its connections, each with its socket, by the session's id.
            const connections = (server as unknown as { connections: Set<{ id: string; _socket: { destroy: () => void } }> }).connections;
            for (const connection of connections) if (connection.id === session.id) connection._socket.destroy();
            return;
          }
          callback();
        }, callback);
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops accepting connections: the mail server is down until `listen` again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
