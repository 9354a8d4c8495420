/**
 * Client authentication at the token, revoke and introspect endpoints, in one place
 * (RFC 6749 2.3.1: `client_secret_basic` and `client_secret_post`; public clients send only
 * `client_id`, INTERFACE section 3).
 */
import { findClient } from './clients.js';
import { constantTimeEqual, hashSecret } from './credentials.js';
import { OAuthError } from './errors.js';
import type { Client, Stores } from './ports.js';

export const CLIENT_REALM = 'svc';

/** What the request carried, as the HTTP layer found it. */
export interface ClientCredentials {
  /** From `Authorization: Basic`, already form-urlencoding-decoded; `malformed` when unreadable. */
  basic?: { clientId: string; secret: string } | 'malformed';
  /** `client_id` and `client_secret` from the form body. */
  bodyClientId?: string | undefined;
  bodySecret?: string | undefined;
}

/**
 * Decodes an `Authorization: Basic` value. RFC 6749 2.3.1: id and secret are
 * application/x-www-form-urlencoded before they are joined with ':' and base64-encoded.
 */
export function parseBasicAuthorization(header: string): ClientCredentials['basic'] {
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (!match) return 'malformed';
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const form = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: form(decoded.slice(0, colon)), secret: form(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

/**
 * The authenticated client, or an `OAuthError`: `invalid_request` for a missing client_id or two
 * methods at once (RFC 6749 2.3: one method per request), 401 `invalid_client` for an unknown or
 * deactivated client or a missing or wrong secret (with `WWW-Authenticate` when Basic was used).
 */
export async function authenticateClient(stores: Stores, credentials: ClientCredentials): Promise<Client> {
  const usedBasic = credentials.basic !== undefined;
  const fail = (description: string) => new OAuthError('invalid_client', description, {
    headers: usedBasic ? { 'www-authenticate': `Basic realm="${CLIENT_REALM}"` } : {},
  });
  let clientId: string | undefined;
  let secret: string | undefined;
  if (credentials.basic !== undefined) {
    if (credentials.basic === 'malformed') throw fail('The Authorization header could not be read.');
    if (credentials.bodySecret !== undefined) {
      throw new OAuthError('invalid_request', 'Use one client authentication method, not both.');
    }
    if (credentials.bodyClientId !== undefined && credentials.bodyClientId !== credentials.basic.clientId) {
      throw new OAuthError('invalid_request', 'The client_id differs from the authenticated client.');
    }
    clientId = credentials.basic.clientId;
    secret = credentials.basic.secret === '' ? undefined : credentials.basic.secret;
  } else {
    clientId = credentials.bodyClientId;
    secret = credentials.bodySecret;
  }
  if (clientId === undefined || clientId === '') throw new OAuthError('invalid_request', 'The client_id parameter is required.');
  const client = await findClient(stores, clientId);
  if (!client || client.status !== 'active') throw fail('Client authentication failed.');
  if (client.type === 'public') {
    if (secret !== undefined) throw fail('Client authentication failed.');
    return client;
  }
  // A confidential client must prove its secret; a rotated one fails at once (INTERFACE section 2).
  if (secret === undefined || client.secretHash === null || !constantTimeEqual(hashSecret(secret), client.secretHash)) {
    throw fail('Client authentication failed.');
  }
  return client;
}
