/**
 * An app's back-channel logout endpoint, for tests: a plain HTTP server on 127.0.0.1 that keeps
 * every request it gets and answers what the test tells it to, per path. It can be taken down
 * (connections are then refused) and brought up again on the same port.
 */
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';

export interface Received {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The `logout_token` form field, if the body had one. */
  logoutToken: string | undefined;
}

export type Answer = { status: number; location?: string; body?: string };

export class LogoutReceiver {
  readonly received: Received[] = [];
  private readonly answers = new Map<string, Answer>();
  private server: Server | undefined;

  private constructor(readonly port: number) {}

  static async start(port = 0): Promise<LogoutReceiver> {
    const probe = createServer();
    const chosen = port !== 0 ? port : await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)));
    if (port === 0) await new Promise<void>((resolve) => probe.close(() => resolve()));
    const receiver = new LogoutReceiver(chosen);
    await receiver.up();
    return receiver;
  }

  /** The absolute URL of `path` on this receiver. */
  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** What `path` answers from now on (200 by default). */
  answer(path: string, answer: Answer): void {
    this.answers.set(path, answer);
  }

  /** The logout tokens `path` received, in order. */
  tokens(path: string): string[] {
    return this.received.filter((r) => r.path === path && r.logoutToken !== undefined).map((r) => r.logoutToken!);
  }

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = (request.url ?? '/').split('?')[0]!;
        const isForm = (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
        this.received.push({
          path, method: request.method ?? '', headers: request.headers, body,
          logoutToken: isForm ? new URLSearchParams(body).get('logout_token') ?? undefined : undefined,
        });
        const answer = this.answers.get(path) ?? { status: 200 };
        response.writeHead(answer.status, answer.location ? { location: answer.location } : {});
        response.end(answer.body ?? '');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /** Stops listening: connections to it are refused until `up`. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  close(): Promise<void> {
    return this.down();
  }
}
