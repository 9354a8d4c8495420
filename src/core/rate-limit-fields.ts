/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11): `RateLimit-Policy` names a
 * quota policy with its quota `q` and window `w` (section 3), `RateLimit` the quota left `r` under
 * it and the seconds `t` until the window frees it (section 4). Both are Structured Field Lists
 * whose items are Strings (the policy's name). A refusal also carries `Retry-After`, never
 * earlier than the end of `t` (section 6).
 */

/** A quota policy: `quota` requests in each window of `windowSeconds`. */
export interface QuotaPolicy {
  /** A token of letters, digits and `-`: it goes into a Structured Field String unescaped. */
  name: string;
  quota: number;
  windowSeconds: number;
}

const POLICY_NAME = /^[a-z0-9-]+$/;

function named(name: string): string {
  if (!POLICY_NAME.test(name)) throw new Error(`a rate-limit policy name must match ${POLICY_NAME}: ${name}`);
  return `"${name}"`;
}

/** Non-negative integers only (draft section 3.1.1, 4.1.1, 4.1.2). */
function count(value: number): number {
  return Math.max(0, Math.floor(value));
}

/** `RateLimit-Policy: "name";q=60;w=60` (draft section 3). */
export function rateLimitPolicyField(policy: QuotaPolicy): string {
  return `${named(policy.name)};q=${count(policy.quota)};w=${Math.max(1, count(policy.windowSeconds))}`;
}

/** `RateLimit: "name";r=42;t=30` (draft section 4): `remaining` quota, `resetSeconds` until it frees. */
export function rateLimitField(name: string, remaining: number, resetSeconds: number): string {
  return `${named(name)};r=${count(remaining)};t=${count(resetSeconds)}`;
}

/**
 * The headers of a refusal by a counter whose quota is not advertised (the sign-in throttling: the
 * quota would tell which counter refused, the account's or the address's): `Retry-After` and
 * `RateLimit` with nothing left until then, the two saying the same.
 */
export function throttledHeaders(name: string, retryAfterSeconds: number): Record<string, string> {
  const seconds = Math.max(1, count(retryAfterSeconds));
  return { 'retry-after': String(seconds), ratelimit: rateLimitField(name, 0, seconds) };
}
