/** Claims about the user, for the id_token and UserInfo (INTERFACE section 5). */
import type { User } from '../ports.js';
import type { SiteUrls } from '../urls.js';

/** With `profile:read`: the standard claims that match seed table 2.2 (OIDC Core 5.1). */
export function profileClaims(user: Pick<User, 'id' | 'username'>, urls: SiteUrls) {
  return {
    preferred_username: user.username,
    picture: urls.avatar(user.id),
    profile: urls.profile(user.username),
  };
}

/** UserInfo (OIDC Core 5.3.2): `sub` always, profile claims with `profile:read`. */
export function userInfoClaims(user: Pick<User, 'id' | 'username'>, scopes: readonly string[], urls: SiteUrls) {
  return {
    sub: String(user.id),
    ...(scopes.includes('profile:read') ? profileClaims(user, urls) : {}),
  };
}
