/** The authorization_code grant (RFC 6749 4.1.3, RFC 7636 4.6, seed sections 3 and 4.2). */
import { hashSecret } from '../credentials.js';
import { OAuthError } from '../errors.js';
import { required, single } from '../params.js';
import { verifyCodeVerifier } from '../pkce.js';
import type { AuthorizationCode, Client, GrantWithUser } from '../ports.js';
import { revokeUserClientGrants } from '../tokens/revocation.js';
import { type IssuedTokens, issueTokens } from '../tokens/issue.js';
import type { Instant } from '../time.js';
import { registerGrantType } from './registry.js';

const CODE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

type Outcome = { kind: 'issued'; tokens: IssuedTokens } | { kind: 'not_consumed' } | { kind: 'refused'; description: string };

/** The grant and user a freshly consumed code gives tokens for, or why it gives none. */
function redeemable(consumed: { code: AuthorizationCode; granted: GrantWithUser | undefined }, client: Client, redirectUri: string, verifier: string | undefined, now: Instant): GrantWithUser | string {
  const { code, granted } = consumed;
  // Seed section 3 rule 1: a code is valid for 5 minutes (the CODE_TTL setting).
  if (code.expiresAt <= now) return 'The code has expired.';
  // RFC 6749 4.1.3: redirect_uri must be identical to the one in the authorization request.
  if (code.redirectUri !== redirectUri) return 'The redirect_uri differs from the authorization request.';
  // RFC 7636 4.6: the verifier must match the challenge; one without the other is refused.
  if (code.codeChallenge !== null && verifier === undefined) return 'The code_verifier is required for this code.';
  if (code.codeChallenge === null && verifier !== undefined) return 'A code_verifier was sent but the authorization request had no code_challenge.';
  if (code.codeChallenge !== null && !verifyCodeVerifier(verifier!, code.codeChallenge)) return 'The code_verifier does not match the code_challenge.';
  if (!granted || granted.grant.revokedAt !== null) return 'The authorization was revoked.';
  if (granted.user.status !== 'active') return 'The account can no longer be used.';
  return granted;
}

registerGrantType('authorization_code', async ({ deps, client, params, keys }) => {
  const code = required(params, 'code');
  const redirectUri = required(params, 'redirect_uri');
  const verifier = single(params, 'code_verifier');
  if (!CODE_SHAPE.test(code)) throw new OAuthError('invalid_grant', 'The code is invalid, expired or already used.');
  const codeHash = hashSecret(code);
  const now = deps.clock.now();
  // The code is consumed (one conditional write, for its own client only) in the same transaction
  // that issues the tokens and signs the id_token; a refused code stays used, because the
  // transaction commits either way, but a failure to issue (a signature included) throws and
  // rolls the consumption back.
  const outcome = await deps.stores.transaction(async (tx): Promise<Outcome> => {
    const consumed = await tx.codes.consume(codeHash, client.clientId, now);
    if (!consumed) return { kind: 'not_consumed' };
    const redeemed = redeemable(consumed, client, redirectUri, verifier, now);
    if (typeof redeemed === 'string') return { kind: 'refused', description: redeemed };
    const { grant, user } = redeemed;
    const { scope, nonce } = consumed.code;
    const tokens = await issueTokens(tx, now, deps.settings, keys, { grant, user, client, accessScope: scope, refreshScope: scope, nonce });
    return { kind: 'issued', tokens };
  });
  if (outcome.kind === 'issued') {
    const { tokens } = outcome;
    deps.metrics.tokensIssued.inc({ kind: 'access' });
    deps.metrics.tokensIssued.inc({ kind: 'refresh' });
    deps.audit.record({ audit: 'token.issued', via: 'oauth', clientId: client.clientId, userId: tokens.user.id, grantId: tokens.grant.id, scope: tokens.scope });
    return tokens;
  }
  if (outcome.kind === 'refused') throw new OAuthError('invalid_grant', outcome.description);
  const known = await deps.stores.codes.find(codeHash);
  // INTERFACE section 3: a code presented by another client is refused and left as it was, so no
  // app can end a user's grant with another app by presenting its code.
  if (known && known.clientId !== client.clientId) throw new OAuthError('invalid_grant', 'The code was issued to another client.');
  // Seed section 3 rule 2: a code presented again (the losers of a race included) ends every
  // grant of that user for that client, the first redemption's tokens with them.
  if (known) {
    const grantsRevoked = await revokeUserClientGrants(deps, known.userId, known.clientId, 'code_reuse');
    deps.audit.record({ audit: 'code.reuse_detected', via: 'oauth', clientId: known.clientId, userId: known.userId, grantsRevoked });
  }
  throw new OAuthError('invalid_grant', 'The code is invalid, expired or already used.');
});
