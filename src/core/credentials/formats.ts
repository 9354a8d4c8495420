/**
 * Credential primitives (INTERFACE section 2): random opaque tokens with a type prefix and a
 * CRC32 checksum, SHA-256 digests for storage, constant-time comparison.
 */
import { hash, randomFillSync, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const TOKEN_PREFIXES = {
  access: 'svco_',
  refresh: 'svcr_',
  personal: 'svcp_',
  clientSecret: 'svcs_',
} as const;

export type TokenKind = keyof typeof TOKEN_PREFIXES;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 32 base62 characters carry 190 bits, above the 160 that INTERFACE section 2 requires. */
const RANDOM_LENGTH = 32;
/**
 * The last characters of the random part, in a token that bears the service's mark
 * (`src/core/credentials/token-marks.ts`): the 27 random ones before them carry 160.8 bits.
 */
export const MARK_LENGTH = 5;
export const CHECKSUM_LENGTH = 6;
const TOKEN_SHAPE = /^svc[oprs]_[0-9A-Za-z]{38}$/;

/**
 * Random bytes from OpenSSL's generator, drawn 4 KiB at a time: a call costs about 5 µs of CPU
 * whatever its size up to 8 KiB (0.1 µs of it per 64 bytes), so a refresh's two tokens took 10 µs
 * drawn one by one (docs/performance.md, decision 40). Node's `randomUUID` keeps such a pool too.
 * Each byte is handed out once; the pool has an allocation of its own, outside Node's shared slab.
 */
const RANDOM_POOL_BYTES = 4096;
const randomPool = Buffer.alloc(RANDOM_POOL_BYTES);
let randomTaken = RANDOM_POOL_BYTES;

/** `length` (at most `RANDOM_POOL_BYTES`) fresh random bytes; a view into the pool, to be read before the next call. */
function randomBytesOnce(length: number): Buffer {
  if (randomTaken + length > RANDOM_POOL_BYTES) {
    randomFillSync(randomPool);
    randomTaken = 0;
  }
  randomTaken += length;
  return randomPool.subarray(randomTaken - length, randomTaken);
}

/** Uniform base62 characters by rejection sampling (248 = 4 × 62, so `byte % 62` is unbiased). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytesOnce(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** `value` in base62, padded with zeros to `width`. */
export function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  do {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  } while (rest > 0);
  return out.padStart(width, '0');
}

/** The number base62 `digits` spell (each one of `BASE62`). */
export function base62Value(digits: string): number {
  let value = 0;
  for (const digit of digits) value = value * 62 + BASE62.indexOf(digit);
  return value;
}

/** CRC32 of everything before the checksum (prefix included), base62, padded to 6. */
export function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH);
}

/**
 * A new opaque token of the given kind: prefix + 32 random base62 + 6-character checksum. With
 * `mark`, the last `MARK_LENGTH` of the 32 are `mark` of the prefix and the random ones before.
 */
export function generateToken(kind: TokenKind, mark?: (random: string) => string): string {
  const random = TOKEN_PREFIXES[kind] + randomBase62(mark === undefined ? RANDOM_LENGTH : RANDOM_LENGTH - MARK_LENGTH);
  const body = mark === undefined ? random : random + mark(random);
  return body + checksum(body);
}

/**
 * Which kind a token claims to be, or `undefined` when it is malformed or fails its checksum.
 * Cheap and offline, so garbage never reaches storage.
 */
export function tokenKind(token: string): TokenKind | undefined {
  if (token.length !== 43 || !TOKEN_SHAPE.test(token)) return undefined;
  const body = token.slice(0, -CHECKSUM_LENGTH);
  if (checksum(body) !== token.slice(-CHECKSUM_LENGTH)) return undefined;
  switch (token[3]) {
    case 'o': return 'access';
    case 'r': return 'refresh';
    case 'p': return 'personal';
    default: return 'clientSecret';
  }
}

/** An authorization code: 256 random bits, base64url (INTERFACE section 2). */
export function generateAuthorizationCode(): string {
  return randomBytesOnce(32).toString('base64url');
}

/** A random value for CSRF tokens, session ids and similar: 256 bits, base64url. */
export function generateOpaqueId(): string {
  return randomBytesOnce(32).toString('base64url');
}

/** The only form in which a token, code or secret is stored: SHA-256, base64url. */
export function hashSecret(secret: string): string {
  // One-shot: no Hash object per call on the paths every request takes (issue 8).
  return hash('sha256', secret, 'base64url');
}

/**
 * Compares two digests of `hashSecret` in time independent of where they differ. Digests are all
 * of one length, which tells nothing, so they are compared as they are, not hashed again to equal
 * lengths as `constantTimeEqual` does (0.3 against 2.0 µs; docs/performance.md, decision 42).
 */
export function digestsEqual(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'));
}

/** Compares two secrets in time independent of where they differ (and of their lengths). */
export function constantTimeEqual(a: string, b: string): boolean {
  // Equal-length digests for `timingSafeEqual`; one-shot, as in `hashSecret` (1.2 against 2.0 µs
  // a comparison with a Hash object per side).
  return timingSafeEqual(hash('sha256', a, 'buffer'), hash('sha256', b, 'buffer'));
}
