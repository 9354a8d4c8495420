/** The id_token (OpenID Connect Core 1.0 section 2, INTERFACE section 5). */
import { createHash } from 'node:crypto';
import { ID_TOKEN_LIFETIME_SECONDS } from './keys.js';
import { signCompact } from './jws.js';
import type { User } from '../accounts/ports.js';
import type { Client } from '../oauth/ports.js';
import type { Instant } from '../time.js';
import type { KeySet } from './key-ring.js';
import { type ClaimsSite, type ClaimsUser, hasProfileClaims, profileClaims } from './claims.js';

/**
 * OIDC Core 3.1.3.6: the left-most half of the hash of the access token's ASCII octets, with the
 * hash of the id_token's `alg` (SHA-256 for RS256 and ES256), base64url.
 */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

export interface IdTokenRequest {
  issuer: string;
  client: Pick<Client, 'clientId' | 'idTokenAlg'>;
  user: ClaimsUser;
  scopes: readonly string[];
  /** Absent on refresh (OIDC Core 12.2). */
  nonce: string | null;
  authTime: Instant;
  /** The sign-in session the grant was approved in (Back-Channel Logout 1.0 section 2.1); none for older grants. */
  sid?: string | null;
  /** RFC 8176 methods of the sign-in (OIDC Core 2 `amr`); null for grants older than the record of them. */
  amr?: readonly string[] | null;
  accessToken: string;
  now: Instant;
}

/**
 * OpenID Connect Core 2: `auth_time` is the sign-in time in whole seconds since the epoch, cut
 * down. The authorization endpoint judges `max_age` by it too (`tooOld` in authorize/flow.ts), so
 * the two agree on how old a sign-in is.
 */
export function idTokenAuthTime(authTime: Instant): number {
  return Math.floor(authTime / 1000);
}

/** Signs with the key of the client's algorithm that is active at `request.now`. */
export async function issueIdToken(keys: KeySet, site: ClaimsSite, request: IdTokenRequest): Promise<string> {
  const key = await keys.signingKey(request.client.idTokenAlg, request.now);
  const iat = Math.floor(request.now / 1000);
  const claims: Record<string, unknown> = {
    iss: request.issuer,
    sub: String(request.user.id),
    aud: request.client.clientId,
    iat,
    exp: iat + ID_TOKEN_LIFETIME_SECONDS,
    azp: request.client.clientId,
    auth_time: idTokenAuthTime(request.authTime),
    at_hash: accessTokenHash(request.accessToken),
    ...(request.amr && request.amr.length > 0 ? { amr: [...request.amr] } : {}),
    ...(request.nonce === null ? {} : { nonce: request.nonce }),
    ...(request.sid == null ? {} : { sid: request.sid }),
    ...(hasProfileClaims(request.scopes) ? profileClaims(request.user, site) : {}),
  };
  return signCompact(key, 'JWT', claims);
}
