/**
 * The one request this service makes to an address that someone else chose: a back-channel
 * logout token POSTed to an app's registered `backchannel_logout_uri` (OpenID Back-Channel Logout
 * 1.0 section 2.5). Any signed-in person can register an app, so the address is untrusted input,
 * and the request is kept to what the protocol needs (docs/oidc.md, "Logout: where logout tokens
 * may go"):
 * - the host's addresses are looked up by us and checked before connecting, and the connection
 *   goes to the address that was checked (no second lookup a DNS answer could change in between);
 *   private, loopback, link-local and other non-public addresses are refused unless
 *   `allowPrivateAddresses` (BACKCHANNEL_ALLOW_PRIVATE; on by default only when the service
 *   itself runs on http on a loopback address, for development);
 * - redirects are not followed (a 3xx is a failed attempt);
 * - the answer is read up to 16 KiB and then dropped; only its status counts;
 * - no answer within the timeout is a failed attempt;
 * - no cookie, credential or header of ours is sent beyond the content type and a user agent.
 */
import { type LookupAddress, type LookupOptions, lookup as dnsLookup } from 'node:dns';
import { type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import type { LogoutTokenSender, SendOutcome } from '../core/oidc/logout/delivery.js';

/** Addresses no app's back-channel URI may reach unless the operator allows them (IANA special-purpose registries). */
export const NON_PUBLIC_ADDRESSES = (() => {
  const list = new BlockList();
  const v4: Array<[string, number]> = [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
    ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
    ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
  ];
  // Besides the special-purpose ranges, every IPv6 range that carries an IPv4 address a relay or
  // translator may turn back into one (IPv4-compatible ::/96, SIIT ::ffff:0:0/96, NAT64
  // 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32), and the deprecated site-local fec0::/10.
  const v6: Array<[string, number]> = [
    ['::', 96], ['::ffff:0:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32], ['2001:db8::', 32],
    ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
  ];
  for (const [address, prefix] of v4) list.addSubnet(address, prefix, 'ipv4');
  // BlockList also matches IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) against the IPv4 ranges.
  for (const [address, prefix] of v6) list.addSubnet(address, prefix, 'ipv6');
  return list;
})();

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !NON_PUBLIC_ADDRESSES.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The most of an answer's body that is read; the rest is dropped with the connection. */
const ANSWER_LIMIT_BYTES = 16 * 1024;

export interface LogoutSenderOptions {
  /** Send to private, loopback and other non-public addresses too (development). */
  allowPrivateAddresses: boolean;
  /** An attempt without a whole answer by then has failed. */
  timeoutMs: number;
}

class RefusedAddress extends Error {
  override readonly name = 'RefusedAddress';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export class HttpLogoutSender implements LogoutTokenSender {
  constructor(private readonly options: LogoutSenderOptions) {}

  async send(uri: string, logoutToken: string): Promise<SendOutcome> {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return { delivered: false, error: 'the back-channel logout URI is not a URL' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return { delivered: false, error: 'the back-channel logout URI is not http or https' };
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0 && !this.allowed(host)) return { delivered: false, error: refusal(host) };
    const body = `logout_token=${encodeURIComponent(logoutToken)}`;
    return new Promise<SendOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: SendOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.destroy();
        resolve(outcome);
      };
      const request: ClientRequest = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        agent: false,
        lookup: (hostname: string, options: LookupOptions, callback: LookupCallback) => this.lookup(hostname, options, callback),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'svc-backchannel-logout/1',
        },
      }, (answer: IncomingMessage) => {
        const status = answer.statusCode ?? 0;
        let read = 0;
        const done = () => finish(status === 200 || status === 204
          ? { delivered: true }
          : { delivered: false, error: status >= 300 && status < 400 ? `answered HTTP ${status}; redirects are not followed` : `answered HTTP ${status}` });
        answer.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > ANSWER_LIMIT_BYTES) done();
        });
        answer.on('end', done);
        answer.on('error', done);
        answer.on('close', done);
      });
      const timer = setTimeout(() => finish({ delivered: false, error: `no answer within ${this.options.timeoutMs / 1000} s` }), this.options.timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => {
        const cause = error instanceof RefusedAddress || error.cause instanceof RefusedAddress ? (error instanceof RefusedAddress ? error : error.cause as Error).message
          : error.code ? `${error.code}: ${error.message}` : error.message;
        finish({ delivered: false, error: cause });
      });
      request.end(body);
    });
  }

  private allowed(address: string): boolean {
    return this.options.allowPrivateAddresses || isPublicAddress(address);
  }

  /** DNS as `net.connect` asks for it, with every address checked: the connection goes to a checked one. */
  private lookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((a) => !this.allowed(a.address));
      if (refused) return callback(new RefusedAddress(refusal(refused.address, hostname)), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      return callback(null, first.address, first.family);
    });
  }
}

function refusal(address: string, hostname?: string): string {
  return `refused: ${hostname ? `${hostname} resolves to ` : ''}${address}, which is not a public address (BACKCHANNEL_ALLOW_PRIVATE is off)`;
}
