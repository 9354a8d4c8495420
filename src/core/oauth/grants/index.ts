/** The token endpoint's rules (RFC 6749 3.2 and 5): parameters, client authentication, the grant. */
import { type ClientCredentials, authenticateClient } from '../client-auth.js';
import { DpopProofError } from '../dpop/proof.js';
import type { PresentedProof } from '../dpop/verifier.js';
import { OAuthError } from '../../errors.js';
import { type Params, repeatedNames, repeatedParameter, single } from '../params.js';
import { requestedResource } from '../../api/resource.js';
import type { OAuthDeps } from '../tokens/context.js';
import type { IssuedTokens } from '../tokens/issue.js';
import { findGrantHandler } from './registry.js';
import './authorization-code.js';
import './refresh-token.js';

export { registerGrantType } from './registry.js';

/** The token endpoint's answer to a refused proof (RFC 9449 5.1 and 8): 400, with a nonce for `use_dpop_nonce`. */
export function tokenEndpointDpopError(error: DpopProofError): OAuthError {
  return new OAuthError(error.code, error.description, error.nonce === undefined ? {} : { headers: { 'dpop-nonce': error.nonce } });
}

/**
 * RFC 9449 5 and 10.1: the thumbprint of the request's DPoP proof, verified; `null` without one
 * (the tokens are then Bearer tokens, seed 2.1). `nonce`: a newer one for the answer's `DPoP-Nonce`.
 * The token and PAR endpoints both use it, and answer a refused proof the same way.
 */
export async function proofOfPossession(deps: OAuthDeps, presented: PresentedProof | undefined): Promise<{ jkt: string | null; nonce?: string }> {
  if (presented?.proof === undefined) return { jkt: null };
  try {
    const verified = await deps.dpop.verify({ ...presented, proof: presented.proof });
    return { jkt: verified.jkt, ...(verified.nonce === undefined ? {} : { nonce: verified.nonce }) };
  } catch (error) {
    throw error instanceof DpopProofError ? tokenEndpointDpopError(error) : error;
  }
}

/** What the token endpoint answers with: the tokens, and a newer DPoP nonce to send along (RFC 9449 8.2). */
export type Exchanged = IssuedTokens & { dpopNonce?: string };

/**
 * Exchanges a grant for tokens; throws an `OAuthError` of seed table 7.1 (or RFC 9449 5.1's
 * `invalid_dpop_proof` and `use_dpop_nonce`) otherwise. The proof is verified after the client is
 * authenticated and before the grant is touched, so a bad proof never burns a code.
 */
export async function exchangeGrant(deps: OAuthDeps, params: Params, credentials: ClientCredentials, dpop?: PresentedProof): Promise<Exchanged> {
  // RFC 6749 3.2: request parameters MUST NOT be included more than once (RFC 8707 2: but `resource` may).
  const repeated = repeatedNames(params).filter((name) => name !== 'resource');
  if (repeated.length > 0) throw repeatedParameter(repeated[0]!);
  const grantType = single(params, 'grant_type');
  if (grantType === undefined) throw new OAuthError('invalid_request', 'The grant_type parameter is required: authorization_code or refresh_token.');
  const handler = findGrantHandler(grantType);
  if (!handler) {
    throw new OAuthError('unsupported_grant_type', 'Only grant_type=authorization_code and grant_type=refresh_token are supported (no client_credentials, password or device code).');
  }
  const client = await authenticateClient(deps, credentials, deps.clock.now());
  // RFC 8707 2.2: a token request may name the resource; the only one is the resource API. The
  // access token it yields is then for that resource alone (`issueTokens`).
  const resource = requestedResource(params, deps.settings.baseUrl);
  const possession = await proofOfPossession(deps, dpop);
  // The signing keys and the tokens' mark are read before the grant's transaction (from memory,
  // or from the database once in a while): the tokens are made inside it, where a read on another
  // connection could wait behind the transaction itself (SQLite has one connection).
  const keys = await deps.keys.keySet();
  const marker = await deps.tokenMarks.ready();
  const issued = await handler({ deps, client, params, keys, marker, dpopJkt: possession.jkt, resource, address: credentials.askedBy.address });
  if (issued.idToken !== undefined) deps.metrics.tokensIssued.inc({ kind: 'id_token' });
  return possession.nonce === undefined ? issued : { ...issued, dpopNonce: possession.nonce };
}
