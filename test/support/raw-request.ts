/**
 * Requests `fetch` cannot make: header fields sent as given, repeats included (`fetch` joins two
 * values of a name into one field line), and a request line in absolute form.
 */
import { type IncomingMessage, request } from 'node:http';

export interface RawAnswer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/**
 * `method` `url` with `fields`, a flat list of names and values sent in that order, and `body`; on
 * the request line `url`'s path and query, or `target` as given (a URL in absolute form, RFC 9112
 * 3.2.2, as a client sends to a proxy).
 */
export function rawRequest(method: string, url: string, fields: readonly string[], body?: string, { target }: { target?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    // Given as a list, the fields are all Node sends: Host is not added for us.
    const { host, hostname, port } = new URL(url);
    const headers = ['Host', host, ...fields, ...(body === undefined ? [] : ['Content-Length', String(Buffer.byteLength(body))])];
    const sent = target === undefined ? request(url, { method, headers }, answered) : request({ method, hostname, port, path: target, headers }, answered);
    function answered(answer: IncomingMessage): void {
      let text = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => { text += chunk; });
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: text }));
    }
    sent.on('error', reject);
    sent.end(body);
  });
}
