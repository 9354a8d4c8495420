/** The refresh_token grant with rotation, the replay window and reuse detection (RFC 6749 6, RFC 9700 4.14.2). */
import { whyEnded } from '../../accounts/accounts.js';
import { hashSecret, tokenKind } from '../../credentials/formats.js';
import { ACCOUNT_NOT_ACTIVE, OAuthError } from '../../errors.js';
import { type Params, required, single } from '../params.js';
import { type Scope, formatScope, parseScope, scopeList } from '../scopes.js';
import type { Client, Grant, GrantWithUser, RefreshToken } from '../ports.js';
import { type Instant, hasExpired } from '../../time.js';
import type { OAuthDeps } from '../tokens/context.js';
import { type IssuedTokens, prepareTokens } from '../tokens/issue.js';
import { type ReplayAnswer, isReplay, openReplay, replayWindowApplies, sealReplay } from '../tokens/replay.js';
import { revokeGrantCounted } from '../tokens/revocation.js';
import { registerGrantType } from './registry.js';

/** One answer for every refused refresh token: nothing more is revealed. */
const INVALID = 'The refresh token is invalid, expired or revoked: send the refresh token of the latest token response (each refresh replaces it), or start the authorization again.';

/**
 * RFC 6749 6: an optional `scope` may only narrow what the refresh token carries. OpenID's
 * `email`, `address` and `phone` are dropped here as at the authorization endpoint, so they are
 * never granted by asking again (INTERFACE section 3).
 */
function requestedScope(value: string | undefined): Scope[] | undefined {
  if (value === undefined) return undefined;
  const parsed = parseScope(value);
  if (!parsed || 'unknown' in parsed) {
    throw new OAuthError('invalid_scope', 'The scope is malformed or unknown: leave scope out to keep what was granted, or name some of the granted scopes, separated by spaces.');
  }
  if (parsed.scopes.length === 0) {
    throw new OAuthError('invalid_scope', 'The scope names nothing this service grants: leave scope out to keep what was granted.');
  }
  return parsed.scopes;
}

/**
 * RFC 9449 5: a refresh token bound to a DPoP key is refreshed only with a proof of that key. The
 * refusal rolls the rotation back, so the token stays as it was for its rightful holder.
 */
function checkBinding(bound: string | null, presented: string | null): void {
  if (bound === null || bound === presented) return;
  throw new OAuthError('invalid_grant', presented === null
    ? 'This refresh token is bound to a DPoP key: send a DPoP proof signed with that key.'
    : 'The DPoP proof is signed with another key than the one this refresh token is bound to: sign it with that key.');
}

/**
 * RFC 6749 10.4 and 6: whether this client may refresh this token now, its key aside. Any other
 * token is refused in one set of words (`INVALID`).
 */
function refreshableBy<G extends { grant: Grant }>(token: RefreshToken, granted: G | undefined, client: Client, now: Instant): granted is G {
  return token.clientId === client.clientId && !hasExpired(token.expiresAt, now) && granted !== undefined && granted.grant.revokedAt === null;
}

/**
 * Whether this client's token was in force when its account left `active`, which ended it
 * (`whyEnded`): its holder is told the account is not active, the holder of a bound token only
 * with a proof of its key (RFC 9449 5), so a token stolen without its key watches no status.
 */
function endedWithAccount(token: RefreshToken, granted: GrantWithUser | undefined, client: Client): granted is GrantWithUser {
  return token.clientId === client.clientId && granted !== undefined && granted.user.status !== 'active'
    && whyEnded(granted.user, { revokedAt: granted.grant.revokedAt, expiresAt: token.expiresAt }) === 'not_active';
}

/**
 * The key of a refresh token this client may refresh now, or whose account ended it
 * (`BoundKeyReader`): only there does the grant refuse a proof for its key, in words of its own.
 * Every other token's proof is claimed as an unknown token's is, so sending one proof twice tells
 * nothing the words do not (attack99).
 */
async function boundKey(deps: OAuthDeps, client: Client, params: Params): Promise<string | null> {
  const token = single(params, 'refresh_token');
  if (token === undefined || tokenKind(token) !== 'refresh') return null;
  const stored = await deps.stores.tokens.findRefresh(hashSecret(token));
  if (stored?.dpopJkt == null || stored.usedAt !== null || stored.revokedAt !== null) return null;
  const granted = await deps.stores.grants.findWithUser(stored.grantId);
  return refreshableBy(stored, granted, client, deps.clock.now()) || endedWithAccount(stored, granted, client) ? stored.dpopJkt : null;
}

registerGrantType('refresh_token', async ({ deps, client, params, keys, marker, dpopJkt, resource, address, requestId }) => {
  const token = required(params, 'refresh_token', 'the refresh token of the latest token response');
  const narrowed = requestedScope(single(params, 'scope'));
  if (tokenKind(token) !== 'refresh') throw new OAuthError('invalid_grant', INVALID);
  const tokenHash = hashSecret(token);
  const requested = narrowed ? formatScope(narrowed) : null;
  const now = deps.clock.now();
  // Rotation is one conditional write, stored with the new pair (with a replay window, as the old
  // token's successor with its sealed answer) all or nothing, so no instance ever sees the token
  // used without the answer a replay needs. A refusal or a failure, the id_token's signature
  // included, throws, and nothing of the rotation stays: the token is left as it was (`TokenStore.rotate`).
  const issued = await deps.stores.tokens.rotate(tokenHash, now, {
    recordsSuccessor: deps.settings.refreshReplaySeconds > 0,
    check: (old, granted) => {
      // Leaving `active` revoked the grant too: a token of this client's in force then is told why,
      // a bound one only with its key (without it, what an active account's token is told).
      if (endedWithAccount(old, granted, client)) {
        checkBinding(old.dpopJkt, dpopJkt);
        throw new OAuthError('invalid_grant', ACCOUNT_NOT_ACTIVE);
      }
      if (!refreshableBy(old, granted, client, now)) throw new OAuthError('invalid_grant', INVALID);
      checkBinding(old.dpopJkt, dpopJkt);
    },
    issue: async (old, { grant, user }) => {
      const held = scopeList(old.scope);
      if (narrowed && !narrowed.every((s) => held.includes(s))) {
        throw new OAuthError('invalid_scope', `The scope may only narrow what was granted (${old.scope}): leave scope out, or ask the user to authorize the wider scope.`);
      }
      const accessScope = narrowed ? formatScope(narrowed) : old.scope;
      // The successors are bound to the proof's key: the same key for a bound token; a bearer refresh
      // token refreshed with a proof is bound from now on (docs/oauth.md, "DPoP"). Rotation applies
      // to bound tokens as to any (seed section 3 rule 3).
      const prepared = await prepareTokens(now, deps.settings, { keys, marker }, { grant, user, client, accessScope, refreshScope: old.scope, nonce: null, dpopJkt, resource });
      // The successor is recorded only for a replay to find (INTERFACE section 11). Without a window
      // (the default) or for a client that gets none, nothing ever reads it: recording it cost a
      // statement and an index entry per rotation.
      const windowed = deps.settings.refreshReplaySeconds > 0 && replayWindowApplies(client, old.dpopJkt);
      return {
        access: prepared.access,
        refresh: prepared.refresh,
        touchGrant: prepared.touchGrant,
        answer: prepared.issued,
        ...(windowed ? { succeeds: { tokenId: old.id, tokenHash, sealed: sealReplay(token, tokenHash, replayAnswer(prepared.issued, requested, resource)) } } : {}),
      };
    },
  });
  if (issued) {
    deps.metrics.tokensIssued.inc({ kind: 'access' });
    deps.metrics.tokensIssued.inc({ kind: 'refresh' });
    deps.audit.record({ audit: 'token.refreshed', via: 'oauth', clientId: client.clientId, userId: issued.user.id, grantId: issued.grant.id, scope: issued.scope }, requestId);
    return issued;
  }
  // Not rotated here. The conditional write above returns nothing only once a rotation that took
  // the row has committed or rolled back (PostgreSQL makes a racing UPDATE wait on the row's lock;
  // SQLite runs one transaction at a time), so what is read below is the winner's committed work.
  const replayed = await replay(deps, client, token, tokenHash, { scope: requested, resource }, dpopJkt, { address, requestId });
  if (replayed) return replayed;
  // Seed section 3 rule 3 and RFC 9700 4.14.2: a rotated or revoked refresh token presented
  // again, and not a replay, ends its whole family.
  const known = await deps.stores.tokens.findRefresh(tokenHash);
  if (known && (known.usedAt !== null || known.revokedAt !== null)) {
    await revokeGrantCounted(deps, known.grantId, 'refresh_reuse', deps.clock.now());
    deps.audit.record({ audit: 'refresh_token.reuse_detected', via: 'oauth', clientId: known.clientId, userId: known.userId, grantId: known.grantId, address }, requestId);
  }
  throw new OAuthError('invalid_grant', INVALID);
}, boundKey);

/** What a replay must give again: the strings of the answer, and the scope and resource the rotation asked for. */
function replayAnswer(issued: IssuedTokens, requested: string | null, resource: string | null): ReplayAnswer {
  return {
    accessToken: issued.accessToken,
    refreshToken: issued.refreshToken,
    ...(issued.idToken === undefined ? {} : { idToken: issued.idToken }),
    scope: issued.scope,
    expiresIn: issued.expiresIn,
    issuedAt: issued.issuedAt,
    requestedScope: requested,
    requestedResource: resource,
    dpopJkt: issued.dpopJkt,
  };
}

/**
 * The replay window (INTERFACE section 11, `src/core/oauth/tokens/replay.ts`): the same successor answer
 * again, or `undefined` when this is not a replay and so reuse. `expires_in` counts from the first
 * answer, so a replay never extends the access token's life.
 */
async function replay(
  deps: OAuthDeps, client: Client, token: string, tokenHash: string, requested: { scope: string | null; resource: string | null }, dpopJkt: string | null,
  askedBy: { address: string; requestId: string | undefined },
): Promise<IssuedTokens | undefined> {
  const window = deps.settings.refreshReplaySeconds;
  if (window <= 0) return undefined;
  const now = deps.clock.now();
  const candidate = await deps.stores.tokens.findReplay(tokenHash);
  if (!candidate || !isReplay(candidate, client, now, window)) return undefined;
  const answer = openReplay(token, tokenHash, candidate.sealed);
  if (!answer || answer.requestedScope !== requested.scope || (answer.requestedResource ?? null) !== requested.resource || answer.dpopJkt !== dpopJkt) return undefined;
  const granted = await deps.stores.grants.findWithUser(candidate.token.grantId);
  if (!granted || granted.grant.revokedAt !== null || granted.user.status !== 'active') return undefined;
  deps.audit.record({ audit: 'refresh_token.replayed', via: 'oauth', clientId: client.clientId, userId: granted.user.id, grantId: granted.grant.id, address: askedBy.address }, askedBy.requestId);
  return {
    accessToken: answer.accessToken,
    refreshToken: answer.refreshToken,
    ...(answer.idToken === undefined ? {} : { idToken: answer.idToken }),
    expiresIn: Math.max(0, answer.expiresIn - Math.floor(Math.max(0, now - answer.issuedAt) / 1000)),
    scope: answer.scope,
    grant: granted.grant,
    user: granted.user,
    client,
    issuedAt: answer.issuedAt,
    nonce: null,
    dpopJkt: answer.dpopJkt,
  };
}
