/**
 * A TCP relay to a real server (PostgreSQL, Redis) that a test can cut — every connection
 * dropped, new ones refused — and restore on the same port: the server going away and coming
 * back, without stopping the shared server itself.
 */
import { type Server, type Socket, createConnection, createServer } from 'node:net';
import { Transform } from 'node:stream';

export class TcpRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly answers = new Set<{ from: Socket; to: Socket }>();
  private stalled = false;
  /** Connections accepted so far. */
  accepted = 0;
  /** Called with what each client sends, as the relay passes it on: what reaches the server. */
  onClientData: ((chunk: Buffer) => void) | undefined;
  /**
   * How long what a client sends takes to reach the server, in milliseconds, for connections
   * accepted from now on: each round trip takes that longer, as to a server far away.
   */
  delayMs = 0;

  /** `port` 0 takes a free port on the first `open()` and keeps it afterwards. */
  /** `target` may be changed: connections accepted from then on reach it (a name whose address changed, as in a failover). */
  constructor(public target: { host: string; port: number }, public port = 0) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      this.accepted++;
      const upstream = createConnection(this.target);
      client.on('data', (chunk: Buffer) => this.onClientData?.(chunk));
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      if (this.delayMs === 0) client.pipe(upstream);
      else client.pipe(delayed(this.delayMs)).pipe(upstream);
      const answer = { from: upstream, to: client };
      this.answers.add(answer);
      upstream.on('close', () => this.answers.delete(answer));
      if (!this.stalled) upstream.pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  /**
   * The server stops answering, connections left open (a stalled server, a network that drops
   * packets): what it sends is held until `resume()`.
   */
  stall(): void {
    this.stalled = true;
    for (const { from, to } of this.answers) from.unpipe(to);
  }

  /** What the server sent meanwhile, and sends from now on, reaches the client (once, however often resumed). */
  resume(): void {
    if (!this.stalled) return;
    this.stalled = false;
    for (const { from, to } of this.answers) from.pipe(to);
  }

  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}

/** Passes each chunk on `ms` after it came, in order, without holding the ones behind it. */
function delayed(ms: number): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      setTimeout(() => this.push(chunk), ms);
      done();
    },
  });
}
