/**
 * The `id_token_hint` of RP-Initiated Logout 1.0 section 2: an id_token we issued, presented to
 * say whom the app signed in. Its signature and issuer are checked against our own published keys
 * (retired keys that are still published included); its expiry is not, because "the OP SHOULD
 * accept ID Tokens when the RP identified by the ID Token's aud claim and/or sid claim has a
 * current session or had a recent session" (section 2, `id_token_hint`).
 */
import { type JWK, compactVerify, decodeJwt, decodeProtectedHeader, importJWK } from 'jose';
import { OAuthError } from '../errors.js';
import { SIGNING_ALGS } from './keys.js';
import type { IdTokenAlg } from './ports.js';
import type { Instant } from '../time.js';

/** What a verified hint tells. */
export interface IdTokenHint {
  /** The user id, as in every id_token. */
  sub: string;
  /** The client(s) it was issued to. */
  audience: string[];
  /** The sign-in session of the grant it came from, when it carries one. */
  sid: string | undefined;
}

export type HintCheck =
  /** Signed by one of our published keys, by us. */
  | { kind: 'verified'; hint: IdTokenHint }
  /**
   * Well formed and naming us as issuer, but signed by a key we no longer publish (or never did):
   * it cannot be told from a forgery, so it counts as no hint at all, and the person is asked.
   */
  | { kind: 'unverifiable' };

const REFUSED = 'The id_token_hint was not issued by this service, or it was altered.';

function refuse(cause?: unknown): OAuthError {
  return new OAuthError('invalid_request', REFUSED, { status: 400, ...(cause === undefined ? {} : { cause }) });
}

/** The published key that can verify a token with this header, or `undefined`. */
export interface PublishedKeys {
  publishedJwk(kid: string, at: Instant): JWK | undefined;
}

/**
 * Checks an id_token_hint. Throws `invalid_request` (shown as a page, never redirected) for a
 * token that is malformed, unsigned or signed with another algorithm than ours, from another
 * issuer, or whose signature does not verify against the published key it names.
 */
export async function verifyIdTokenHint(keys: PublishedKeys, issuer: string, token: string, now: Instant): Promise<HintCheck> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  let claims: ReturnType<typeof decodeJwt>;
  try {
    header = decodeProtectedHeader(token);
    claims = decodeJwt(token);
  } catch (error) {
    throw refuse(error);
  }
  const alg = header.alg as IdTokenAlg;
  // RFC 8725 3.1: only the algorithms we sign with; `none` and HMAC never verify here.
  if (!SIGNING_ALGS.includes(alg)) throw refuse();
  // RFC 8725 3.11: an id_token and nothing else we sign. A logout token (typ logout+jwt, with
  // `events`) is signed with the same keys and names the same user: as a hint it would sign the
  // user out, unasked, long after the app that received it lost its access.
  if (header.typ !== 'JWT' || claims.events !== undefined) throw refuse();
  if (claims.iss !== issuer) throw refuse();
  const jwk = typeof header.kid === 'string' ? keys.publishedJwk(header.kid, now) : undefined;
  if (jwk === undefined) return { kind: 'unverifiable' };
  if (jwk.alg !== undefined && jwk.alg !== alg) throw refuse();
  try {
    await compactVerify(token, await importJWK(jwk, alg), { algorithms: [alg] });
  } catch (error) {
    throw refuse(error);
  }
  const audience = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a) => typeof a === 'string') : [];
  if (typeof claims.sub !== 'string' || audience.length === 0) throw refuse();
  return { kind: 'verified', hint: { sub: claims.sub, audience, sid: typeof claims.sid === 'string' ? claims.sid : undefined } };
}
