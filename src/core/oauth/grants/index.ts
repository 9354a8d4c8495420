/** The token endpoint's rules (RFC 6749 3.2 and 5): parameters, client authentication, the grant. */
import { type ClientCredentials, authenticateClient } from '../client-auth.js';
import { DpopProofError } from '../dpop/proof.js';
import { OtherKeyError, type PresentedProof } from '../dpop/verifier.js';
import { OAuthError } from '../../errors.js';
import { type Params, repeatedNames, repeatedParameter, single } from '../params.js';
import { requestedResource } from '../../api/resource.js';
import type { Log } from '../../log.js';
import type { OAuthDeps } from '../tokens/context.js';
import type { IssuedTokens } from '../tokens/issue.js';
import { findGrantType } from './registry.js';
import './authorization-code.js';
import './refresh-token.js';

export { registerGrantType } from './registry.js';

/** The token endpoint's answer to a refused proof (RFC 9449 5.1 and 8): 400, with a nonce for `use_dpop_nonce`. */
export function tokenEndpointDpopError(error: DpopProofError): OAuthError {
  return new OAuthError(error.code, error.description, error.nonce === undefined ? {} : { headers: { 'dpop-nonce': error.nonce } });
}

/**
 * What a request's DPoP proof proves (RFC 9449 5 and 10.1): `jkt`, the thumbprint of its key,
 * verified; `null` without a proof (the tokens are then Bearer tokens, seed 2.1). `nonce`: a newer
 * one for the answer's `DPoP-Nonce`. `otherKey`: the proof is of another key than `boundTo`, and
 * was checked but not claimed, as a resource does (`OtherKeyError`).
 */
export interface Possession { jkt: string | null; nonce?: string; otherKey?: true }

/**
 * The request's proof, verified. `boundTo`: the key the request's code, refresh token or
 * `dpop_jkt` is bound to, when it is (`null` otherwise). The token and PAR endpoints both use it,
 * and answer a refused proof the same way.
 */
export async function proofOfPossession(deps: OAuthDeps, presented: PresentedProof | undefined, boundTo: string | null): Promise<Possession> {
  if (presented?.proof === undefined) return { jkt: null };
  try {
    const verified = await deps.dpop.verify({ ...presented, proof: presented.proof }, boundTo === null ? undefined : { jkt: boundTo });
    return { jkt: verified.jkt, ...(verified.nonce === undefined ? {} : { nonce: verified.nonce }) };
  } catch (error) {
    if (error instanceof OtherKeyError) return { jkt: error.jkt, otherKey: true };
    throw error instanceof DpopProofError ? tokenEndpointDpopError(error) : error;
  }
}

/** What the token endpoint answers with: the tokens, and a newer DPoP nonce to send along (RFC 9449 8.2). */
export type Exchanged = IssuedTokens & { dpopNonce?: string };

/**
 * Exchanges a grant for tokens; throws an `OAuthError` of seed table 7.1 (or RFC 9449 5.1's
 * `invalid_dpop_proof` and `use_dpop_nonce`) otherwise. The proof is verified after the client is
 * authenticated and before the grant is touched, so a bad proof never burns a code. `log`: the
 * request's, where what the grant logs goes with the request's id.
 */
export async function exchangeGrant(deps: OAuthDeps, params: Params, credentials: ClientCredentials, log: Log, dpop?: PresentedProof): Promise<Exchanged> {
  // RFC 6749 3.2: request parameters MUST NOT be included more than once (RFC 8707 2: but `resource` may).
  const repeated = repeatedNames(params).filter((name) => name !== 'resource');
  if (repeated.length > 0) throw repeatedParameter(repeated[0]!);
  const grantType = single(params, 'grant_type');
  if (grantType === undefined) throw new OAuthError('invalid_request', 'The grant_type parameter is required: authorization_code or refresh_token.');
  const type = findGrantType(grantType);
  if (!type) {
    throw new OAuthError('unsupported_grant_type', 'Only grant_type=authorization_code and grant_type=refresh_token are supported (no client_credentials, password or device code).');
  }
  const client = await authenticateClient(deps, credentials, deps.clock.now());
  // RFC 8707 2.2: a token request may name the resource; the only one is the resource API. The
  // access token it yields is then for that resource alone (`prepareTokens`).
  const resource = requestedResource(params, deps.settings.baseUrl);
  // A proof of another key than the grant's is left unclaimed, and the grant refuses it for its key
  // with its own words: a key is never changed once stored (`BoundKeyReader`), so it cannot give
  // tokens to such a proof. The key is read only for a request with a proof.
  const boundTo = dpop?.proof === undefined ? null : await type.boundKey(deps, client, params);
  const possession = await proofOfPossession(deps, dpop, boundTo);
  // The signing keys and the tokens' mark are read before the grant's transaction (from memory,
  // or from the database once in a while): the tokens are made inside it, where a read on another
  // connection could wait behind the transaction itself (SQLite has one connection).
  const keys = await deps.keys.keySet();
  const marker = await deps.tokenMarks.ready();
  const issued = await type.exchange({ deps, client, params, keys, marker, dpopJkt: possession.jkt, resource, address: credentials.askedBy.address, requestId: credentials.askedBy.requestId, log });
  if (issued.idToken !== undefined) deps.metrics.tokensIssued.inc({ kind: 'id_token' });
  return possession.nonce === undefined ? issued : { ...issued, dpopNonce: possession.nonce };
}
