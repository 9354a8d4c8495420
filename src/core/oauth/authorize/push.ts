/**
 * The pushed authorization request endpoint (RFC 9126 2): the client authenticates as at the
 * token endpoint, the request passes the authorization endpoint's own checks, and is stored for
 * 60 seconds under a `request_uri` that works once, for that client only.
 */
import { type ClientCredentials, authenticateClient } from '../client-auth.js';
import type { PresentedProof } from '../dpop/verifier.js';
import { OAuthError } from '../../errors.js';
import { proofOfPossession } from '../grants/index.js';
import type { Params } from '../params.js';
import type { Client } from '../ports.js';
import type { OAuthDeps } from '../tokens/context.js';
import { checkPushedRequest } from './flow.js';
import { storeDocumentClient } from '../client-metadata.js';
import { PUSHED_REQUEST_LIFETIME_SECONDS, newRequestUri } from './pushed.js';
import { PUSHED_MARKER, requestFields } from './request.js';

/** RFC 9126 2.2: the answer, sent with status 201. */
export interface PushedRequestAnswer {
  request_uri: string;
  expires_in: number;
}

/** The answer, and a newer DPoP nonce to send along when the request's proof had an older one (RFC 9449 8.2). */
export interface Pushed {
  answer: PushedRequestAnswer;
  dpopNonce?: string;
}

/**
 * Stores a pushed request and answers its `request_uri`. `admit` counts the push of the
 * authenticated client against the limits (`OAuthEndpointLimits.admitPush`), and throws to refuse it.
 */
export async function pushAuthorizationRequest(
  deps: OAuthDeps, params: Params, credentials: ClientCredentials, dpop: PresentedProof | undefined, admit: (client: Client) => Promise<void>,
): Promise<Pushed> {
  // RFC 9126 2.1: client authentication as at the token endpoint; a public client sends client_id.
  const client = await authenticateClient(deps, credentials, deps.clock.now());
  await admit(client);
  // RFC 9126 2.1: a request_uri cannot be pushed.
  if ((params.get('request_uri') ?? []).some((v) => v !== '')) {
    throw new OAuthError('invalid_request', 'The request_uri parameter cannot be pushed: push the authorization request\'s parameters themselves (RFC 9126 2.1).');
  }
  // The client_id may come from HTTP Basic alone; the stored request names it, and nothing else
  // than the request's own parameters is kept (no secret, no marker).
  const request = new Map(params);
  request.set('client_id', [client.clientId]);
  request.delete(PUSHED_MARKER);
  // RFC 9449 10.1: a DPoP proof at the PAR endpoint binds the code to its key as dpop_jkt does
  // (an authorization server MUST support both); with both, they must name the same key.
  const named = request.get('dpop_jkt')?.find((v) => v !== '');
  const possession = await proofOfPossession(deps, dpop, named ?? null);
  if (possession.jkt !== null) {
    if (possession.otherKey) {
      throw new OAuthError('invalid_dpop_proof', 'The DPoP proof is signed with another key than the one dpop_jkt names: send the thumbprint of the proof\'s key, or leave dpop_jkt out (RFC 9449 10.1).');
    }
    // With a dpop_jkt of the proof's key, the request's own values stay, so the authorization
    // endpoint's checks still refuse one repeated (RFC 6749 3.1): overwritten, [jkt, other] passed.
    if (named === undefined) request.set('dpop_jkt', [possession.jkt]);
  }
  // RFC 9126 2.1: the same checks as the authorization endpoint, answered as JSON (2.3).
  await checkPushedRequest(deps, request, credentials.askedBy);
  // The stored request refers to its client's row: a document's app gets it now (client-metadata.ts).
  await storeDocumentClient(deps.stores, deps.clock, client);
  const now = deps.clock.now();
  const { requestUri, requestHash } = newRequestUri();
  await deps.stores.pushedRequests.insert({
    requestHash,
    clientId: client.clientId,
    parameters: requestFields(request),
    createdAt: now,
    expiresAt: now + PUSHED_REQUEST_LIFETIME_SECONDS * 1000,
  });
  const answer = { request_uri: requestUri, expires_in: PUSHED_REQUEST_LIFETIME_SECONDS };
  return possession.nonce === undefined ? { answer } : { answer, dpopNonce: possession.nonce };
}
