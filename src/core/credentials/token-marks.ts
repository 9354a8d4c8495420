/**
 * A mark only this service can make, in the random part of each access and personal token it
 * issues: the last 5 of its 32 base62 characters are an HMAC-SHA256 of the prefix and the 27
 * random characters before them (160.8 bits, INTERFACE section 2's 160 and more), under a key
 * every instance shares (`SharedKeys`, `token-mark-hmac`). A token still looks and checks as any
 * other: prefix, base62, CRC32.
 *
 * What it is for: at an address refused for unknown tokens (`src/core/api/limits.ts`) only marked
 * tokens are looked up. A made-up token bears the mark one time in 916 million, and its lookup
 * then refuses it; the tokens the service issued go on being served there, by any instance, after
 * restarts too, so a page on another site that has its visitors' browsers present made-up tokens
 * cannot cut the apps behind their address off from the API (threat model T13). Tokens made
 * before marks carry none: they are refused at such an address, as every token was before.
 */
import { createHmac } from 'node:crypto';
import { CHECKSUM_LENGTH, MARK_LENGTH, base62, base62Value, generateToken } from './formats.js';
import type { SharedKeys } from './shared-keys.js';

const MARK_VALUES = 62 ** MARK_LENGTH;

/** Makes marked tokens and tells them, with the key read. */
export class TokenMarker {
  constructor(private readonly key: Buffer) {}

  /** A new token of `kind` bearing the mark. */
  generate(kind: 'access' | 'personal'): string {
    return generateToken(kind, (random) => base62(this.markOf(random), MARK_LENGTH));
  }

  /**
   * Whether `token`, well formed with a right checksum (`tokenKind`), bears the mark. The marks
   * are compared as numbers below 2^30: one comparison, whatever digit differs.
   */
  bears(token: string): boolean {
    const end = token.length - CHECKSUM_LENGTH;
    return this.markOf(token.slice(0, end - MARK_LENGTH)) === base62Value(token.slice(end - MARK_LENGTH, end));
  }

  private markOf(random: string): number {
    return createHmac('sha256', this.key).update(random).digest().readUInt32BE(0) % MARK_VALUES;
  }
}

export class TokenMarks {
  /** Built once from the key read; the key never changes under a running instance (`SharedKeys`). */
  private marker: TokenMarker | undefined;

  constructor(private readonly keys: SharedKeys) {}

  /**
   * The marker, with the key. Ask for it before a transaction: on SQLite's one connection, a
   * first read of the key from inside one would wait for that transaction to end.
   */
  async ready(): Promise<TokenMarker> {
    this.marker ??= new TokenMarker(await this.keys.key('token-mark-hmac'));
    return this.marker;
  }
}
