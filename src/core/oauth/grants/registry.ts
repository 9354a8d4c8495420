/**
 * Grant types live in a map: each file in this folder registers one, so adding a grant type
 * never edits the token endpoint (RFC 6749 4: the grant decides how tokens are obtained).
 */
import type { Log } from '../../log.js';
import type { KeySet } from '../../oidc/key-ring.js';
import type { TokenMarker } from '../../credentials/token-marks.js';
import type { Params } from '../params.js';
import type { Client } from '../ports.js';
import type { OAuthDeps } from '../tokens/context.js';
import type { IssuedTokens } from '../tokens/issue.js';

export interface GrantRequest {
  deps: OAuthDeps;
  /** The client, already authenticated. */
  client: Client;
  /** Every form parameter, each given at most once. */
  params: Params;
  /** The signing keys, read before any transaction: where a grant consumes first, the id_token is signed inside it. */
  keys: KeySet;
  /** Marks the access token as the service's, its key read before any transaction too. */
  marker: TokenMarker;
  /** The thumbprint of the request's verified DPoP proof key (RFC 9449 5); `null` without a proof. */
  dpopJkt: string | null;
  /** The resource the token request named (RFC 8707 2.2); `null` when none. */
  resource: string | null;
  /**
   * The address the request came from (`clientAddress`): an audit line of what the request may
   * have done without being the client (a public client's id is anyone's to send) names it.
   */
  address: string;
  /** The token request's id (`reqId`), which an audit line it causes carries. */
  requestId: string | undefined;
  /** The token request's log: a line written while answering it carries its id (`reqId`). */
  log: Log;
}

export type GrantHandler = (request: GrantRequest) => Promise<IssuedTokens>;

/**
 * The DPoP key the grant a request presents is bound to (RFC 9449 5 and 10), read before the
 * request's proof is claimed, where the handler would refuse a proof of any other key for it in
 * words of its own; `null` otherwise (bound to none, not found, or refused whatever the key). A
 * key never changes once stored, so the handler refuses such a proof for certain, and the token
 * endpoint leaves it unclaimed (`proofOfPossession`).
 */
export type BoundKeyReader = (deps: OAuthDeps, client: Client, params: Params) => Promise<string | null>;

export interface GrantType {
  exchange: GrantHandler;
  boundKey: BoundKeyReader;
}

const grantTypes = new Map<string, GrantType>();

export function registerGrantType(grantType: string, exchange: GrantHandler, boundKey: BoundKeyReader): void {
  if (grantTypes.has(grantType)) throw new Error(`grant type ${grantType} is registered twice`);
  grantTypes.set(grantType, { exchange, boundKey });
}

export function findGrantType(grantType: string): GrantType | undefined {
  return grantTypes.get(grantType);
}
