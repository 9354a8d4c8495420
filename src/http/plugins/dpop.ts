/**
 * The DPoP proof a request carries (RFC 9449 4.1), as the core checks it: the `DPoP` header, the
 * method, and the address the client sent the request to — the public one (BASE_URL), since
 * behind a proxy the Host header names the proxy's upstream. The query is left out: `htu` is
 * compared without it (4.3).
 */
import type { FastifyRequest } from 'fastify';
import type { PresentedProof } from '../../core/oauth/dpop/verifier.js';

export function presentedProof(request: FastifyRequest, baseUrl: string): PresentedProof {
  const header = request.headers.dpop;
  const path = request.url.split('?', 1)[0]!;
  return { proof: typeof header === 'string' ? header : undefined, method: request.method, url: `${baseUrl}${path}` };
}
