/**
 * The access and personal tokens this instance has issued or served, kept as fingerprints of
 * their hashes. At an address refused for unknown tokens (`ApiLimits`), only these are looked up:
 * guesses stay refused before any lookup, and a web page that has its visitors' browsers present
 * made-up tokens cannot cut the apps behind their address (a carrier's NAT: thousands of people)
 * off from the API, whose tokens were issued or served here before (threat model T13).
 *
 * A fixed table of 2^17 slots (512 KiB, nothing allocated per token): a hash's first 17 bits pick
 * its slot, the next 30 its fingerprint. A newer token landing in the same slot replaces an older
 * one, which is then looked up again only where its address is not refused, and remembered anew. A
 * made-up token passes only when its fingerprint matches its slot's, one guess in a billion, and
 * its lookup still refuses it.
 */

const SLOT_BITS = 17;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SEXTETS = new Uint8Array(128);
for (let i = 0; i < BASE64URL.length; i += 1) SEXTETS[BASE64URL.charCodeAt(i)] = i;

/** The number the `count` base64url characters of `text` from `from` spell (6 bits each). */
function sextets(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i += 1) value = value * 64 + SEXTETS[text.charCodeAt(i) & 127]!;
  return value;
}

export class KnownTokens {
  private readonly fingerprints = new Uint32Array(1 << SLOT_BITS);

  /** Remembers the token whose hash (`hashSecret`, base64url) is `tokenHash`. */
  add(tokenHash: string): void {
    this.fingerprints[slotOf(tokenHash)] = fingerprintOf(tokenHash);
  }

  /** Whether the token whose hash is `tokenHash` may have been issued or served here (never a false no for the newest in its slot). */
  has(tokenHash: string): boolean {
    return this.fingerprints[slotOf(tokenHash)] === fingerprintOf(tokenHash);
  }
}

function slotOf(tokenHash: string): number {
  return sextets(tokenHash, 0, 3) >>> (18 - SLOT_BITS);
}

/** 30 bits plus one: an empty slot (0) matches no hash. */
function fingerprintOf(tokenHash: string): number {
  return sextets(tokenHash, 3, 5) + 1;
}
