/**
 * Bearer authentication for the resource API (seed section 5, RFC 6750): an OAuth access token
 * (`svco_`) or a personal token (`svcp_`) in `Authorization: Bearer`. Malformed tokens and bad
 * checksums are refused offline, so garbage never reaches storage; a well-formed one costs one
 * lookup that already joins the grant's revocation, the client's status and the user's status.
 */
import { hashSecret, tokenKind } from './credentials.js';
import { OAuthError } from './errors.js';
import type { Stores, User } from './ports.js';
import { type Scope, scopeList } from './scopes.js';
import { type Clock, type Instant, LAST_USED_RESOLUTION_MS } from './time.js';

/** The realm named in every `WWW-Authenticate` challenge of the resource API. */
export const API_REALM = 'api';

/** Who a valid bearer token speaks for, and what it may read. */
export interface Bearer {
  kind: 'access' | 'personal';
  tokenId: number;
  /** The user's row as the lookup found it (the resource API answers `/me` from it). */
  user: User;
  /** `null` for personal tokens. */
  clientId: string | null;
  /** `null` for personal tokens. */
  grantId: number | null;
  scopes: Scope[];
}

/** A key naming the token without revealing it, for counters and caches. */
export function bearerKey(bearer: Pick<Bearer, 'kind' | 'tokenId'>): string {
  return `${bearer.kind === 'access' ? 'o' : 'p'}:${bearer.tokenId}`;
}

function challenge(attributes: Record<string, string> = {}): string {
  const parts = [`realm="${API_REALM}"`, ...Object.entries(attributes).map(([k, v]) => `${k}="${v}"`)];
  return `Bearer ${parts.join(', ')}`;
}

/**
 * RFC 9728 5.1: the same refusal with `resource_metadata="<url>"` added to its challenge, so a
 * client that meets it can find the resource's metadata and its authorization server. A refusal
 * without a challenge (429) stays as it is. Each refusal is extended once (`extended` keeps it).
 */
export function withResourceMetadata(refusal: OAuthError, url: string, extended: WeakMap<OAuthError, OAuthError>): OAuthError {
  const challengeHeader = refusal.headers['www-authenticate'];
  if (challengeHeader === undefined) return refusal;
  let answer = extended.get(refusal);
  if (answer === undefined) {
    answer = new OAuthError(refusal.code, refusal.description, {
      status: refusal.status,
      headers: { ...refusal.headers, 'www-authenticate': `${challengeHeader}, resource_metadata="${url}"` },
    });
    extended.set(refusal, answer);
  }
  return answer;
}

/** RFC 6750 3.1 `invalid_token`: malformed, unknown, expired or revoked, or an unusable account. */
export function invalidToken(description: string): OAuthError {
  return new OAuthError('invalid_token', description, {
    headers: { 'www-authenticate': challenge({ error: 'invalid_token' }) },
  });
}

/** RFC 6750 3.1 `insufficient_scope`, naming the scope the request needs and where to ask for it. */
export function insufficientScope(scope: Scope): OAuthError {
  return new OAuthError('insufficient_scope', `This endpoint needs the scope ${scope}: add it to the scope of the authorization request (the user approves it), then use the new access token.`, {
    headers: { 'www-authenticate': challenge({ error: 'insufficient_scope', scope }) },
  });
}

/**
 * Every way bearer authentication refuses, each built once: a refusal is an ordinary answer on
 * this path, and the API sends these as they are (issue 8). Each says what to send instead.
 */
export const BEARER_REFUSALS = {
  /** RFC 6750 3.1: a request without any credentials gets a challenge with no error attribute. */
  missing: new OAuthError('invalid_token', 'This endpoint needs an access token: send "Authorization: Bearer <token>".', {
    headers: { 'www-authenticate': challenge() },
  }),
  /**
   * RFC 6750 2.2 and 2.3 are not supported (INTERFACE section 5): a token in the query string or a
   * form body (passport-oauth2's default) ends up in logs and histories. No error attribute: the
   * request carries no credentials this API reads.
   */
  outsideHeader: new OAuthError('invalid_token', 'Tokens in the query string or a form body are not accepted: send the access token in the header "Authorization: Bearer <token>".', {
    headers: { 'www-authenticate': challenge() },
  }),
  notBearer: invalidToken('The Authorization header must be "Bearer <token>", with the access token from the token response or a personal token.'),
  /** RFC 9449 is not supported yet: tokens are issued as Bearer tokens. */
  dpop: invalidToken('DPoP-bound tokens are not supported: the token endpoint issued a Bearer token, so send "Authorization: Bearer <token>" without a DPoP proof.'),
  refreshToken: invalidToken('This is a refresh token: send the access_token (svco_...) of the token response here, and the refresh token only to the token endpoint.'),
  jwt: invalidToken('This is a JWT, such as an id_token: send the access_token (svco_...) of the token response here; the id_token only tells your app who signed in.'),
  clientSecret: invalidToken('This is a client secret: send an access token (svco_...) or a personal token (svcp_...), and keep the secret on your server.'),
  notAToken: invalidToken('The token is not an access token (svco_...) or a personal token (svcp_...): send the access_token of the token response, whole.'),
  unknown: invalidToken('The token is unknown: send the access_token of the latest token response whole, or get a new one by refreshing.'),
  revoked: invalidToken('The token was revoked (the user withdrew access, the app was deactivated, or the token was revoked): authorize again.'),
  expired: invalidToken('The token has expired: get a new access token with your refresh token (grant_type=refresh_token).'),
  // Seed section 3 rule 4: a token of an account whose status is unusable is answered with 401.
  unusableAccount: invalidToken('The account this token belongs to cannot be used.'),
} as const;

/** The refusals made before any lookup: no credentials, not a bearer header, a token of the wrong shape or checksum. */
const OFFLINE_REFUSALS: ReadonlySet<OAuthError> = new Set([
  BEARER_REFUSALS.missing, BEARER_REFUSALS.outsideHeader, BEARER_REFUSALS.notBearer, BEARER_REFUSALS.dpop,
  BEARER_REFUSALS.refreshToken, BEARER_REFUSALS.jwt, BEARER_REFUSALS.clientSecret, BEARER_REFUSALS.notAToken,
]);

/** Whether `refusal` was decided without a lookup (see `OFFLINE_REFUSALS`). */
export function refusedOffline(refusal: OAuthError): boolean {
  return OFFLINE_REFUSALS.has(refusal);
}

/** A compact JWS (RFC 7515 7.1): three base64url parts, the header a JSON object. */
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Why a well-formed bearer value that is no access or personal token is refused. */
function wrongKindRefusal(token: string, kind: ReturnType<typeof tokenKind>): OAuthError {
  if (kind === 'refresh') return BEARER_REFUSALS.refreshToken;
  if (kind === 'clientSecret') return BEARER_REFUSALS.clientSecret;
  return JWT_SHAPE.test(token) ? BEARER_REFUSALS.jwt : BEARER_REFUSALS.notAToken;
}

/** RFC 6750 2.1: `Bearer` (any letter case), one or more spaces, the token. */
const BEARER_HEADER = /^Bearer +([^\s]+) *$/i;

/**
 * The token in an `Authorization` header: `undefined` when there is no header at all,
 * `null` when there is one that does not carry a bearer token.
 */
export function bearerToken(authorization: string | undefined): string | null | undefined {
  if (authorization === undefined || authorization === '') return undefined;
  return BEARER_HEADER.exec(authorization)?.[1] ?? null;
}

/**
 * Authenticates the `Authorization` header: the bearer, or the 401 refusal to answer with
 * (one of `BEARER_REFUSALS`, returned rather than thrown). Malformed tokens and bad checksums are
 * refused before storage. Expired is `expiresAt <= now`; a revoked token, grant or deactivated
 * client shows as `revokedAt`. `tokenOutsideHeader`: the request carried a token where this API
 * does not read one (the query string, a form body), so a request without the header is told so.
 */
export async function authenticateBearer(deps: { stores: Stores; clock: Clock }, authorization: string | undefined, tokenOutsideHeader = false): Promise<Bearer | OAuthError> {
  const token = bearerToken(authorization);
  if (token === undefined) return tokenOutsideHeader ? BEARER_REFUSALS.outsideHeader : BEARER_REFUSALS.missing;
  if (token === null) return /^DPoP /i.test(authorization!) ? BEARER_REFUSALS.dpop : BEARER_REFUSALS.notBearer;
  const kind = tokenKind(token);
  if (kind !== 'access' && kind !== 'personal') return wrongKindRefusal(token, kind);
  const hash = hashSecret(token);
  const record = kind === 'access'
    ? await deps.stores.tokens.findAccessBearer(hash)
    : await deps.stores.personalTokens.findBearer(hash);
  if (!record) return BEARER_REFUSALS.unknown;
  const now: Instant = deps.clock.now();
  if (record.revokedAt !== null) return BEARER_REFUSALS.revoked;
  if (record.expiresAt !== null && record.expiresAt <= now) return BEARER_REFUSALS.expired;
  if (record.user.status !== 'active') return BEARER_REFUSALS.unusableAccount;
  return {
    kind,
    tokenId: record.tokenId,
    user: record.user,
    clientId: record.clientId,
    grantId: record.grantId,
    scopes: scopeList(record.scope),
  };
}

/** The 403 `insufficient_scope` refusal when the token lacks `scope` (RFC 6750 3.1); `undefined` when it holds it. */
export function scopeRefusal(bearer: Bearer, scope: Scope | undefined): OAuthError | undefined {
  return scope === undefined || bearer.scopes.includes(scope) ? undefined : insufficientScope(scope);
}

/**
 * Remembers when each token's last use was recorded, so `last used` is written at most once per
 * `intervalMs` per token and the hot path stays a read. Per process; each instance writes its own.
 */
export class UsageRecorder {
  private readonly recorded = new Map<string, Instant>();

  constructor(private readonly intervalMs = LAST_USED_RESOLUTION_MS, private readonly maxEntries = 100_000) {}

  async record(stores: Stores, bearer: Bearer, now: Instant): Promise<void> {
    const key = bearerKey(bearer);
    const last = this.recorded.get(key);
    if (last !== undefined && now - last < this.intervalMs && now >= last) return;
    if (this.recorded.size >= this.maxEntries) this.recorded.clear();
    this.recorded.set(key, now);
    if (bearer.kind === 'personal') await stores.personalTokens.touch(bearer.tokenId, now);
    else if (bearer.grantId !== null) await stores.grants.touch(bearer.grantId, now);
  }
}
