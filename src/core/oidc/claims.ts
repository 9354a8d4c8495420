/** Claims about the user, for the id_token and UserInfo (INTERFACE section 5). */
import type { User } from '../accounts/ports.js';
import type { SiteUrls } from '../urls.js';

/** The standard claims that match seed table 2.2 (OIDC Core 5.1). */
export function profileClaims(user: Pick<User, 'id' | 'username'>, urls: SiteUrls) {
  return {
    preferred_username: user.username,
    picture: urls.avatar(user.id),
    profile: urls.profile(user.username),
  };
}

/** INTERFACE section 5: the profile claims come with `profile:read` or OpenID's `profile` (OIDC Core 5.4). */
export function hasProfileClaims(scopes: readonly string[]): boolean {
  return scopes.includes('profile:read') || scopes.includes('profile');
}

/** UserInfo (OIDC Core 5.3.2): `sub` always, the profile claims with `profile:read` or `profile`. */
export function userInfoClaims(user: Pick<User, 'id' | 'username'>, scopes: readonly string[], urls: SiteUrls) {
  return {
    sub: String(user.id),
    ...(hasProfileClaims(scopes) ? profileClaims(user, urls) : {}),
  };
}
