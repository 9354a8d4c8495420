/** Client addresses for tests that count requests per address (sent as X-Forwarded-For under TRUST_PROXY=1). */
import { randomInt } from 'node:crypto';

/**
 * A maker of addresses in `network`, the first two octets of an IPv4 /16 (a file's own, so limits a
 * shared Redis counts never meet another file's): each call a different address, starting at a
 * random one. Drawn at random each time, two of a run's could meet, and a test counting one
 * address's requests up to a limit would see its limit reached early.
 */
export function addressesIn(network: string): () => string {
  let made = randomInt(0, 256 * 254);
  return () => {
    const n = made++ % (256 * 254);
    return `${network}.${Math.floor(n / 254)}.${(n % 254) + 1}`;
  };
}
