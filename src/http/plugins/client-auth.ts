/** Reads client credentials from a token-endpoint request (RFC 6749 2.3.1) for `authenticateClient`. */
import type { FastifyRequest } from 'fastify';
import { type ClientCredentials, parseBasicAuthorization } from '../../core/oauth/client-auth.js';
import { type Params, single } from '../../core/oauth/params.js';
import { clientAddress } from '../client-address.js';
import { fieldRepeats } from '../repeated-fields.js';

/**
 * Whether a browser sent the request: every browser sends `Origin` with a POST (Fetch, "append a
 * request Origin header"; `null` from an opaque origin), and `Sec-Fetch-Site` to secure origins. A
 * native app or a server sends neither unless it chooses to, which a page cannot make it do.
 */
function sentByBrowser(request: FastifyRequest): boolean {
  return request.headers.origin !== undefined || request.headers['sec-fetch-site'] !== undefined;
}

export function clientCredentials(request: FastifyRequest, params: Params): ClientCredentials {
  const header = request.headers.authorization;
  const credentials: ClientCredentials = {
    bodyClientId: single(params, 'client_id'),
    bodySecret: single(params, 'client_secret'),
    askedFrom: clientAddress(request),
    fromBrowser: sentByBrowser(request),
  };
  if (header !== undefined && fieldRepeats(request, 'authorization')) credentials.basic = 'repeated';
  else if (typeof header === 'string' && /^basic\b/i.test(header)) credentials.basic = parseBasicAuthorization(header);
  return credentials;
}
