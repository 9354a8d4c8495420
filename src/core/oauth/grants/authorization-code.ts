/** The authorization_code grant (RFC 6749 4.1.3, RFC 7636 4.6, seed sections 3 and 4.2). */
import { whyEnded } from '../../accounts/accounts.js';
import { hashSecret } from '../../credentials/formats.js';
import { ACCOUNT_NOT_ACTIVE, OAuthError } from '../../errors.js';
import { type Params, required, single } from '../params.js';
import { challengeOf } from '../pkce.js';
import type { AuthorizationCode, Client, GrantWithUser, PresentedCode } from '../ports.js';
import { revokeUserClientGrants } from '../tokens/revocation.js';
import { prepareTokens } from '../tokens/issue.js';
import { type Instant, hasExpired } from '../../time.js';
import type { OAuthDeps } from '../tokens/context.js';
import { registerGrantType } from './registry.js';

const CODE_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** One answer for a code that is unknown, used or mistyped: nothing more is revealed. */
const UNKNOWN_CODE = 'The code is invalid, expired or already used: a code works once, for a few minutes; start the authorization again (a code presented twice also ends the tokens it gave).';

/**
 * Why an unused code is not redeemed by this request: what it is bound to differs; `undefined`
 * when the request has it all. The code stays as it was, for the request that has it all.
 */
function mismatch(code: AuthorizationCode, presented: PresentedCode, now: Instant): string | undefined {
  if (code.clientId !== presented.clientId) return 'The code was issued to another client: redeem it with the client_id of the authorization request.';
  // Seed section 3 rule 1: a code is valid for 5 minutes (the CODE_TTL setting).
  if (hasExpired(code.expiresAt, now)) return 'The code has expired: redeem a code as soon as your redirect URI receives it, or start the authorization again.';
  return unboundRequest(code, presented);
}

/**
 * Why this request of the code's own client is not the one the code is bound to (its redirect
 * URI, DPoP key, PKCE verifier); `undefined` when it is. Such a request could not redeem the code,
 * used or not, so it is never counted as the code presented again.
 */
function unboundRequest(code: AuthorizationCode, presented: PresentedCode): string | undefined {
  // RFC 6749 4.1.3: redirect_uri must be identical to the one in the authorization request.
  if (code.redirectUri !== presented.redirectUri) {
    return 'The redirect_uri differs from the one in the authorization request: send exactly the same string (behind a proxy, the public address, not the internal one).';
  }
  // RFC 9449 10: a code whose authorization request named dpop_jkt is redeemed only with that key.
  if (code.dpopJkt !== null && presented.dpopJkt !== code.dpopJkt) {
    return presented.dpopJkt == null
      ? 'The authorization request named a DPoP key (dpop_jkt): send a DPoP proof signed with that key.'
      : 'The DPoP proof is signed with another key than the dpop_jkt of the authorization request: sign it with that key.';
  }
  // RFC 7636 4.6: the verifier must match the challenge; one without the other is refused.
  if (code.codeChallenge !== null && presented.codeChallenge === null) return 'This code was issued for a PKCE code_challenge: send its code_verifier.';
  if (code.codeChallenge === null && presented.codeChallenge !== null) {
    return 'A code_verifier was sent, but the authorization request had no code_challenge: send the code_challenge with the authorization request.';
  }
  if (code.codeChallenge !== presented.codeChallenge) {
    return 'The code_verifier does not match the code_challenge: send the verifier whose S256 hash was the code_challenge of this authorization (RFC 7636 4.6).';
  }
  return undefined;
}

/** Why a freshly consumed code's grant gives no tokens, or `undefined` when it gives them. */
function refusal(granted: GrantWithUser | undefined): string | undefined {
  // Leaving `active` revoked the grant too: a code in force then is told why (`whyEnded`).
  if (granted && granted.user.status !== 'active' && whyEnded(granted.user, { revokedAt: granted.grant.revokedAt, expiresAt: null }) === 'not_active') return ACCOUNT_NOT_ACTIVE;
  if (!granted || granted.grant.revokedAt !== null) return 'The authorization was revoked (withdrawn by the user, or ended by a reused code): start the authorization again.';
  return undefined;
}

/**
 * The key the presented code's authorization request named (`dpop_jkt`, `BoundKeyReader`). A known
 * code's refusal already tells what differs, another client or key included (`mismatch`), so a
 * proof left unclaimed for it tells nothing more.
 */
async function boundKey(deps: OAuthDeps, _client: Client, params: Params): Promise<string | null> {
  const code = single(params, 'code');
  if (code === undefined || !CODE_SHAPE.test(code)) return null;
  return (await deps.stores.codes.find(hashSecret(code)))?.dpopJkt ?? null;
}

registerGrantType('authorization_code', async ({ deps, client, params, keys, marker, dpopJkt, resource, address, requestId, log }) => {
  const code = required(params, 'code', 'the code your redirect URI received');
  const redirectUri = required(params, 'redirect_uri', 'the same redirect_uri as in the authorization request');
  const verifier = single(params, 'code_verifier');
  if (!CODE_SHAPE.test(code)) throw new OAuthError('invalid_grant', UNKNOWN_CODE);
  const codeChallenge = verifier === undefined ? null : challengeOf(verifier);
  // RFC 6749 5.2: error_description holds no double quote or backslash, so the four signs go unquoted.
  if (codeChallenge === undefined) throw new OAuthError('invalid_grant', 'The code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9 and the signs - . _ ~ (RFC 7636 4.1).');
  const presented: PresentedCode = { codeHash: hashSecret(code), clientId: client.clientId, redirectUri, codeChallenge, dpopJkt };
  const now = deps.clock.now();
  // The code is consumed (one conditional write, which matches only the request it is bound to)
  // with the tokens stored, all or nothing; a code whose grant was revoked stays used, but a
  // failure to issue (a signature included) throws and leaves the code unused (`CodeStore.redeem`).
  const redemption = await deps.stores.codes.redeem(presented, now, {
    log,
    refusal,
    issue: async (code, { grant, user }) => {
      if (mismatch(code, presented, now) !== undefined) return undefined;
      const { scope, nonce } = code;
      // RFC 9449 5: with a proof, both tokens are bound to its key.
      const prepared = await prepareTokens(now, deps.settings, { keys, marker }, { grant, user, client, accessScope: scope, refreshScope: scope, nonce, dpopJkt, resource });
      return { access: prepared.access, refresh: prepared.refresh, touchGrant: prepared.touchGrant, answer: prepared.issued };
    },
  });
  if (redemption.kind === 'issued') {
    const tokens = redemption.answer;
    deps.metrics.tokensIssued.inc({ kind: 'access' });
    deps.metrics.tokensIssued.inc({ kind: 'refresh' });
    deps.audit.record({ audit: 'token.issued', via: 'oauth', clientId: client.clientId, userId: tokens.user.id, grantId: tokens.grant.id, scope: tokens.scope }, requestId);
    return tokens;
  }
  if (redemption.kind === 'refused') throw new OAuthError('invalid_grant', redemption.reason);
  const known = await deps.stores.codes.find(presented.codeHash);
  // Seed section 3 rule 2: a code presented again (the losers of a race included) ends every
  // grant of that user for that client, the first redemption's tokens with them. Only by the
  // request it is bound to: one with another verifier, redirect URI or DPoP key could not have
  // redeemed it, and counting it let whoever merely saw a used code (or lost a race to the app
  // with a wrong guess) end the user's grants.
  if (known && known.usedAt !== null && known.clientId === client.clientId && unboundRequest(known, presented) === undefined) {
    const grantsRevoked = await revokeUserClientGrants(deps, known.userId, known.clientId, 'code_reuse');
    deps.audit.record({ audit: 'code.reuse_detected', via: 'oauth', clientId: known.clientId, userId: known.userId, grantsRevoked, address }, requestId);
    throw new OAuthError('invalid_grant', UNKNOWN_CODE);
  }
  // INTERFACE section 3: a request that does not match the code (another client, a wrong
  // verifier…) is refused and leaves the code as it was, so whoever merely saw a code cannot burn
  // it or end the user's grant with it. Used or not, it is told what differs, in the same words:
  // answering a used code as unknown told whoever held only the code that the app had redeemed it
  // (attack83).
  // A used one tells the operator its code was seen by someone who could not redeem it, and from
  // where: a public client's id, `presentedBy`, is anyone's to send (attack84).
  if (known?.usedAt != null) {
    deps.audit.record({ audit: 'code.used_presented_unbound', via: 'oauth', clientId: known.clientId, userId: known.userId, presentedBy: client.clientId, address }, requestId);
  }
  if (known) throw new OAuthError('invalid_grant', mismatch(known, presented, now) ?? UNKNOWN_CODE);
  throw new OAuthError('invalid_grant', UNKNOWN_CODE);
}, boundKey);
