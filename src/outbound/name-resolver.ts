/**
 * Which addresses are public, and the addresses of a name someone else chose, for the guarded
 * request (guarded-request.ts), asked of DNS by c-ares on a worker thread, one per kind of request
 * (so a flood of document fetches does not slow back-channel logout):
 * - not the system's getaddrinfo, which runs on libuv's pool of four threads that argon2 and the
 *   id_tokens' signatures share, and holds one for the system resolver's whole timeout when a
 *   name server never answers; a c-ares query holds no thread and is cancelled with its request;
 * - not on the event loop, because c-ares reads an answer there, and an answer of thousands of
 *   addresses (64 KB over TCP, from a name server an attacker runs) costs it tens of milliseconds
 *   each time, which ids naming such a host could ask for at the rate of requests (the loop
 *   stalled for 587 ms at ten at once). On its own thread it costs that thread.
 * Every address is checked there, and only the first few of each family come back: net tries
 * each address it is given in turn, so thousands would mean thousands of connection attempts.
 */
import dns, { type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Worker } from 'node:worker_threads';

/** Addresses no request of ours may reach unless the operator allows them (IANA special-purpose registries). */
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

/** How long a name server has to answer on its first try (c-ares lengthens later tries), and the tries each gets. */
const QUERY_TIMEOUT_MS = 2_000;
const QUERY_TRIES = 2;
/** The addresses of each family handed to the connection, of all those checked. */
export const ADDRESSES_PER_FAMILY = 4;
/** Once one family has addresses, how long the other's answer is awaited (a name server that drops AAAA queries). */
const OTHER_FAMILY_GRACE_MS = 300;

/** What a lookup brings back: addresses to connect to, the first one refused, or why there are none. */
export type ResolvedName =
  | { addresses: LookupAddress[] }
  | { refused: string }
  | { error: { code: string; message: string } };

/** Plain JavaScript, run as the worker's script. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Resolver } = require('node:dns').promises;
const { servers, nonPublic, timeoutMs, tries, perFamily, graceMs } = workerData;
const resolvers = new Map();

async function lookup(resolver, hostname, family) {
  const results = [undefined, undefined];
  const settled = [family === 6 ? [] : resolver.resolve4(hostname), family === 4 ? [] : resolver.resolve6(hostname)]
    .map((asked, i) => Promise.resolve(asked).then((value) => { results[i] = { value }; }, (error) => { results[i] = { error }; }));
  await Promise.race(settled);
  const answered = results.some((result) => result && result.value && result.value.length > 0);
  await (answered ? Promise.race([Promise.all(settled), new Promise((resolve) => setTimeout(resolve, graceMs))]) : Promise.all(settled));
  const v4 = (results[0] && results[0].value) || [];
  const v6 = (results[1] && results[1].value) || [];
  if (v4.length + v6.length === 0) {
    const failure = (results[0] && results[0].error) || (results[1] && results[1].error);
    return { error: failure ? { code: failure.code || 'ENOTFOUND', message: failure.message } : { code: 'ENOTFOUND', message: hostname + ' has no address' } };
  }
  return { v4, v6 };
}

parentPort.on('message', async (message) => {
  if (message.cancel !== undefined) {
    const resolver = resolvers.get(message.cancel);
    resolvers.delete(message.cancel);
    if (resolver) resolver.cancel();
    return;
  }
  const { id, hostname, family, checked } = message;
  const resolver = new Resolver({ timeout: timeoutMs, tries });
  resolver.setServers(servers);
  resolvers.set(id, resolver);
  const found = await lookup(resolver, hostname, family);
  resolver.cancel(); // the family the grace cut short is asked no longer
  if (!resolvers.delete(id)) return;
  if (found.error) return parentPort.postMessage({ id, error: found.error });
  const refused = checked && (found.v4.find((a) => nonPublic.check(a, 'ipv4')) || found.v6.find((a) => nonPublic.check(a, 'ipv6')));
  if (refused) return parentPort.postMessage({ id, refused });
  parentPort.postMessage({ id, addresses: [
    ...found.v4.slice(0, perFamily).map((address) => ({ address, family: 4 })),
    ...found.v6.slice(0, perFamily).map((address) => ({ address, family: 6 })),
  ] });
});
`;

type Answer = ResolvedName & { id: number };

/**
 * A worker thread, started at the first lookup and started again after a failure; the name
 * servers it asks are those the process read at start (/etc/resolv.conf), or `dns.setServers`'.
 * One per kind of request (guarded-request.ts, `GuardOptions.names`).
 */
export class NameResolver {
  #worker: Worker | undefined;
  #nextId = 0;
  readonly #waiting = new Map<number, (answer: ResolvedName) => void>();


  /**
   * Looks `hostname` up (A and AAAA, or `family`'s only); with `checked`, any non-public address
   * among all it has refuses the name. Calls `done` once, unless the returned cancel comes first.
   */
  resolve(hostname: string, family: 0 | 4 | 6, checked: boolean, done: (answer: ResolvedName) => void): () => void {
    const id = this.#nextId++;
    this.#waiting.set(id, done);
    this.#started().postMessage({ id, hostname, family, checked });
    return () => {
      if (this.#waiting.delete(id)) this.#worker?.postMessage({ cancel: id });
    };
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        servers: dns.getServers(), nonPublic: NON_PUBLIC_ADDRESSES, timeoutMs: QUERY_TIMEOUT_MS, tries: QUERY_TRIES,
        perFamily: ADDRESSES_PER_FAMILY, graceMs: OTHER_FAMILY_GRACE_MS,
      },
      // Queries and their answers, 4,000 addresses each at worst: 64 such at once (a kind's bound)
      // sometimes outgrew 16 MB (attack55). Used only as answers need it; it counts in the RSS.
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 },
    });
    worker.on('message', (answer: Answer) => {
      const done = this.#waiting.get(answer.id);
      this.#waiting.delete(answer.id);
      const { id: _, ...resolved } = answer;
      done?.(resolved);
    });
    const stopped = (why: string) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      const waiting = [...this.#waiting.values()];
      this.#waiting.clear();
      for (const done of waiting) done({ error: { code: 'ESERVFAIL', message: `the name resolver stopped: ${why}` } });
    };
    worker.on('error', (error) => stopped(error.message));
    worker.on('exit', (code) => stopped(`exit ${code}`));
    // Pending lookups belong to requests whose own timers keep the process alive.
    worker.unref();
    this.#worker = worker;
    return worker;
  }
}
