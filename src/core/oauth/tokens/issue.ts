/** Issuing an access token and a refresh token under a grant (seed table 2.1, INTERFACE section 2). */
import { checkGrantedResource } from '../../api/resource.js';
import { generateToken, hashSecret } from '../../credentials/formats.js';
import type { TokenMarker } from '../../credentials/token-marks.js';
import { issueIdToken } from '../../oidc/id-token.js';
import type { KeySet } from '../../oidc/key-ring.js';
import type { User } from '../../accounts/ports.js';
import type { Client, Grant, NewIssuedToken } from '../ports.js';
import { scopeList } from '../scopes.js';
import { type Instant, lastUseDue } from '../../time.js';
import { siteUrls } from '../../urls.js';

/** Everything the token response is built from; the route turns it into seed table 2.1's JSON. */
export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  /** The access token's scope, space separated. */
  scope: string;
  grant: Grant;
  user: User;
  client: Client;
  issuedAt: Instant;
  /** The nonce to put in an id_token: the authorization request's, and none on refresh (OIDC Core 12.2). */
  nonce: string | null;
  /** Signed when the granted scope includes `openid` (OIDC Core 3.1.3.3). */
  idToken?: string;
  /** The DPoP key both tokens are bound to (RFC 9449 5): `token_type` DPoP; `null`: Bearer. */
  dpopJkt: string | null;
}

/** An issuance made and signed, not yet stored: the answer, both tokens' rows, and whether the grant's "last used" is due. */
export interface PreparedTokens {
  issued: IssuedTokens;
  access: NewIssuedToken;
  refresh: NewIssuedToken;
  /** "Last used" to the minute, as for API use (`lastUseDue`): a chain of quick refreshes writes it once, and none while the clock is behind it. */
  touchGrant: boolean;
}

type IssueSettings = { baseUrl: string; siteTimeZone: string; accessTokenTtlSeconds: number; refreshTokenTtlSeconds: number };
type Issue = { grant: Grant; user: User; client: Client; accessScope: string; refreshScope: string; nonce: string | null; dpopJkt: string | null; resource: string | null };

/**
 * Makes a new access token (scope `accessScope`) and refresh token (scope `refreshScope`,
 * RFC 6749 6: a rotated refresh token keeps the scope of the one it replaces), both bound to
 * `dpopJkt` when the request carried a DPoP proof (RFC 9449 5), and signs the id_token when
 * `accessScope` has `openid` (OIDC Core 3.1.3.3, and 12.2 on refresh: without nonce, with the
 * original auth_time). RFC 8707: the access token is for the resource the token request named,
 * else the one the authorization named (`null`: no audience of its own), and only within what the
 * authorization allowed (`invalid_target` otherwise, thrown before anything is made); the refresh
 * token keeps the authorization's. Nothing is stored: a code's redemption stores them with its
 * consumption (`CodeStore.redeem`), a refresh with its rotation (`TokenStore.rotate`).
 */
export async function prepareTokens(now: Instant, settings: IssueSettings, signing: { keys: KeySet; marker: TokenMarker }, issue: Issue): Promise<PreparedTokens> {
  checkGrantedResource(issue.grant.resource, issue.resource);
  const { keys, marker } = signing;
  // The access token bears the service's mark, for the resource API to tell it from a made-up one.
  const accessToken = marker.generate('access');
  const refreshToken = generateToken('refresh');
  const scopes = scopeList(issue.accessScope);
  const idToken = scopes.includes('openid')
    ? await issueIdToken(keys, { urls: siteUrls(settings.baseUrl), timeZone: settings.siteTimeZone }, {
      issuer: settings.baseUrl,
      client: issue.client,
      user: issue.user,
      scopes,
      nonce: issue.nonce,
      authTime: issue.grant.authTime,
      sid: issue.grant.sid,
      amr: issue.grant.amr,
      accessToken,
      now,
    })
    : undefined;
  const issued: IssuedTokens = {
    accessToken,
    refreshToken,
    expiresIn: settings.accessTokenTtlSeconds,
    scope: issue.accessScope,
    grant: issue.grant,
    user: issue.user,
    client: issue.client,
    issuedAt: now,
    nonce: issue.nonce,
    ...(idToken === undefined ? {} : { idToken }),
    dpopJkt: issue.dpopJkt,
  };
  const common = { grantId: issue.grant.id, clientId: issue.client.clientId, userId: issue.user.id, createdAt: now, dpopJkt: issue.dpopJkt };
  return {
    issued,
    access: { ...common, tokenHash: hashSecret(accessToken), scope: issue.accessScope, expiresAt: now + settings.accessTokenTtlSeconds * 1000, resource: issue.resource ?? issue.grant.resource },
    refresh: { ...common, tokenHash: hashSecret(refreshToken), scope: issue.refreshScope, expiresAt: now + settings.refreshTokenTtlSeconds * 1000, resource: issue.grant.resource },
    touchGrant: lastUseDue(issue.grant.lastUsedAt, now),
  };
}
