/**
 * The client's address as the service counts and records it (rate limits, sign-in throttling, the
 * security log, the audit log, the request log).
 */
import { isIP } from 'node:net';

/** Fastify's request, as far as an address goes. */
interface AddressedRequest {
  readonly ip: string;
  readonly socket: { readonly remoteAddress?: string | undefined };
}

const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const IPV6_WITH_PORT = /^\[([0-9A-Fa-f:.]+)\]:\d{1,5}$/;

/**
 * Fastify's `request.ip`: the socket's peer, or the X-Forwarded-For entry TRUST_PROXY points at
 * (INTERFACE section 8). An entry is used only when it is an address: some proxies (Azure's, for
 * one) append `address:port`, whose port is dropped, so one client keeps one counter. Anything else
 * there can only be a client's own text, reached when TRUST_PROXY counts more proxies than there
 * are; it would let that client write what it likes into another account's security log (a
 * failed sign-in's address) and pick a new counter per request, so the peer that sent it stands
 * in for it.
 */
export function clientAddress(request: AddressedRequest): string {
  const ip = request.ip;
  if (isIP(ip) !== 0) return ip;
  const portless = IPV4_WITH_PORT.exec(ip)?.[1] ?? IPV6_WITH_PORT.exec(ip)?.[1];
  if (portless !== undefined && isIP(portless) !== 0) return portless;
  return request.socket.remoteAddress ?? 'unknown';
}
