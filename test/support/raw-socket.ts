/**
 * Bytes on a socket as sent, for what no HTTP client sends: no Host or two, several requests and
 * garbage in one packet, a body held back until the server answers `Expect`.
 */
import { type Socket, connect } from 'node:net';

export interface Exchange {
  /** Everything the server sent, as Latin-1. */
  text: string;
  /** Whether the server closed the connection; `false` when it went quiet for `quietMs` and kept it open. */
  closed: boolean;
}

/**
 * Sends `bytes` to the server at `baseUrl` and collects what it sends back until it closes the
 * connection or sends nothing for `quietMs`. `then`, when given, runs once the text received
 * matches `when` (to send a body after `100 Continue`).
 */
export function exchange(baseUrl: string, bytes: string, options: { quietMs?: number; when?: RegExp; then?: (socket: Socket) => void } = {}): Promise<Exchange> {
  const { hostname, port } = new URL(baseUrl);
  const quietMs = options.quietMs ?? 2000;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes, 'latin1'));
    let text = '';
    let then = options.then;
    socket.setEncoding('latin1');
    socket.setTimeout(quietMs, () => { socket.destroy(); resolve({ text, closed: false }); });
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (then && options.when?.test(text)) { then(socket); then = undefined; }
    });
    socket.on('close', () => resolve({ text, closed: true }));
    socket.on('error', reject);
  });
}

/**
 * The head of the first answer the server at `baseUrl` sends to `bytes` (status line and fields,
 * as Latin-1), as soon as it has come, or what came before the server closed the connection:
 * for a request whose announced body is never sent, answered only if nothing waits for the body.
 */
export function firstAnswerHead(baseUrl: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes, 'latin1'));
    let received = '';
    const done = () => { socket.destroy(); resolve(received); };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (received.includes('\r\n\r\n')) done();
    });
    socket.on('close', done);
    socket.on('error', done);
  });
}

export interface Answer { status: number; headers: Map<string, string>; body: string }

/** The answers in `text`, in order: interim (1xx) ones included, bodies read by Content-Length or in chunks. */
export function answersIn(text: string): Answer[] {
  const answers: Answer[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) throw new Error(`an answer's head does not end: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    // Latin-1 text holds one character per byte.
    let body = '';
    let at = end + 4;
    if (headers.get('transfer-encoding') === 'chunked') {
      for (let size = -1; size !== 0; at += 2) {
        const sizeEnd = rest.indexOf('\r\n', at);
        size = Number.parseInt(rest.slice(at, sizeEnd), 16);
        body += rest.slice(sizeEnd + 2, sizeEnd + 2 + size);
        at = sizeEnd + 2 + size;
      }
    } else {
      body = rest.slice(at, at + Number(headers.get('content-length') ?? 0));
      at += body.length;
    }
    answers.push({ status: Number(statusLine!.split(' ')[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') });
    rest = rest.slice(at);
  }
  if (rest !== '') throw new Error(`not an answer: ${JSON.stringify(rest.slice(0, 200))}`);
  return answers;
}
