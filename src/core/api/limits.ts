/**
 * Rate limits of the resource API (seed section 8, INTERFACE section 7):
 * - per token: `rateLimitPerMinute` (default 60) requests in each aligned minute, counted across
 *   instances when the limiter is Redis; past it 429 `rate_limited` with `Retry-After: 60`;
 * - per client address, for tokens that were looked up and refused (unknown, expired, revoked, an
 *   unusable account): so guessing tokens is slow. Once an address is over its limit, this
 *   instance refuses it until the window ends, before any lookup, except for the tokens that
 *   bear the service's mark (`TokenMarks`): those are looked up and served as before, so the
 *   apps behind an address that another site's page fills with made-up tokens go on. Refusals
 *   made offline (no token, a malformed one, a bad checksum) are not counted: a guess has to pass
 *   the checksum to be one, refusing such a request costs no more than answering it, and
 *   counting it would turn a flood of garbage, which never reaches storage, into a write per
 *   request to the shared counter.
 */
import { addressKey } from '../addresses.js';
import { type Bearer, bearerKey, meantForValidHolder, refusedOffline } from './bearer.js';
import { OAuthError } from '../errors.js';
import type { RateLimitDecision, RateLimiter } from '../rate-limiter.js';
import { rateLimitField, rateLimitPolicyField } from '../rate-limit-fields.js';
import type { Instant } from '../time.js';

export const API_WINDOW_SECONDS = 60;
/** Seed table 7.2: a 429 carries `Retry-After: 60`. */
export const RETRY_AFTER_SECONDS = 60;
/** Failed authentications allowed per address and minute, at least; more when the token limit is raised. */
export const MIN_FAILURES_PER_ADDRESS = 300;

export function rateLimited(description: string): OAuthError {
  return new OAuthError('rate_limited', description, { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } });
}

/** The per-token policy's name in the IETF fields. */
export const TOKEN_POLICY = 'per-token';
/** The per-address policy's name (refused tokens) in the IETF fields. */
export const ADDRESS_POLICY = 'per-address';

/** Seconds from `now` to `resetAt` (epoch seconds), within one window. */
function secondsUntil(resetAt: number, now: Instant): number {
  return Math.min(API_WINDOW_SECONDS, Math.max(0, resetAt - Math.floor(now / 1000)));
}

/**
 * The headers of a token's decision: `X-RateLimit-*` (INTERFACE section 7) and the same numbers as
 * the IETF fields (INTERFACE section 11): `q` is the limit, `r` the remaining, `t` the seconds to
 * `X-RateLimit-Reset`.
 */
export function rateLimitHeaders(decision: RateLimitDecision, now: Instant): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAt),
    'ratelimit-policy': tokenPolicyField(decision.limit),
    ratelimit: rateLimitField(TOKEN_POLICY, decision.remaining, secondsUntil(decision.resetAt, now)),
  };
}

/** The last token policy's field: every valid token's answer carries it, and its quota rarely changes. */
let lastTokenPolicy = { quota: -1, field: '' };

function tokenPolicyField(quota: number): string {
  if (lastTokenPolicy.quota !== quota) {
    lastTokenPolicy = { quota, field: rateLimitPolicyField({ name: TOKEN_POLICY, quota, windowSeconds: API_WINDOW_SECONDS }) };
  }
  return lastTokenPolicy.field;
}

export class ApiLimits {
  private readonly blockedUntil = new Map<string, number>();
  private readonly failuresPerAddress: number;

  constructor(
    private readonly limiter: RateLimiter,
    private readonly perTokenPerMinute: number,
  ) {
    this.failuresPerAddress = Math.max(MIN_FAILURES_PER_ADDRESS, perTokenPerMinute * 5);
  }

  /** Counts one request of a valid token. */
  hitToken(bearer: Bearer, now: Instant): Promise<RateLimitDecision> {
    return this.limiter.hit(`api:token:${bearerKey(bearer)}`, this.perTokenPerMinute, API_WINDOW_SECONDS, now);
  }

  /**
   * Whether this address is refused for the rest of its window (checked before any lookup: only
   * the tokens that bear the service's mark are then looked up). `addressOf` is called only while some
   * address is refused.
   */
  isBlocked(addressOf: () => string, now: Instant): boolean {
    if (this.blockedUntil.size === 0) return false;
    const key = addressKey(addressOf());
    const until = this.blockedUntil.get(key);
    if (until === undefined) return false;
    if (Math.floor(now / 1000) < until) return true;
    this.blockedUntil.delete(key);
    return false;
  }

  /** The IETF fields of an address refused for the rest of its window: nothing left until it ends. */
  addressHeaders(address: string, now: Instant): Record<string, string> {
    const until = this.blockedUntil.get(addressKey(address)) ?? Math.floor(now / 1000) + API_WINDOW_SECONDS;
    return {
      'ratelimit-policy': rateLimitPolicyField({ name: ADDRESS_POLICY, quota: this.failuresPerAddress, windowSeconds: API_WINDOW_SECONDS }),
      ratelimit: rateLimitField(ADDRESS_POLICY, 0, secondsUntil(until, now)),
    };
  }

  /**
   * Counts a refused token against its address, `addressOf()` (unless refused offline, which needs
   * no address, or meant for a valid token's holder); says whether the address is still within
   * its limit.
   */
  async hitFailure(addressOf: () => string, refusal: OAuthError, now: Instant): Promise<boolean> {
    if (refusedOffline(refusal) || meantForValidHolder(refusal)) return true;
    const key = addressKey(addressOf());
    const decision = await this.limiter.hit(`api:address:${key}`, this.failuresPerAddress, API_WINDOW_SECONDS, now);
    if (decision.allowed) return true;
    if (this.blockedUntil.size > 100_000) this.blockedUntil.clear();
    this.blockedUntil.set(key, decision.resetAt);
    return false;
  }
}
