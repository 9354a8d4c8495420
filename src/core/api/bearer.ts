/**
 * Bearer authentication for the resource API (seed section 5, RFC 6750): an OAuth access token
 * (`svco_`) or a personal token (`svcp_`) in `Authorization: Bearer`; and a DPoP-bound access
 * token in `Authorization: DPoP` with a proof of its key (RFC 9449 7). Malformed tokens and bad
 * checksums are refused offline, so garbage never reaches storage; a well-formed one costs one
 * lookup that already joins the grant's revocation, the client's status and the user's status.
 */
import { hashSecret, tokenKind } from '../credentials/formats.js';
import { DPOP_ALGS, DpopProofError } from '../oauth/dpop/proof.js';
import { type DpopVerifier, OtherKeyError, type PresentedProof } from '../oauth/dpop/verifier.js';
import type { TokenMarks } from '../credentials/token-marks.js';
import { ACCOUNT_NOT_ACTIVE, OAuthError } from '../errors.js';
import type { User } from '../accounts/ports.js';
import { whyEnded } from '../accounts/accounts.js';
import type { Stores } from '../stores.js';
import { RESOURCE_SCOPES, type Scope, scopeList } from '../oauth/scopes.js';
import { type Clock, type Instant, LAST_USED_RESOLUTION_MS, hasExpired, lastUseDue } from '../time.js';

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
  /** The RFC 8707 resource an access token is for alone; `null`: none was named (personal tokens always). */
  resource: string | null;
  /** How the request presented it: its challenges and refusals name this scheme. */
  scheme: AuthScheme;
  /** A newer DPoP nonce for the answer's `DPoP-Nonce` (RFC 9449 9), when the proof's is about to expire. */
  dpopNonce?: string;
}

/** A key naming the token without revealing it, for counters and caches. */
export function bearerKey(bearer: Pick<Bearer, 'kind' | 'tokenId'>): string {
  return `${bearer.kind === 'access' ? 'o' : 'p'}:${bearer.tokenId}`;
}

export type AuthScheme = 'Bearer' | 'DPoP';

/** What bearer authentication reads: the stores, the clock, DPoP proofs, and the service's token mark. */
export interface BearerDeps {
  stores: Stores;
  clock: Clock;
  dpop: DpopVerifier;
  tokenMarks: TokenMarks;
}

function oneChallenge(scheme: AuthScheme, attributes: Record<string, string>): string {
  const own = scheme === 'DPoP' ? { realm: API_REALM, algs: DPOP_ALGS.join(' ') } : { realm: API_REALM };
  return `${scheme} ${Object.entries({ ...own, ...attributes }).map(([k, v]) => `${k}="${v}"`).join(', ')}`;
}

/**
 * A 401's challenges: Bearer and DPoP (RFC 6750 3, RFC 9449 7.1, with the proof algorithms in
 * `algs`), the `attributes` (an error) on the scheme the request used, which comes first.
 */
function challenge(attributes: Record<string, string> = {}, scheme: AuthScheme = 'Bearer'): string {
  const other: AuthScheme = scheme === 'Bearer' ? 'DPoP' : 'Bearer';
  return `${oneChallenge(scheme, attributes)}, ${oneChallenge(other, {})}`;
}

/**
 * `attribute` appended to every challenge of a `WWW-Authenticate` value (RFC 9110 11.6.1): after
 * each challenge's parameters, where the next scheme begins outside a quoted string, and at the end.
 */
function addToEachChallenge(header: string, attribute: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < header.length; i += 1) {
    const c = header[i]!;
    if (c === '"' && header[i - 1] !== '\\') quoted = !quoted;
    if (!quoted && c === ',' && /^, (?:Bearer|DPoP) /.test(header.slice(i, i + 9))) out += `, ${attribute}`;
    out += c;
  }
  return `${out}, ${attribute}`;
}

/**
 * RFC 9728 5.1: the same refusal with `resource_metadata="<url>"` added to each challenge, so a
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
      headers: { ...refusal.headers, 'www-authenticate': addToEachChallenge(challengeHeader, `resource_metadata="${url}"`) },
    });
    extended.set(refusal, answer);
  }
  return answer;
}

/** RFC 6750 3.1 `invalid_token`: malformed, unknown, expired or revoked, or an unusable account. */
export function invalidToken(description: string, scheme: AuthScheme = 'Bearer'): OAuthError {
  return new OAuthError('invalid_token', description, {
    headers: { 'www-authenticate': challenge({ error: 'invalid_token' }, scheme) },
  });
}

/**
 * RFC 6750 3.1 `insufficient_scope`, naming the scope the request needs and where to get it (on
 * the scheme it used): an app asks for it in its authorization request; a personal token's scopes
 * are fixed when it is made, so its owner makes another.
 */
export function insufficientScope(scope: Scope, scheme: AuthScheme = 'Bearer', kind: Bearer['kind'] = 'access'): OAuthError {
  // UserInfo's openid is no scope a personal token can be made with (RESOURCE_SCOPES).
  const remedy = kind !== 'personal'
    ? ': add it to the scope of the authorization request (the user approves it), then use the new access token.'
    : RESOURCE_SCOPES.includes(scope)
      ? ': this personal token was made without it; make one that has it under Settings > API tokens, then use that token.'
      : ', which no personal token can have: use the access token of an authorization request whose scope had it.';
  return new OAuthError('insufficient_scope', `This endpoint needs the scope ${scope}${remedy}`, {
    headers: { 'www-authenticate': oneChallenge(scheme, { error: 'insufficient_scope', scope }) },
  });
}

/**
 * RFC 9449 7.1 and 9: a refused proof at the resource API is a 401 whose DPoP challenge carries
 * the error (`invalid_dpop_proof`, or `use_dpop_nonce` with the nonce in `DPoP-Nonce`).
 */
export function resourceDpopError(error: DpopProofError): OAuthError {
  const headers: Record<string, string> = { 'www-authenticate': challenge({ error: error.code }, 'DPoP') };
  if (error.nonce !== undefined) headers['dpop-nonce'] = error.nonce;
  return new OAuthError(error.code, error.description, { status: 401, headers });
}

/** How a request sends its token in `scheme`, for a refusal that says so. */
function headerOf(scheme: AuthScheme): string {
  return scheme === 'Bearer' ? 'Authorization: Bearer <token>' : 'Authorization: DPoP <token> with its DPoP proof';
}

/** The 400 for a token in the header with `access_token` in `where` too (RFC 6750 2, 3.1). */
function alsoSent(where: string, scheme: AuthScheme): OAuthError {
  return new OAuthError('invalid_request', `The request carried both the Authorization header and access_token in ${where}: a request carries its access token one way only, so send it in the header alone, ${headerOf(scheme)}, and no access_token elsewhere.`, {
    headers: { 'www-authenticate': challenge({ error: 'invalid_request' }, scheme) },
  });
}

/**
 * The 400 for a POST to UserInfo whose body is neither a form nor absent (RFC 6750 3.1
 * `invalid_request`): OIDC Core 5.3.1 takes GET or POST, and a POST's body is form-encoded
 * (RFC 6750 2.2), as node-oidc-provider reads it too. Refused rather than left unread, so a client
 * that sends its parameters as JSON learns they are not read, and a body is never parsed for
 * nothing. Given on the challenge of the scheme the request used.
 */
function bodyNotForm(scheme: AuthScheme): OAuthError {
  return new OAuthError('invalid_request', `A POST to UserInfo carries no body or a form (Content-Type: application/x-www-form-urlencoded), and no other type: send the token in the header, ${headerOf(scheme)}, with GET or an empty POST.`, {
    headers: { 'www-authenticate': challenge({ error: 'invalid_request' }, scheme) },
  });
}

/**
 * Every way bearer authentication refuses, each built once: a refusal is an ordinary answer on
 * this path, and the API sends these as they are (issue 8). Each says what to send instead.
 */
export const BEARER_REFUSALS = {
  /** RFC 6750 3.1: a request without any credentials gets a challenge with no error attribute. */
  missing: new OAuthError('invalid_token', 'This endpoint needs an access token: send the header Authorization: Bearer <token>.', {
    headers: { 'www-authenticate': challenge() },
  }),
  /**
   * RFC 6750 2.2 and 2.3 are not supported (INTERFACE section 5): a token in the query string or a
   * form body (passport-oauth2's default) ends up in logs and histories. No error attribute: the
   * request carries no credentials this API reads.
   */
  outsideHeader: new OAuthError('invalid_token', 'Tokens in the query string or a form body are not accepted: send the access token in the header Authorization: Bearer <token>.', {
    headers: { 'www-authenticate': challenge() },
  }),
  /**
   * A form body sent without the header where no form is read (the resource API, MCP): whether it
   * holds a token is not known, so it is told neither that it has none nor that one in it is
   * refused, only what is true. RFC 6750 3.1: no credentials were read, so no error attribute,
   * as for `missing` (UserInfo, which reads its form, answers a form without a token so).
   */
  formUnread: new OAuthError('invalid_token', 'This endpoint reads no form body, so no token in one is read: send the access token in the header Authorization: Bearer <token>.', {
    headers: { 'www-authenticate': challenge() },
  }),
  /**
   * RFC 6750 3.1 `invalid_request` (400): more than one Authorization header (RFC 9110 5.3: it
   * takes one value). Node would keep the first and drop the rest unseen.
   */
  repeatedHeader: new OAuthError('invalid_request', 'The request carried more than one Authorization header: send exactly one, Authorization: Bearer <token>.', {
    headers: { 'www-authenticate': challenge({ error: 'invalid_request' }) },
  }),
  /**
   * RFC 6750 2 and 3.1 `invalid_request` (400): a client uses one method a request, and this one
   * sent its token in the `Authorization` header and `access_token` in the query string as well
   * (`alsoSent`). Given on the challenge of the scheme it used; decided once the header's token is
   * accepted, so the request is a valid holder's and is counted against its token, never against
   * its address.
   */
  alsoInQuery: alsoSent('the query string', 'Bearer'),
  alsoInQueryDpop: alsoSent('the query string', 'DPoP'),
  /** The same for `access_token` in a form body, where a form is read (UserInfo, OIDC Core 5.3.1). */
  alsoInForm: alsoSent('the form body', 'Bearer'),
  alsoInFormDpop: alsoSent('the form body', 'DPoP'),
  bodyNotForm: bodyNotForm('Bearer'),
  bodyNotFormDpop: bodyNotForm('DPoP'),
  notBearer: invalidToken('The Authorization header must be Bearer <token>, with the access token from the token response or a personal token (or DPoP <token> with a DPoP proof, for a token of token_type DPoP).'),
  /** RFC 9449 7.1: the DPoP scheme needs exactly one proof in the `DPoP` header. */
  dpopWithoutProof: new OAuthError('invalid_dpop_proof', 'Authorization: DPoP needs a DPoP header with a proof made for this request (htm, htu, and ath: the hash of the access token).', {
    status: 401, headers: { 'www-authenticate': challenge({ error: 'invalid_dpop_proof' }, 'DPoP') },
  }),
  /** RFC 9449 7.1: a bearer token (personal tokens included) is not bound to any key. */
  notBound: invalidToken('This token is a Bearer token, not bound to a DPoP key: send it as Authorization: Bearer <token>.', 'DPoP'),
  /** RFC 9449 7.2: a bound token presented as a bearer token is refused (its holder must prove the key). */
  boundAsBearer: invalidToken('This token is bound to a DPoP key (token_type DPoP): send Authorization: DPoP <token> with a DPoP proof signed by that key.', 'DPoP'),
  /** RFC 9449 7.1: the proof is signed by another key than the token is bound to. */
  wrongKey: invalidToken('The DPoP proof is signed with another key than the one this token is bound to: sign the proof with the key of the token request.', 'DPoP'),
  refreshToken: invalidToken('This is a refresh token: send the access_token (svco_...) of the token response here, and the refresh token only to the token endpoint.'),
  jwt: invalidToken('This is a JWT, such as an id_token: send the access_token (svco_...) of the token response here; the id_token only tells your app who signed in.'),
  clientSecret: invalidToken('This is a client secret: send an access token (svco_...) or a personal token (svcp_...), and keep the secret on your server.'),
  notAToken: invalidToken('The token is not an access token (svco_...) or a personal token (svcp_...): send the access_token of the token response, whole.'),
  unknown: invalidToken('The token is unknown: send the access_token of the latest token response whole, or get a new one by refreshing.'),
  revoked: invalidToken('The token was revoked (the user withdrew access, the app was deactivated, or the token was revoked): authorize again.'),
  /** No authorization makes a personal token: its holder makes another. */
  revokedPersonal: invalidToken('The personal token was revoked (by its owner, by the site\'s staff, or after it was reported leaked): make a new one under Settings > API tokens, and use that.'),
  expired: invalidToken('The token has expired: get a new access token with your refresh token (grant_type=refresh_token).'),
  // Seed section 3 rule 4: a token of an account whose status is unusable is answered with 401.
  unusableAccount: invalidToken(ACCOUNT_NOT_ACTIVE),
} as const;

/** The refusals made before any lookup: no credentials, not a bearer header, a token of the wrong shape or checksum. */
const OFFLINE_REFUSALS: ReadonlySet<OAuthError> = new Set([
  BEARER_REFUSALS.missing, BEARER_REFUSALS.outsideHeader, BEARER_REFUSALS.formUnread, BEARER_REFUSALS.repeatedHeader, BEARER_REFUSALS.notBearer, BEARER_REFUSALS.dpopWithoutProof,
  BEARER_REFUSALS.refreshToken, BEARER_REFUSALS.jwt, BEARER_REFUSALS.clientSecret, BEARER_REFUSALS.notAToken,
]);

/** Whether `refusal` was decided without a lookup (see `OFFLINE_REFUSALS`). */
export function refusedOffline(refusal: OAuthError): boolean {
  return OFFLINE_REFUSALS.has(refusal);
}

/**
 * Whether `refusal` is meant for a valid token's holder: the server asking for a DPoP nonce
 * (RFC 9449 9; every DPoP client meets it, again after a nonce expires). It is no failed
 * authentication of the address, and is told even at an address refused for unknown tokens.
 */
export function meantForValidHolder(refusal: OAuthError): boolean {
  return refusal.code === 'use_dpop_nonce';
}

/** A compact JWS (RFC 7515 7.1): three base64url parts, the header a JSON object. */
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Why a well-formed bearer value that is no access or personal token is refused. */
function wrongKindRefusal(token: string, kind: ReturnType<typeof tokenKind>): OAuthError {
  if (kind === 'refresh') return BEARER_REFUSALS.refreshToken;
  if (kind === 'clientSecret') return BEARER_REFUSALS.clientSecret;
  return JWT_SHAPE.test(token) ? BEARER_REFUSALS.jwt : BEARER_REFUSALS.notAToken;
}

/** RFC 6750 2.1 and RFC 9449 7.1: `Bearer` or `DPoP` (any letter case), one or more spaces, the token. */
const AUTHORIZATION_HEADER = /^(Bearer|DPoP) +([^\s]+) *$/i;

/**
 * The scheme and token of an `Authorization` header: `undefined` when there is no header at all,
 * `null` when there is one that carries neither a bearer nor a DPoP token.
 */
export function authorizationToken(authorization: string | undefined): { scheme: AuthScheme; token: string } | null | undefined {
  if (authorization === undefined || authorization === '') return undefined;
  const match = AUTHORIZATION_HEADER.exec(authorization);
  if (!match) return null;
  return { scheme: match[1]!.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: match[2]! };
}

/**
 * The token in an `Authorization: Bearer` header: `undefined` when there is no header at all,
 * `null` when there is one that does not carry a bearer token.
 */
export function bearerToken(authorization: string | undefined): string | null | undefined {
  const found = authorizationToken(authorization);
  if (found === undefined) return undefined;
  return found?.scheme === 'Bearer' ? found.token : null;
}

/**
 * What a request without the `Authorization` header carries where this API reads no token (RFC
 * 6750 2.2 and 2.3 are not supported): `token`, one seen there (`access_token` in the query string,
 * or in a form body read to look); `unreadForm`, a form body not read, which may hold one or not.
 */
export type TokenElsewhere = 'token' | 'unreadForm';

/**
 * Authenticates the `Authorization` header: the bearer, or the 401 refusal to answer with
 * (one of `BEARER_REFUSALS`, returned rather than thrown). Malformed tokens and bad checksums are
 * refused before storage. Expired is `hasExpired`, the rule the token lists name it by; a revoked
 * token, grant or deactivated client shows as `revokedAt`. `elsewhere`: what a request without
 * the header carries where this API reads no token, which its refusal tells. `proofOf`: the
 * request's DPoP proof, read and checked (after everything else) for `Authorization: DPoP` only.
 * `onlyMarked`: the request's address is refused for unknown tokens, so a token that does not
 * bear the service's mark (`TokenMarks`) is refused as unknown without a lookup.
 */
export async function authenticateBearer(
  deps: BearerDeps,
  authorization: string | undefined,
  elsewhere?: TokenElsewhere,
  proofOf?: () => PresentedProof,
  onlyMarked = false,
): Promise<Bearer | OAuthError> {
  const presented = authorizationToken(authorization);
  if (presented === undefined) {
    return elsewhere === 'token' ? BEARER_REFUSALS.outsideHeader : elsewhere === 'unreadForm' ? BEARER_REFUSALS.formUnread : BEARER_REFUSALS.missing;
  }
  if (presented === null) return BEARER_REFUSALS.notBearer;
  const { scheme, token } = presented;
  const proof = scheme === 'DPoP' ? proofOf?.() : undefined;
  const refused = await lookup(deps, scheme, token, proof, onlyMarked);
  if (refused instanceof OAuthError) return scheme === 'DPoP' ? onDpopChallenge(refused) : refused;
  const { kind, record, accountNotActive } = refused;
  const bearer: Bearer = {
    kind,
    tokenId: record.tokenId,
    user: record.user,
    clientId: record.clientId,
    grantId: record.grantId,
    scopes: scopeList(record.scope),
    resource: record.resource,
    scheme,
  };
  const held = scheme === 'Bearer' ? (record.dpopJkt === null ? bearer : BEARER_REFUSALS.boundAsBearer)
    : record.dpopJkt === null ? BEARER_REFUSALS.notBound
    : await possession(deps.dpop, { ...proof!, proof: proof!.proof! }, token, record.dpopJkt, bearer);
  // Told only to the token's holder, a bound token's with its key (RFC 9449 7.1): anyone else is
  // told what an active account's token would be, so a token stolen without its key watches no status.
  if (!accountNotActive || held instanceof OAuthError) return held;
  return scheme === 'DPoP' ? onDpopChallenge(BEARER_REFUSALS.unusableAccount) : BEARER_REFUSALS.unusableAccount;
}

/** The token's record, or the refusal decided before the scheme matters. */
async function lookup(deps: BearerDeps, scheme: AuthScheme, token: string, proof: PresentedProof | undefined, onlyMarked: boolean) {
  const kind = tokenKind(token);
  if (kind !== 'access' && kind !== 'personal') return wrongKindRefusal(token, kind);
  if (scheme === 'DPoP' && proof?.proof === undefined) return BEARER_REFUSALS.dpopWithoutProof;
  if (onlyMarked && !(await deps.tokenMarks.ready()).bears(token)) return BEARER_REFUSALS.unknown;
  const hash = hashSecret(token);
  const record = kind === 'access'
    ? await deps.stores.tokens.findAccessBearer(hash)
    : await deps.stores.personalTokens.findBearer(hash);
  if (!record) return BEARER_REFUSALS.unknown;
  const now: Instant = deps.clock.now();
  const revoked = kind === 'personal' ? BEARER_REFUSALS.revokedPersonal : BEARER_REFUSALS.revoked;
  if (record.user.status !== 'active') {
    // A token in force when its account left `active` is told so (seed section 3 rule 4), once
    // its holder is known (`authenticateBearer`), and one that had ended before is told how (`whyEnded`).
    const why = whyEnded(record.user, record);
    if (why !== 'not_active') return why === 'revoked' ? revoked : BEARER_REFUSALS.expired;
    return { kind, record, accountNotActive: true };
  }
  if (record.revokedAt !== null) return revoked;
  if (hasExpired(record.expiresAt, now)) return BEARER_REFUSALS.expired;
  return { kind, record, accountNotActive: false };
}

/**
 * RFC 9449 7.1: a request that used the DPoP scheme gets its `invalid_token` on the DPoP challenge
 * (those decided offline keep theirs: they stay free of the address's failure count).
 */
function onDpopChallenge(refusal: OAuthError): OAuthError {
  if (refusal.code !== 'invalid_token' || refusedOffline(refusal)) return refusal;
  return invalidToken(refusal.description, 'DPoP');
}

/** RFC 9449 7.1: the proof is valid for this request (with `ath` of this token) and signed by the token's key. */
async function possession(dpop: DpopVerifier, proof: PresentedProof & { proof: string }, token: string, jkt: string, bearer: Bearer): Promise<Bearer | OAuthError> {
  let verified;
  try {
    verified = await dpop.verify(proof, { accessToken: token, jkt });
  } catch (error) {
    if (error instanceof DpopProofError) return resourceDpopError(error);
    if (error instanceof OtherKeyError) return BEARER_REFUSALS.wrongKey;
    throw error;
  }
  return verified.nonce === undefined ? bearer : { ...bearer, dpopNonce: verified.nonce };
}

/**
 * RFC 8707 2 (and RFC 9068 4's rule for audiences): a token issued for a named resource is
 * accepted by that resource alone. `resource` is the identifier of the endpoint asking; `null` for
 * one that is no named resource (UserInfo). A token that named none is accepted by both.
 * `undefined` when the token may be used here, else the 401 to answer (RFC 6750 3.1 `invalid_token`).
 */
export function audienceRefusal(bearer: Pick<Bearer, 'resource' | 'scheme'>, resource: string | null): OAuthError | undefined {
  if (bearer.resource === null || bearer.resource === resource) return undefined;
  return invalidToken(`This access token was issued for ${bearer.resource} alone (the resource parameter, RFC 8707): for this endpoint, get a token whose authorization and token requests name no resource.`, bearer.scheme);
}

/** The 403 `insufficient_scope` refusal when the token lacks `scope` (RFC 6750 3.1); `undefined` when it holds it. */
export function scopeRefusal(bearer: Bearer, scope: Scope | undefined): OAuthError | undefined {
  return scope === undefined || bearer.scopes.includes(scope) ? undefined : insufficientScope(scope, bearer.scheme, bearer.kind);
}

/**
 * What a use of `bearer` writes "last used" on, as `UsageRecorder`'s key: an access token's grant
 * (every token of one grant, each refresh's and each instance of the app's, writes that one row),
 * a personal token itself, negated (a number hashes cheaper than a string key).
 */
function usageKey(bearer: Bearer): number | undefined {
  return bearer.kind === 'personal' ? -bearer.tokenId : bearer.grantId ?? undefined;
}

/**
 * A write of the key's use in flight: its other uses are not `due` (no time is an interval past
 * NaN), so they leave the write to it rather than all write too.
 */
const PENDING = Number.NaN;

/**
 * Remembers when each grant's or personal token's last use was written, so `last used` is written
 * at most once per `intervalMs` for it and the hot path stays a read. One per process, shared by its
 * gates (`Deps.tokenUses`); each instance writes its own, and the store moves the time only
 * forward, so instances writing in any order never set it back.
 */
export class UsageRecorder {
  /**
   * By `usageKey`: when its use was last written, or `PENDING`. In the order written, so the first
   * keys are the ones written longest ago: evicted one by one past `maxEntries`, since clearing
   * them all made every active grant write at once.
   */
  private readonly recorded = new Map<number, Instant>();

  constructor(private readonly intervalMs = LAST_USED_RESOLUTION_MS, private readonly maxEntries = 100_000) {}

  /**
   * Whether a use of `bearer` at `now` is to be written: none was written within `intervalMs`
   * before it, nor is one being written (`lastUseDue`: a clock behind the time written writes none
   * until it is an interval past it, since the store already holds that later time).
   */
  due(bearer: Bearer, now: Instant): boolean {
    const key = usageKey(bearer);
    return key !== undefined && this.dueFor(key, now);
  }

  /**
   * Writes a use of `bearer` at `now`, unless it is not `due`. A write that fails (it throws, for
   * the caller to log) forgets the key, so the next use writes again rather than the use being
   * lost for the interval.
   */
  async record(stores: Stores, bearer: Bearer, now: Instant): Promise<void> {
    const key = usageKey(bearer);
    if (key === undefined || !this.dueFor(key, now)) return;
    this.remember(key, PENDING);
    try {
      if (bearer.kind === 'personal') await stores.personalTokens.touch(bearer.tokenId, now);
      else await stores.grants.touch(key, now);
    } catch (error) {
      this.recorded.delete(key);
      throw error;
    }
    this.remember(key, now);
  }

  private dueFor(key: number, now: Instant): boolean {
    const last = this.recorded.get(key);
    return last === undefined || lastUseDue(last, now, this.intervalMs);
  }

  /** Sets `key` as the newest entry, evicting the oldest one when full. */
  private remember(key: number, value: Instant): void {
    this.recorded.delete(key);
    if (this.recorded.size >= this.maxEntries) this.recorded.delete(this.recorded.keys().next().value!);
    this.recorded.set(key, value);
  }
}
