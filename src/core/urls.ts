/** Absolute addresses of the site's resources (INTERFACE section 7: they resolve, under BASE_URL). */

export interface SiteUrls {
  profile(username: string): string;
  avatar(userId: number): string;
  post(postId: number): string;
  docs(): string;
  /** Mailed links (INTERFACE section 12): a token in the query, single use. */
  verifyEmail(token: string): string;
  /** "Not you?" of a verification mail: its reader refuses the link (`EMAIL_REFUSE_PATH`). */
  refuseEmail(token: string): string;
  resetPassword(token: string): string;
  emailSettings(): string;
  securitySettings(): string;
  /** The member's personal API tokens, where one is revoked. */
  tokenSettings(): string;
  /** The apps the member authorized, where one's access is withdrawn. */
  applicationSettings(): string;
  /** A developer's apps, where a new one is registered. */
  developers(): string;
  /** An app's page for its owner. */
  developerApp(clientId: string): string;
}

/** The settings' first page, the profile: where the header's "Settings" and `/settings` lead. */
export const PROFILE_SETTINGS_PATH = '/settings/profile';
/** The member's e-mail settings page, which routes, views and mails name. */
export const EMAIL_SETTINGS_PATH = '/settings/email';
/** Cancels an address change waiting for its link. */
export const EMAIL_CANCEL_PATH = `${EMAIL_SETTINGS_PATH}/cancel`;
/** A reset mail's link (`?token=…`): its GET shows the form, its POST sets the password. */
export const RESET_PASSWORD_PATH = '/password/reset';
/** A verification mail's "Not you?" page: its GET shows what refusing does, its POST refuses. */
export const EMAIL_REFUSE_PATH = '/email/not-mine';

export function siteUrls(baseUrl: string): SiteUrls {
  return {
    profile: (username) => `${baseUrl}/u/${encodeURIComponent(username)}`,
    avatar: (userId) => `${baseUrl}/avatars/${userId}`,
    post: (postId) => `${baseUrl}/posts/${postId}`,
    docs: () => `${baseUrl}/docs`,
    verifyEmail: (token) => `${baseUrl}/email/verify?token=${encodeURIComponent(token)}`,
    refuseEmail: (token) => `${baseUrl}${EMAIL_REFUSE_PATH}?token=${encodeURIComponent(token)}`,
    resetPassword: (token) => `${baseUrl}${RESET_PASSWORD_PATH}?token=${encodeURIComponent(token)}`,
    emailSettings: () => `${baseUrl}${EMAIL_SETTINGS_PATH}`,
    securitySettings: () => `${baseUrl}/settings/security`,
    tokenSettings: () => `${baseUrl}/settings/tokens`,
    applicationSettings: () => `${baseUrl}/settings/applications`,
    developers: () => `${baseUrl}/settings/developers`,
    developerApp: (clientId) => `${baseUrl}/settings/developers/${encodeURIComponent(clientId)}`,
  };
}

/** `value` percent-encoded as a URI component (RFC 3986 2.1), a lone surrogate as U+FFFD: never throws. */
export function encodeComponent(value: string): string {
  return encodeURIComponent(value.toWellFormed());
}

/**
 * `uri` with every character outside printable ASCII percent-encoded as UTF-8 (RFC 3986 2.1, as a
 * browser does to an address typed with such characters), so it fits a `Location` header, which
 * carries only Latin-1 (RFC 9110 5.5).
 */
export function percentEncodeNonAscii(uri: string): string {
  return uri.replace(/[^\x21-\x7e]+/g, (run) => encodeComponent(run));
}
