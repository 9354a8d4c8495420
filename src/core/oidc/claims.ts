/** Claims about the user, for the id_token and UserInfo (INTERFACE sections 5 and 12). */
import type { User } from '../accounts/ports.js';
import type { SiteUrls } from '../urls.js';

/** What the claims need of the site rather than of the user. */
export interface ClaimsSite {
  urls: SiteUrls;
  /** `SITE_TIME_ZONE`: the zone the site shows a member who chose none. */
  timeZone: string;
}

export type ClaimsUser = Pick<User, 'id' | 'username' | 'nickname' | 'language' | 'timeZone'>;

/**
 * The standard claims that match seed table 2.2 and INTERFACE section 12 (OIDC Core 5.1):
 * `preferred_username` the sign-in handle, `name` the nickname (the API's `username`), `locale`
 * the member's saved language, a BCP 47 tag, left out when none is saved (5.3.2: an unknown
 * claim is omitted, never empty), and `zoneinfo` the zone the site shows the member's times in:
 * the saved one, else the site's, which is then the member's clock on every page.
 */
export function profileClaims(user: ClaimsUser, site: ClaimsSite) {
  return {
    preferred_username: user.username,
    name: user.nickname,
    picture: site.urls.avatar(user.id),
    profile: site.urls.profile(user.username),
    ...(user.language === null ? {} : { locale: user.language }),
    zoneinfo: user.timeZone ?? site.timeZone,
  };
}

/** INTERFACE section 5: the profile claims come with `profile:read` or OpenID's `profile` (OIDC Core 5.4). */
export function hasProfileClaims(scopes: readonly string[]): boolean {
  return scopes.includes('profile:read') || scopes.includes('profile');
}

/** UserInfo (OIDC Core 5.3.2): `sub` always, the profile claims with `profile:read` or `profile`. */
export function userInfoClaims(user: ClaimsUser, scopes: readonly string[], site: ClaimsSite) {
  return {
    sub: String(user.id),
    ...(hasProfileClaims(scopes) ? profileClaims(user, site) : {}),
  };
}
