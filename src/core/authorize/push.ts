/**
 * The pushed authorization request endpoint (RFC 9126 2): the client authenticates as at the
 * token endpoint, the request passes the authorization endpoint's own checks, and is stored for
 * 60 seconds under a `request_uri` that works once, for that client only.
 */
import { type ClientCredentials, authenticateClient } from '../client-auth.js';
import { OAuthError } from '../errors.js';
import type { Params } from '../params.js';
import type { OAuthDeps } from '../tokens/context.js';
import { checkPushedRequest } from './flow.js';
import { PUSHED_REQUEST_LIFETIME_SECONDS, newRequestUri } from './pushed.js';
import { PUSHED_MARKER, requestFields } from './request.js';

/** RFC 9126 2.2: the answer, sent with status 201. */
export interface PushedRequestAnswer {
  request_uri: string;
  expires_in: number;
}

export async function pushAuthorizationRequest(deps: OAuthDeps, params: Params, credentials: ClientCredentials): Promise<PushedRequestAnswer> {
  // RFC 9126 2.1: client authentication as at the token endpoint; a public client sends client_id.
  const client = await authenticateClient(deps.stores, credentials);
  // RFC 9126 2.1: a request_uri cannot be pushed.
  if ((params.get('request_uri') ?? []).some((v) => v !== '')) {
    throw new OAuthError('invalid_request', 'The request_uri parameter cannot be pushed: push the authorization request\'s parameters themselves (RFC 9126 2.1).');
  }
  // The client_id may come from HTTP Basic alone; the stored request names it, and nothing else
  // than the request's own parameters is kept (no secret, no marker).
  const request = new Map(params);
  request.set('client_id', [client.clientId]);
  request.delete(PUSHED_MARKER);
  // RFC 9126 2.1: the same checks as the authorization endpoint, answered as JSON (2.3).
  await checkPushedRequest(deps, request);
  const now = deps.clock.now();
  const { requestUri, requestHash } = newRequestUri();
  await deps.stores.pushedRequests.insert({
    requestHash,
    clientId: client.clientId,
    parameters: requestFields(request),
    createdAt: now,
    expiresAt: now + PUSHED_REQUEST_LIFETIME_SECONDS * 1000,
  });
  return { request_uri: requestUri, expires_in: PUSHED_REQUEST_LIFETIME_SECONDS };
}
