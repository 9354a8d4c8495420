/**
 * The protected resources this service has: the resource API (seed 4.4) and the same API for
 * agents, its MCP server (INTERFACE section 13). Each one's identifier is what RFC 8707 `resource`
 * names and what its RFC 9728 metadata calls `resource`; a token issued for one by name is
 * accepted by that one alone (`audienceRefusal`).
 */
import { OAuthError } from '../errors.js';
import type { Params } from '../oauth/params.js';
import { API_BASE_PATH } from './views.js';
import { RESOURCE_SCOPES } from '../oauth/scopes.js';

/** INTERFACE section 13: the MCP server's path, under the API's. */
export const MCP_PATH = `${API_BASE_PATH}/mcp`;

/** Each protected resource by its path under the issuer, and the name its metadata gives it. */
const RESOURCES = [
  { path: API_BASE_PATH, name: 'Resource API v1' },
  { path: MCP_PATH, name: 'Resource API v1 for agents (MCP)' },
] as const;

export type ResourcePath = (typeof RESOURCES)[number]['path'];

/** RFC 8707 2, RFC 9728 2: a resource's identifier, the issuer followed by its path. */
export function resourceIdentifier(issuer: string, path: ResourcePath): string {
  return `${issuer}${path}`;
}

/** RFC 8707 2, RFC 9728 2: the resource API's identifier, `{issuer}/api/open/v1`. */
export function apiResource(issuer: string): string {
  return resourceIdentifier(issuer, API_BASE_PATH);
}

/** The MCP server's identifier, `{issuer}/api/open/v1/mcp`. */
export function mcpResource(issuer: string): string {
  return resourceIdentifier(issuer, MCP_PATH);
}

/** RFC 9728 3.1: a resource's metadata is at `/.well-known/oauth-protected-resource` followed by the resource's path. */
export function resourceMetadataPath(path: ResourcePath): string {
  return `/.well-known/oauth-protected-resource${path}`;
}

/** RFC 9728 3.1: where a resource's metadata is, under the issuer like every other address of the service. */
export function resourceMetadataUrl(issuer: string, path: ResourcePath = API_BASE_PATH): string {
  return `${issuer}${resourceMetadataPath(path)}`;
}

/**
 * RFC 8707 2 and 2.2: the `resource` values of an authorization, pushed or token request. Each
 * must be the identifier of one of this service's resources, exactly; any other is
 * `invalid_target`. A request may repeat it (RFC 8707 lets a request name several resources), but
 * a token here is for one resource, so two different ones are `invalid_target` too. Returns the
 * resource, or `null` when none was named.
 */
export function requestedResource(params: Params, issuer: string): string | null {
  const values = [...new Set((params.get('resource') ?? []).filter((v) => v !== ''))];
  if (values.length === 0) return null;
  const known = RESOURCES.map(({ path }) => resourceIdentifier(issuer, path));
  const unknown = values.find((value) => !known.includes(value));
  if (unknown !== undefined) {
    throw new OAuthError('invalid_target', `The resources this service issues tokens for are the resource API, ${known[0]}, and its MCP server, ${known[1]}: send one of them as resource, or leave resource out (RFC 8707).`);
  }
  if (values.length > 1) {
    throw new OAuthError('invalid_target', 'A token here is for one resource: send resource once (the resource API or its MCP server), or leave it out to use the token with both (RFC 8707).');
  }
  return values[0]!;
}

/**
 * RFC 8707 2.2: a token request may name a resource only within what the authorization allowed.
 * An authorization that named one (`granted`) allows that one alone; one that named none allows
 * any. Throws `invalid_target` otherwise.
 */
export function checkGrantedResource(granted: string | null, requested: string | null): void {
  if (granted === null || requested === null || requested === granted) return;
  throw new OAuthError('invalid_target', `The authorization was for ${granted} alone: send that resource, or leave resource out.`);
}

/** RFC 9728 2: a resource's metadata. Its scopes are those that open parts of it (seed table 2.6). */
function protectedResourceMetadata(issuer: string, path: ResourcePath) {
  return {
    resource: resourceIdentifier(issuer, path),
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: [...RESOURCE_SCOPES],
    resource_name: RESOURCES.find((resource) => resource.path === path)!.name,
    resource_documentation: `${issuer}/docs`,
  };
}

/** Every resource's metadata path and document, for the route that serves them. */
export function protectedResourcesMetadata(issuer: string) {
  return RESOURCES.map(({ path }) => ({ path: resourceMetadataPath(path), metadata: protectedResourceMetadata(issuer, path) }));
}
