/**
 * The one way this service makes a request to an address that someone else chose: back-channel
 * logout tokens POSTed to an app's `backchannel_logout_uri` (logout-sender.ts) and client ID
 * metadata documents fetched from an app's `client_id` (client-metadata-fetcher.ts). The address
 * is untrusted input, so the request is kept to what the protocols need (docs/oidc.md, "Logout:
 * where logout tokens may go"; docs/oauth.md, "Client ID metadata documents"):
 * - the host's addresses are looked up by us and checked before connecting, and the connection
 *   goes to the address that was checked (no second lookup a DNS answer could change in between,
 *   so DNS rebinding cannot swap in an internal address); private, loopback, link-local and other
 *   non-public addresses are refused unless `allowPrivateAddresses`;
 * - names are asked of the name servers by c-ares on a thread per kind of request
 *   (name-resolver.ts), and the query is cancelled when the request ends: names whose DNS never
 *   answers, or answers with thousands of addresses, cost their requests' time and that thread's,
 *   nothing else. So /etc/hosts is not read: localhost names are loopback by RFC 6761 6.3, and any
 *   other name must be in DNS, fully qualified;
 * - redirects are not followed (the 3xx itself is the answer);
 * - the answer's body is read up to `maxBodyBytes`, and the connection is dropped past it;
 * - the whole exchange, from the lookup to the body's last byte, ends by `timeoutMs`;
 * - no cookie, credential or header of ours is sent beyond those the caller names and a user agent.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { type SecureContext, createSecureContext } from 'node:tls';
import { type NameResolver, isPublicAddress } from './name-resolver.js';

export interface GuardOptions {
  /**
   * The thread that resolves names for this kind of request: one per kind, so a flood of one
   * (document fetches, which anyone can cause) does not slow the other (back-channel logout).
   */
  names: NameResolver;
  /** Reach private, loopback and other non-public addresses too (development). */
  allowPrivateAddresses: boolean;
  /** The setting that would allow them, named in a refusal so the operator knows where to look. */
  allowSetting: string;
  /** No whole answer by then: the request has failed. */
  timeoutMs: number;
  /** The most of a body that is read. */
  maxBodyBytes: number;
  /** Past `maxBodyBytes`: `drop` keeps the status and what was read; `fail` fails the request. */
  oversize: 'drop' | 'fail';
  userAgent: string;
}

export interface OutboundRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/** A failure is `answered` when the server sent its status line: something there speaks HTTP. */
export type GuardedAnswer =
  | { ok: true; status: number; headers: IncomingHttpHeaders; body: Buffer }
  | { ok: false; answered: boolean; error: string };

class RefusedAddress extends Error {
  override readonly name = 'RefusedAddress';
}

/** RFC 6761 6.3: `localhost` and the names under it are the loopback addresses, asked of no name server. */
const LOOPBACK_ADDRESSES: readonly LookupAddress[] = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

let secureContext: SecureContext | undefined;

/** One TLS client context for every request: the defaults, as a request without one gets. */
function defaultSecureContext(): SecureContext {
  secureContext ??= createSecureContext();
  return secureContext;
}

/** One request to `uri` under `options`' rules; never throws, never follows a redirect. */
export function guardedRequest(uri: string, outbound: OutboundRequest, options: GuardOptions): Promise<GuardedAnswer> {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return Promise.resolve({ ok: false, answered: false, error: 'the address is not a URL' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.resolve({ ok: false, answered: false, error: 'the address is not http or https' });
  const allowed = (address: string) => options.allowPrivateAddresses || isPublicAddress(address);
  const refusal = (address: string, hostname?: string) =>
    `refused: ${hostname ? `${hostname} resolves to ` : ''}${address}, which is not a public address (${options.allowSetting} is off)`;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0 && !allowed(host)) return Promise.resolve({ ok: false, answered: false, error: refusal(host) });
  // Ended when the request ends, so no query outlives it.
  let cancelLookup: (() => void) | undefined;
  // DNS as `net.connect` asks for it, with every address checked: the connection goes to a checked one.
  const lookup = (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    const family = lookupOptions.family === 4 || lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 6 || lookupOptions.family === 'IPv6' ? 6 : 0;
    const connectTo = (addresses: readonly LookupAddress[]) => {
      const refused = addresses.find((a) => !allowed(a.address));
      if (refused) return callback(new RefusedAddress(refusal(refused.address, hostname)), []);
      if (lookupOptions.all) return callback(null, [...addresses]);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    };
    if (isLocalhostName(hostname)) return connectTo(LOOPBACK_ADDRESSES.filter((a) => family === 0 || a.family === family));
    cancelLookup = options.names.resolve(hostname, family, !options.allowPrivateAddresses, (resolved) => {
      if ('refused' in resolved) return callback(new RefusedAddress(refusal(resolved.refused, hostname)), []);
      if ('error' in resolved) return callback(Object.assign(new Error(resolved.error.message), { code: resolved.error.code }), []);
      return connectTo(resolved.addresses);
    });
  };
  return new Promise<GuardedAnswer>((resolve) => {
    let answered = false;
    let settled = false;
    const finish = (answer: GuardedAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      cancelLookup?.();
      resolve(answer);
    };
    const headers: Record<string, string | number> = { ...outbound.headers, 'user-agent': options.userAgent };
    if (outbound.body !== undefined) headers['content-length'] = Buffer.byteLength(outbound.body);
    const request: ClientRequest = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method: outbound.method,
      agent: false,
      // The default context (Node's trusted CAs, NODE_EXTRA_CA_CERTS), made once: each request
      // would otherwise make its own, an OpenSSL context freed only when V8 collects its small
      // wrapper, and a burst of fetches held 12-20 MB of them (issue 35 item 5).
      ...(url.protocol === 'https:' && { secureContext: defaultSecureContext() }),
      lookup,
      headers,
    }, (answer: IncomingMessage) => {
      answered = true;
      const status = answer.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let read = 0;
      const done = () => finish({ ok: true, status, headers: answer.headers, body: Buffer.concat(chunks) });
      const tooLarge = () => (options.oversize === 'fail'
        ? finish({ ok: false, answered, error: `the answer is larger than ${options.maxBodyBytes} bytes` })
        : done());
      // A declared length past the limit fails before a byte of the body is read.
      if (options.oversize === 'fail' && Number(answer.headers['content-length'] ?? 0) > options.maxBodyBytes) return tooLarge();
      answer.on('data', (chunk: Buffer) => {
        const room = options.maxBodyBytes - read;
        read += chunk.length;
        if (room > 0) chunks.push(chunk.subarray(0, room));
        if (read > options.maxBodyBytes) tooLarge();
      });
      answer.on('end', done);
      answer.on('error', done);
      answer.on('close', done);
    });
    const timer = setTimeout(() => finish({ ok: false, answered, error: `no answer within ${options.timeoutMs / 1000} s` }), options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      const refused = error instanceof RefusedAddress ? error : error.cause instanceof RefusedAddress ? error.cause : undefined;
      // Trying several addresses, net fails with an AggregateError whose own message is empty.
      const message = error instanceof AggregateError ? error.errors.map((e: Error) => e.message).join('; ') : error.message;
      finish({ ok: false, answered, error: refused ? refused.message : error.code ? `${error.code}: ${message}` : message });
    });
    request.end(outbound.body);
  });
}
