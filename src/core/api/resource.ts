/**
 * The one protected resource this service has: the resource API (seed 4.4). Its identifier is
 * what RFC 8707 `resource` must name and what RFC 9728 metadata calls `resource`, and it is the
 * `aud` of every access token (introspection shows it).
 */
import { OAuthError } from '../errors.js';
import type { Params } from '../oauth/params.js';
import { API_BASE_PATH } from './views.js';
import { RESOURCE_SCOPES } from '../oauth/scopes.js';

/** RFC 8707 2, RFC 9728 2: the resource API's identifier, `{issuer}/api/open/v1`. */
export function apiResource(issuer: string): string {
  return `${issuer}${API_BASE_PATH}`;
}

/** The path of its metadata (RFC 9728 3.1: `/.well-known/oauth-protected-resource` before the resource's path). */
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${API_BASE_PATH}`;

/** RFC 9728 3.1: where its metadata is, under the issuer like every other address of the service. */
export function resourceMetadataUrl(issuer: string): string {
  return `${issuer}${RESOURCE_METADATA_PATH}`;
}

/**
 * RFC 8707 2 and 2.2: the `resource` values of an authorization, pushed or token request. Each
 * must be the resource API's identifier, exactly; any other is `invalid_target`. Sending it twice
 * is allowed (RFC 8707 lets a request name several resources; here there is one). Returns the
 * resource, or `null` when none was named.
 */
export function requestedResource(params: Params, issuer: string): string | null {
  const values = (params.get('resource') ?? []).filter((v) => v !== '');
  if (values.length === 0) return null;
  const api = apiResource(issuer);
  for (const value of values) {
    if (value !== api) {
      throw new OAuthError('invalid_target', `The only resource this service issues tokens for is the resource API, ${api}: send resource=${api}, or leave resource out (RFC 8707).`);
    }
  }
  return api;
}

/** RFC 9728 2: the resource API's metadata. Its scopes are those that open parts of it (seed table 2.6). */
export function protectedResourceMetadata(issuer: string) {
  return {
    resource: apiResource(issuer),
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: [...RESOURCE_SCOPES],
    resource_name: 'Resource API v1',
    resource_documentation: `${issuer}/docs`,
  };
}
