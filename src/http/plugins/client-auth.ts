/** Reads client credentials from a token-endpoint request (RFC 6749 2.3.1) for `authenticateClient`. */
import type { FastifyRequest } from 'fastify';
import { type ClientCredentials, parseBasicAuthorization } from '../../core/oauth/client-auth.js';
import { type Params, single } from '../../core/oauth/params.js';
import { requester } from '../client-address.js';
import { fieldRepeats } from '../repeated-fields.js';

export function clientCredentials(request: FastifyRequest, params: Params): ClientCredentials {
  const header = request.headers.authorization;
  const credentials: ClientCredentials = {
    bodyClientId: single(params, 'client_id'),
    bodySecret: single(params, 'client_secret'),
    askedBy: requester(request),
  };
  if (header !== undefined && fieldRepeats(request, 'authorization')) credentials.basic = 'repeated';
  else if (typeof header === 'string' && /^basic\b/i.test(header)) credentials.basic = parseBasicAuthorization(header);
  return credentials;
}
