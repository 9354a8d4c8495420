/** Client addresses as the per-address limits count them. */
import { isIPv6 } from 'node:net';

/**
 * The key an address is counted under: an IPv4 address as it is (an IPv6 address that stands for
 * an IPv4 one as that IPv4, however it is spelled: `embeddedIPv4`), an IPv6 address by its /64,
 * the smallest network a provider hands one customer (RFC 6177), so a host cannot dodge a
 * per-address limit by walking through the 2^64 addresses it owns.
 */
export function addressKey(address: string): string {
  return networkKey(address, 4);
}

/** Who sent a request, as the per-address limits count it. */
export interface Requester {
  /** The client address (`clientAddress`). */
  readonly address: string;
  /**
   * A browser sent it: it carried `Origin` or `Sec-Fetch-Site`, which every browser sends with a
   * POST and a page cannot remove, or it came to a page only a browser opens (the authorization
   * endpoint, sign-in).
   */
  readonly fromBrowser: boolean;
  /** The request's id, as its log lines carry it (`reqId`): an audit line it causes carries it too. */
  readonly requestId?: string | undefined;
}

/**
 * The key of the share of its address a request counts in, where a limit could otherwise be used
 * up by a page on another site from its visitors' browsers: the browsers' share, or other
 * programs' (an app's backend, a native app, a command-line tool), so such a page never refuses
 * the programs behind its visitors' address (a carrier's NAT). A sender that writes the headers
 * itself gets both shares, twice the quota, no more.
 */
export function addressShare(requester: Requester): string {
  return inShare(addressKey(requester.address), requester.fromBrowser);
}

/** `addressShare` by the address's site (`siteKey`), for the shares every sender competes for. */
export function siteShare(requester: Requester): string {
  return inShare(siteKey(requester.address), requester.fromBrowser);
}

function inShare(key: string, fromBrowser: boolean): string {
  return fromBrowser ? `browsers:${key}` : key;
}

/**
 * The key of an address's site: an IPv4 address as `addressKey` counts it, an IPv6 address by its
 * /48, the network a provider may hand one site (RFC 6177 3) and a home user's /56 lies in. For a
 * share of something every sender competes for (the line to argon2, the document fetches held),
 * where a sender holding the 256 /64s of a /56 must count as one; too wide for the limits that
 * lock out, which count by `addressKey`.
 */
export function siteKey(address: string): string {
  return networkKey(address, 3);
}

/** An IPv4 address as it is (embedded ones too), an IPv6 address by its first `groups` 16-bit groups. */
function networkKey(address: string, groups: 3 | 4): string {
  if (!isIPv6(address)) return address;
  const all = ipv6Groups(address);
  const ipv4 = embeddedIPv4(all);
  if (ipv4 !== undefined) return [ipv4[0] >> 8, ipv4[0] & 0xff, ipv4[1] >> 8, ipv4[1] & 0xff].join('.');
  return `${all.slice(0, groups).map((group) => group.toString(16)).join(':')}::/${groups * 16}`;
}

/**
 * The IPv4 address (as two 16-bit groups) of an IPv6 address that stands for an IPv4 client or
 * network: one client, one key, whichever way it reached us. Counted by its /64 or /48, every
 * IPv4 client seen through a translator would share one key, and one sender's failures would
 * lock them all out; and one IPv4 address would own 65,536 /64s under 6to4.
 * - `::ffff:0:0/96`, IPv4-mapped (RFC 4291 2.5.5.2): a dual-stack socket's IPv4 peers.
 * - `64:ff9b::/96`, the well-known prefix (RFC 6052 2.1): an IPv6-only service behind a stateless
 *   translator (SIIT-DC, RFC 7755) sees its IPv4 clients so. A network-specific prefix can put the
 *   IPv4 address elsewhere (RFC 6052 2.2) and is counted as any IPv6 network.
 * - `::ffff:0:0:0/96`, IPv4-translated (RFC 2765 2.1), older SIIT's spelling of the same.
 * - `::/96`, IPv4-compatible (RFC 4291 2.5.5.1, deprecated), but for `::`, `::1` and the rest of
 *   0.0.0.0/8, which are no client's IPv4 address.
 * - `2002::/16`, 6to4 (RFC 3056 2): the /48 of the IPv4 address in its second and third groups,
 *   whatever follows.
 */
function embeddedIPv4(all: number[]): [number, number] | undefined {
  const zeroes = (groups: number[]) => groups.every((group) => group === 0);
  const last: [number, number] = [all[6]!, all[7]!];
  if (zeroes(all.slice(0, 5)) && all[5] === 0xffff) return last;
  if (all[0] === 0x64 && all[1] === 0xff9b && zeroes(all.slice(2, 6))) return last;
  if (zeroes(all.slice(0, 4)) && all[4] === 0xffff && all[5] === 0) return last;
  if (zeroes(all.slice(0, 6)) && all[6]! >> 8 !== 0) return last;
  if (all[0] === 0x2002) return [all[1]!, all[2]!];
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (RFC 4291 2.2): `::` filled, a dotted IPv4 tail two groups, a zone dropped. */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('%')[0]!.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').flatMap((group) => {
    if (!group.includes('.')) return [parseInt(group, 16)];
    const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
    return [(a << 8) | b, (c << 8) | d];
  }));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}
