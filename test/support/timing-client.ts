/**
 * A child process that times requests as a client elsewhere would see them: from sending to the
 * last byte of the answer, in an event loop of its own, so work the server leaves running after
 * answering never counts (in the test's own process it would share the loop with the client).
 * See `TimingClient`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface TimedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Timed {
  status: number;
  ms: number;
}

/** Sends one request at a time through the child and answers how long each took. */
export class TimingClient {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<TimingClient> {
    const child = fork(fileURLToPath(import.meta.url), ['child'], { execArgv: ['--import', 'tsx'] });
    await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`the timing client ended (${code}) while starting`)));
    });
    child.removeAllListeners('exit');
    return new TimingClient(child);
  }

  time(request: TimedRequest): Promise<Timed> {
    return new Promise((resolve) => {
      this.child.once('message', (timed) => resolve(timed as Timed));
      this.child.send(request);
    });
  }

  stop(): void {
    this.child.kill();
  }
}

if (process.argv[2] === 'child') {
  process.on('message', async (request: TimedRequest) => {
    const started = performance.now();
    const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body ?? null, redirect: 'manual' });
    await response.arrayBuffer();
    process.send!({ status: response.status, ms: performance.now() - started } satisfies Timed);
  });
  process.send!('ready');
}
