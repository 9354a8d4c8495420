/**
 * Requests `fetch` cannot make: header fields sent as given, repeats included (`fetch` joins two
 * values of a name into one field line).
 */
import { request } from 'node:http';

export interface RawAnswer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** `method` `url` with `fields`, a flat list of names and values sent in that order, and `body`. */
export function rawRequest(method: string, url: string, fields: readonly string[], body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    // Given as a list, the fields are all Node sends: Host is not added for us.
    const headers = ['Host', new URL(url).host, ...fields, ...(body === undefined ? [] : ['Content-Length', String(Buffer.byteLength(body))])];
    const sent = request(url, { method, headers }, (answer) => {
      let text = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => { text += chunk; });
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: text }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}
