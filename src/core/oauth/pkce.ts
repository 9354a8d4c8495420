/** Proof Key for Code Exchange (RFC 7636), S256 only (RFC 9700 2.1.1: `plain` is refused). */
import { createHash } from 'node:crypto';

/** RFC 7636 4.2: code_challenge = 43*128unreserved; S256 always gives 43 base64url characters. */
const CHALLENGE_SHAPE = /^[A-Za-z0-9\-._~]{43,128}$/;
/** RFC 7636 4.1: code-verifier = 43*128unreserved. */
const VERIFIER_SHAPE = /^[A-Za-z0-9\-._~]{43,128}$/;

export function isValidCodeChallenge(challenge: string): boolean {
  return CHALLENGE_SHAPE.test(challenge);
}

/**
 * RFC 7636 4.6: the S256 challenge a verifier answers, BASE64URL(SHA256(ASCII(code_verifier))),
 * or `undefined` for a verifier of the wrong shape. The token request's challenge is compared
 * with the code's by the consuming write itself, so a wrong verifier never consumes the code.
 */
export function challengeOf(verifier: string): string | undefined {
  if (!VERIFIER_SHAPE.test(verifier)) return undefined;
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
