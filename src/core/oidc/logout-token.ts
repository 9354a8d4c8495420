/** The logout token (OpenID Back-Channel Logout 1.0 section 2.4). */
import type { Client } from '../oauth/ports.js';
import type { Instant } from '../time.js';
import type { KeySet } from './key-ring.js';
import { signCompact } from './jws.js';

/** Section 2.4: the one event a logout token carries. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** Section 2.4 recommends a short lifetime ("a few minutes"); it is signed afresh on every attempt. */
export const LOGOUT_TOKEN_LIFETIME_SECONDS = 120;

export interface LogoutTokenRequest {
  issuer: string;
  client: Pick<Client, 'clientId' | 'idTokenAlg'>;
  /** The user id, as the id_token's `sub`. */
  sub: string;
  /** The ended session's `sid`, as in the id_tokens of its grants; `null`: every session of `sub`. */
  sid: string | null;
  /** The same on every attempt of one delivery, so the app can tell a repeat (section 2.6). */
  jti: string;
  now: Instant;
}

/**
 * Signed like an id_token (section 2.4): with the key of the client's id_token algorithm active at
 * `now`, header `typ: logout+jwt` (section 2.4, RFC 8725 3.11, so it can never pass for an
 * id_token), claims `iss`, `aud`, `iat`, `exp`, `jti`, `sub`, `sid` when known, `events`, and
 * never `nonce` (section 2.4: its presence is what makes an RP refuse the token).
 */
export async function issueLogoutToken(keys: KeySet, request: LogoutTokenRequest): Promise<string> {
  const key = await keys.signingKey(request.client.idTokenAlg, request.now);
  const iat = Math.floor(request.now / 1000);
  return signCompact(key, 'logout+jwt', {
    iss: request.issuer,
    aud: request.client.clientId,
    sub: request.sub,
    iat,
    exp: iat + LOGOUT_TOKEN_LIFETIME_SECONDS,
    jti: request.jti,
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    ...(request.sid === null ? {} : { sid: request.sid }),
  });
}
