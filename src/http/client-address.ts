/**
 * The client's address as the service counts and records it (rate limits, sign-in throttling, the
 * security log, the audit log, the request log).
 */
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { TrustProxy } from '../config/settings.js';
import type { Requester } from '../core/addresses.js';

/** Fastify's request, as far as an address goes. */
interface AddressedRequest {
  readonly ip: string;
  /** With TRUST_PROXY: the socket's peer, then each X-Forwarded-For entry believed, up to `ip`. */
  readonly ips?: string[] | undefined;
  readonly socket: { readonly remoteAddress?: string | undefined };
}

const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/;
const IPV6_WITH_PORT = /^\[([0-9A-Fa-f:.]+(?:%[0-9A-Za-z-]+)?)\]:(\d{1,5})$/;
/** The highest TCP port: a number above it after an address makes no `address:port`. */
const MAX_PORT = 65535;

/**
 * Whether a browser sent the request: every browser sends `Origin` with a POST (Fetch, "append a
 * request Origin header"; `null` from an opaque origin or after a redirect across origins), and
 * `Sec-Fetch-Site` to secure origins. A native app or a server sends neither unless it chooses
 * to, which a page cannot make it do. Apps in a web view (Capacitor, Cordova, Electron) send
 * `Origin` too, and count as browsers.
 */
function sentByBrowser(request: { readonly headers: IncomingHttpHeaders }): boolean {
  return request.headers.origin !== undefined || request.headers['sec-fetch-site'] !== undefined;
}

/** Who sent a request to an endpoint any program may call: its address, and whether a browser sent it. */
export function requester(request: AddressedRequest & { readonly headers: IncomingHttpHeaders; readonly id?: string }): Requester {
  return { address: clientAddress(request), fromBrowser: sentByBrowser(request), requestId: request.id };
}

/**
 * The browser on one of the site's pages that only a browser opens (the authorization endpoint,
 * sign-in), whether or not it sent `Origin`: a GET over plain http carries neither header.
 */
export function visitor(request: AddressedRequest & { readonly id?: string }): Requester {
  return { address: clientAddress(request), fromBrowser: true, requestId: request.id };
}

/**
 * `clientAddress(request)`, worked out on the first call and kept: the bearer gate asks for it only
 * when a limit needs it (docs/performance.md, decision 46). The socket's peer is known from its
 * accept on (buildApp), so it is right also after the client hung up during a lookup.
 */
export function lazyClientAddress(request: AddressedRequest): () => string {
  let address: string | undefined;
  return () => (address ??= clientAddress(request));
}

/**
 * Fastify's `request.ip`: the socket's peer, or the X-Forwarded-For entry TRUST_PROXY points at
 * (INTERFACE section 8). An entry is used only when it is an address: some proxies (Azure's, for
 * one) append `address:port`, whose port is dropped, so one client keeps one counter. Anything else
 * there can only be a client's own text, reached when TRUST_PROXY counts more proxies than there
 * are; it would let that client write what it likes into another account's security log (a
 * failed sign-in's address) and pick a new counter per request. The nearest entry a trusted proxy
 * wrote stands in for it: the address that proxy saw, the client's own when one proxy too many is
 * counted. An IPv6 zone (`fe80::1%eth0`) names an interface of the host that wrote it, and is any
 * word a client likes: dropped too.
 */
export function clientAddress(request: AddressedRequest): string {
  const claimed = asAddress(request.ip);
  if (claimed !== undefined) return claimed;
  const hops = request.ips ?? [];
  for (let hop = hops.length - 2; hop >= 0; hop--) {
    const written = asAddress(hops[hop]!);
    if (written !== undefined) return written;
  }
  return withoutZone(request.socket.remoteAddress ?? 'unknown');
}

/**
 * Logs one warning, the first time a request carries `X-Forwarded-For` or `Forwarded` from a peer
 * TRUST_PROXY does not trust (none is when it is unset; a list may not name the proxy, whose
 * address changed): behind a proxy left so, every client is the proxy's one address and each
 * per-address limit is the whole site's, which nothing else would tell. Once per process, so a
 * busy site writes it once; the listener then goes, and costs later requests nothing (until then,
 * behind listed proxies, a look at two headers and one list, as the proxy may move later). It names
 * the header and the socket's peer, never the header's values, which are any text a client likes.
 * With a hop count every peer is a proxy: nothing to warn of.
 */
export function warnOfUntrustedForwarding(server: Server, trustProxy: TrustProxy, log: { warn(fields: object, message: string): void }): void {
  if (typeof trustProxy === 'number') return;
  const trusted = trustedProxies(trustProxy === false ? [] : trustProxy);
  const look = (request: IncomingMessage): void => {
    const { headers } = request;
    const header = headers['x-forwarded-for'] !== undefined ? 'X-Forwarded-For' : headers.forwarded !== undefined ? 'Forwarded' : undefined;
    if (header === undefined) return;
    const peer = withoutZone(request.socket.remoteAddress ?? 'unknown');
    if (isIP(peer) !== 0 && trusted.check(peer, isIP(peer) === 4 ? 'ipv4' : 'ipv6')) return;
    server.off('request', look);
    log.warn(
      { header, peer },
      `a request carried ${header} from an address TRUST_PROXY does not trust (peer): behind a proxy, every client counts as the proxy's one address, and each per-address limit (sign-in, client authentication, registration) is shared by all of them. `
        + 'Set TRUST_PROXY to the number of proxies in front (1 for one nginx) or to their addresses, the peer\'s among them (docs/operations.md, "TRUST_PROXY"); with no proxy in front, a client wrote the header and nothing needs changing',
    );
  };
  server.on('request', look);
}

/** TRUST_PROXY's addresses and ranges (checked by `loadSettings`), as proxy-addr, which Fastify trusts them by, reads them. */
function trustedProxies(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

function asAddress(entry: string): string | undefined {
  const address = isIP(entry) !== 0 ? entry : withoutPort(entry);
  return address !== undefined && isIP(address) !== 0 ? withoutZone(address) : undefined;
}

/** The address of `address:port` or `[address]:port`, when the port is one; else `undefined`. */
function withoutPort(entry: string): string | undefined {
  const parts = IPV4_WITH_PORT.exec(entry) ?? IPV6_WITH_PORT.exec(entry);
  return parts && Number(parts[2]) <= MAX_PORT ? parts[1] : undefined;
}

function withoutZone(address: string): string {
  const zone = address.indexOf('%');
  return zone === -1 ? address : address.slice(0, zone);
}
