/**
 * Client authentication at the token, revoke and introspect endpoints, in one place
 * (RFC 6749 2.3.1: `client_secret_basic` and `client_secret_post`; public clients send only
 * `client_id`, INTERFACE section 3).
 */
import { livePreviousSecret } from './clients.js';
import { ClientDocumentError, type ClientSources, resolveClient } from './client-metadata.js';
import { digestsEqual, hashSecret } from '../credentials/formats.js';
import { OAuthError } from '../errors.js';
import { wellFormed } from './params.js';
import type { Requester } from '../addresses.js';
import type { Instant } from '../time.js';
import type { Client } from './ports.js';

export const CLIENT_REALM = 'svc';

/** What the request carried, as the HTTP layer found it. */
export interface ClientCredentials {
  /**
   * From `Authorization: Basic`, already form-urlencoding-decoded, `secret` absent when the
   * password is empty; `malformed` when unreadable, `repeated` when the request carried more than
   * one Authorization header.
   */
  basic?: { clientId: string; secret: string | undefined } | 'malformed' | 'repeated';
  /**
   * `client_id` and `client_secret` from the form body, each absent when empty (`single`): an
   * empty secret is no secret, in the body as in Basic (RFC 6749 2.3.1: a client whose secret is
   * the empty string may omit it).
   */
  bodyClientId?: string | undefined;
  bodySecret?: string | undefined;
  /**
   * Who sent the request (its client address read once, and whether a browser sent it): the
   * endpoints' limits count it in its address's share, and a document fetch the client's id
   * starts counts against its site's share.
   */
  askedBy: Requester;
}

/**
 * Whether the request offers a secret to check: a client secret (Basic with a password, or
 * `client_secret` in the body), or an Authorization header that could not be read. A public
 * client's request offers none (RFC 6749 2.1: it has no secret), nor does an empty secret, in
 * either place.
 */
export function offersSecret(credentials: ClientCredentials): boolean {
  const { basic } = credentials;
  return credentials.bodySecret !== undefined || (basic !== undefined && (typeof basic !== 'object' || basic.secret !== undefined));
}

/**
 * Decodes an `Authorization: Basic` value. RFC 6749 2.3.1: id and secret are
 * application/x-www-form-urlencoded before they are joined with ':' and base64-encoded, and an
 * empty secret is none (golang.org/x/oauth2 sends `client_id:` for a client without one). Once
 * decoded, each is the parameter it stands for, so one too long or holding NUL is refused as it
 * is in the body (`wellFormed`: `invalid_request`).
 */
export function parseBasicAuthorization(header: string): ClientCredentials['basic'] {
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (!match) return 'malformed';
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  let clientId: string;
  let secret: string;
  try {
    const form = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    clientId = form(decoded.slice(0, colon));
    secret = form(decoded.slice(colon + 1));
  } catch {
    // A malformed percent-escape: the header cannot be read (`authenticateClient`: 401).
    return 'malformed';
  }
  return { clientId: wellFormed('client_id', clientId), secret: secret === '' ? undefined : wellFormed('client_secret', secret) };
}

/**
 * The authenticated client, or an `OAuthError`: `invalid_request` for a missing client_id or two
 * methods at once (RFC 6749 2.3: one method per request), 401 `invalid_client` for an unknown or
 * deactivated client or a missing or wrong secret (with `WWW-Authenticate` when Basic was used).
 */
export async function authenticateClient(sources: ClientSources, credentials: ClientCredentials, now: Instant): Promise<Client> {
  const usedBasic = credentials.basic !== undefined;
  const fail = (description: string) => new OAuthError('invalid_client', description, {
    headers: usedBasic ? { 'www-authenticate': `Basic realm="${CLIENT_REALM}"` } : {},
  });
  let clientId: string | undefined;
  let secret: string | undefined;
  if (credentials.basic !== undefined) {
    if (credentials.basic === 'repeated') {
      throw new OAuthError('invalid_request', 'The request carried more than one Authorization header: send one, or client_id and client_secret in the body (RFC 6749 2.3: one method per request).');
    }
    if (credentials.basic === 'malformed') {
      throw fail('The Authorization header could not be read: send Basic with the base64 of client_id:client_secret, each form-urlencoded first (RFC 6749 2.3.1), or client_id and client_secret in the body.');
    }
    if (credentials.bodySecret !== undefined) {
      throw new OAuthError('invalid_request', 'The client secret was sent twice, with HTTP Basic and as client_secret in the body: use one of the two (RFC 6749 2.3).');
    }
    if (credentials.bodyClientId !== undefined && credentials.bodyClientId !== credentials.basic.clientId) {
      throw new OAuthError('invalid_request', 'The client_id in the body differs from the one in the Authorization header: send one client_id.');
    }
    clientId = credentials.basic.clientId;
    secret = credentials.basic.secret;
  } else {
    clientId = credentials.bodyClientId;
    secret = credentials.bodySecret;
  }
  if (clientId === undefined || clientId === '') {
    throw new OAuthError('invalid_request', 'The client_id parameter is required: send client_id in the body (with client_secret, for a confidential application), or use HTTP Basic.');
  }
  let client: Client | undefined;
  try {
    client = await resolveClient(sources, clientId, credentials.askedBy);
  } catch (error) {
    // RFC 6749 5.2: a client whose document is bad or unreachable cannot be authenticated.
    if (error instanceof ClientDocumentError) throw fail(`Client authentication failed: ${error.message}`);
    throw error;
  }
  // Client ids are not secret (every authorization request shows one), so the refusals may say
  // which part failed; a secret is never compared in a way that tells how close it was.
  if (!client || client.status !== 'active') {
    throw fail('Client authentication failed: the client_id is unknown or its application was deactivated; check it under Settings > Developer applications.');
  }
  if (client.type === 'public') {
    if (secret !== undefined) throw fail('Client authentication failed: this application is public, so send its client_id alone, without a client secret.');
    return client;
  }
  // A confidential client must prove its secret: the current one, or the one the last rotation
  // replaced while the operator keeps it accepted (`rotateClientSecret`; none by default).
  if (secret === undefined) {
    throw fail('Client authentication failed: this application is confidential, so send the client secret with HTTP Basic or client_secret in the body.');
  }
  if (client.secretHash === null || !matchesEitherSecret(hashSecret(secret), client.secretHash, livePreviousSecret(client, now)?.hash)) {
    throw fail('Client authentication failed: the client secret is wrong, or was replaced by a rotation (the replaced one stops working at once, or when the time this site keeps it is up); use the current one (Settings > Developer applications rotates it).');
  }
  return client;
}

/**
 * Whether `presented` is the current or the previous secret's hash. Both comparisons always run,
 * in constant time, and are joined without short-circuit, so the time taken tells neither which
 * one matched nor whether there is a previous secret at all (the current one stands in for it).
 */
function matchesEitherSecret(presented: string, current: string, previous: string | undefined): boolean {
  const isCurrent = digestsEqual(presented, current);
  const isPrevious = digestsEqual(presented, previous ?? current);
  return isCurrent || isPrevious;
}
