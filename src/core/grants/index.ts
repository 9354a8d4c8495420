/** The token endpoint's rules (RFC 6749 3.2 and 5): parameters, client authentication, the grant. */
import { type ClientCredentials, authenticateClient } from '../client-auth.js';
import { OAuthError } from '../errors.js';
import { type Params, repeatedNames, repeatedParameter, single } from '../params.js';
import { requestedResource } from '../resource.js';
import type { OAuthDeps } from '../tokens/context.js';
import type { IssuedTokens } from '../tokens/issue.js';
import { findGrantHandler } from './registry.js';
import './authorization-code.js';
import './refresh-token.js';

export { registerGrantType } from './registry.js';

/** Exchanges a grant for tokens; throws an `OAuthError` of seed table 7.1 otherwise. */
export async function exchangeGrant(deps: OAuthDeps, params: Params, credentials: ClientCredentials): Promise<IssuedTokens> {
  // RFC 6749 3.2: request parameters MUST NOT be included more than once (RFC 8707 2: but `resource` may).
  const repeated = repeatedNames(params).filter((name) => name !== 'resource');
  if (repeated.length > 0) throw repeatedParameter(repeated[0]!);
  const grantType = single(params, 'grant_type');
  if (grantType === undefined) throw new OAuthError('invalid_request', 'The grant_type parameter is required: authorization_code or refresh_token.');
  const handler = findGrantHandler(grantType);
  if (!handler) {
    throw new OAuthError('unsupported_grant_type', 'Only grant_type=authorization_code and grant_type=refresh_token are supported (no client_credentials, password or device code).');
  }
  const client = await authenticateClient(deps.stores, credentials);
  // RFC 8707 2.2: a token request may name the resource; the only one is the resource API, which
  // every access token is for (its `aud`), whatever the authorization asked.
  requestedResource(params, deps.settings.baseUrl);
  // The keys are read before the grant's transaction (from memory, or from the database once in a
  // while): the id_token is signed inside it, where a read on another connection could wait
  // behind the transaction itself (SQLite has one connection).
  const keys = await deps.keys.keySet();
  const issued = await handler({ deps, client, params, keys });
  if (issued.idToken !== undefined) deps.metrics.tokensIssued.inc({ kind: 'id_token' });
  return issued;
}
