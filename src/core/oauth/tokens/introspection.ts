/** Token introspection for the client that owns the token (RFC 7662). */
import { hashSecret, tokenKind } from '../../credentials/formats.js';
import type { Client } from '../ports.js';
import { apiResource } from '../../api/resource.js';
import { hasExpired } from '../../time.js';
import type { OAuthDeps } from './context.js';

export type Introspection =
  | { active: false }
  | {
    active: true;
    scope: string;
    client_id: string;
    username: string;
    sub: string;
    exp: number;
    iat: number;
    token_type: string;
    /** RFC 9449 6.2: the DPoP key a bound token is bound to. */
    cnf?: { jkt: string };
    /** RFC 7662 2.2, RFC 8707: an access token's audience: the resource it was issued for, else the resource API. */
    aud?: string;
  };

const INACTIVE: Introspection = { active: false };

/**
 * RFC 7662 2.2: `active` only for a live token of the calling client: not expired, not revoked,
 * not rotated, its grant not revoked, its user `active`. Anything else is exactly `{active:false}`
 * (2.2: no more is said about tokens the caller may not see).
 */
export async function introspectToken(deps: OAuthDeps, client: Client, token: string): Promise<Introspection> {
  const kind = tokenKind(token);
  if (kind !== 'access' && kind !== 'refresh') return INACTIVE;
  const { stores } = deps;
  const hash = hashSecret(token);
  const found = kind === 'access' ? await stores.tokens.findAccess(hash) : await stores.tokens.findRefresh(hash);
  if (!found || found.clientId !== client.clientId) return INACTIVE;
  const now = deps.clock.now();
  // Expired by the bearer gate's rule: the resource API and introspection agree on every instant.
  if (found.revokedAt !== null || hasExpired(found.expiresAt, now)) return INACTIVE;
  if ('usedAt' in found && found.usedAt !== null) return INACTIVE;
  const owner = await stores.grants.findWithUser(found.grantId);
  if (!owner || owner.grant.revokedAt !== null || owner.user.status !== 'active') return INACTIVE;
  const { user } = owner;
  return {
    active: true,
    scope: found.scope,
    client_id: found.clientId,
    username: user.username,
    sub: String(user.id),
    exp: Math.floor(found.expiresAt / 1000),
    iat: Math.floor(found.createdAt / 1000),
    // RFC 9449 6.2: a bound access token is of type DPoP, and any bound token shows its key.
    token_type: kind === 'refresh' ? 'refresh_token' : found.dpopJkt === null ? 'Bearer' : 'DPoP',
    ...(found.dpopJkt === null ? {} : { cnf: { jkt: found.dpopJkt } }),
    // An access token is for the resource its requests named (RFC 8707), else for the resource API
    // (the MCP server reads the same API); a refresh token is for this server alone and has no `aud`.
    ...(kind === 'access' ? { aud: found.resource ?? apiResource(deps.settings.baseUrl) } : {}),
  };
}
