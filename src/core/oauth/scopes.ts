/** Scopes (seed table 2.6, INTERFACE section 3) and their syntax (RFC 6749 3.3). */
import type { Words } from '../errors.js';

export interface ScopeDescription {
  /** What the scope lets an app read, in the words of seed table 2.6 (English: the API's documents). */
  readonly allows: string;
  readonly doesNotAllow: string;
  /**
   * The consent page's words, in the catalogs (INTERFACE section 12): a title in plain words
   * ("Read your profile"), what it allows and what not, the last limited to what this site holds.
   */
  readonly words: { readonly title: Words; readonly allows: Words; readonly doesNotAllow: Words };
}

/** Every scope that can be granted, in the canonical order of scope strings. */
export const SCOPES = {
  openid: {
    allows: 'Sign you in: confirm who you are with your user id.',
    doesNotAllow: 'Anything else about you.',
    words: { title: { key: 'scopes.openidTitle' }, allows: { key: 'scopes.openidAllows' }, doesNotAllow: { key: 'scopes.openidDoesNotAllow' } },
  },
  // OIDC Core 5.4: the profile claims of the id_token and UserInfo; no access to the API.
  profile: {
    allows: 'Nickname, avatar and the address of the public profile page, as part of signing you in.',
    doesNotAllow: 'Bio, membership status, level, experience points; e-mail, account status, devices, wallet.',
    words: { title: { key: 'scopes.profileTitle' }, allows: { key: 'scopes.profileAllows' }, doesNotAllow: { key: 'scopes.profileDoesNotAllow' } },
  },
  // OIDC Core 11: refresh tokens are issued to every app anyway; the page says so when asked.
  offline_access: {
    allows: 'The items above also while you are not using the app, until you withdraw access under Settings → Authorized applications.',
    doesNotAllow: 'Anything not listed here.',
    words: { title: { key: 'scopes.offlineAccessTitle' }, allows: { key: 'scopes.offlineAccessAllows' }, doesNotAllow: { key: 'scopes.offlineAccessDoesNotAllow' } },
  },
  'profile:read': {
    allows: 'Nickname, avatar, bio, membership status, level and experience points.',
    doesNotAllow: 'E-mail, account status, devices, wallet.',
    words: { title: { key: 'scopes.profileReadTitle' }, allows: { key: 'scopes.profileReadAllows' }, doesNotAllow: { key: 'scopes.profileReadDoesNotAllow' } },
  },
  'posts:read': {
    allows: 'The list of posts the user has published (title, excerpt, link, interaction counts).',
    doesNotAllow: "Other people's unpublished content, drafts, private messages.",
    words: { title: { key: 'scopes.postsReadTitle' }, allows: { key: 'scopes.postsReadAllows' }, doesNotAllow: { key: 'scopes.postsReadDoesNotAllow' } },
  },
} as const satisfies Record<string, ScopeDescription>;

export type Scope = keyof typeof SCOPES;

/** The scopes a personal token may carry (INTERFACE section 2). */
export const RESOURCE_SCOPES: readonly Scope[] = ['profile:read', 'posts:read'];
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

/**
 * OpenID's standard scopes for claims this service does not hold or never shares (OIDC Core 5.4):
 * accepted in a request and dropped from the grant, never granted (INTERFACE section 3). The
 * token response's `scope` then says what was granted (RFC 6749 3.3).
 */
export const DROPPED_SCOPES: readonly string[] = ['email', 'address', 'phone'];

/**
 * The scopes a client registration lists: the service's own. OpenID's standard scopes are not
 * listed; they follow from these (`permittedScopes`), for clients old and new alike.
 */
export const REGISTERED_SCOPES: readonly Scope[] = ['openid', 'profile:read', 'posts:read'];

/**
 * The scopes a client registered with `allowed` may ask for (docs/oauth.md, "Scopes"): what it
 * lists, plus `profile` when it may ask for `profile:read` (whose data includes the profile
 * claims) and `offline_access` always (it grants nothing a refresh token does not already give).
 */
export function permittedScopes(allowed: readonly string[]): ReadonlySet<Scope> {
  const permitted = new Set(allowed.filter(isScope));
  if (permitted.has('profile:read')) permitted.add('profile');
  permitted.add('offline_access');
  return permitted;
}

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/** RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by single spaces. */
const SCOPE_SYNTAX = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/;

export type ParsedScope = { scopes: Scope[]; dropped: string[] } | { unknown: string[] };

/**
 * Splits a scope parameter into known scopes, in canonical order without repeats, and the
 * `DROPPED_SCOPES` it named. Returns the unknown tokens instead when there are any, or
 * `undefined` when the syntax is wrong.
 */
export function parseScope(value: string): ParsedScope | undefined {
  if (!SCOPE_SYNTAX.test(value)) return undefined;
  const tokens = new Set(value.split(' '));
  const unknown = [...tokens].filter((t) => !isScope(t) && !DROPPED_SCOPES.includes(t));
  if (unknown.length > 0) return { unknown };
  return { scopes: ALL_SCOPES.filter((s) => tokens.has(s)), dropped: DROPPED_SCOPES.filter((s) => tokens.has(s)) };
}

/** The space-separated form used in responses and storage, in canonical order. */
export function formatScope(scopes: Iterable<string>): string {
  const set = new Set(scopes);
  return ALL_SCOPES.filter((s) => set.has(s)).join(' ');
}

/** Stored scope strings are written by us, so they parse without checks. */
export function scopeList(stored: string): Scope[] {
  return stored === '' ? [] : (stored.split(' ').filter(isScope));
}

/**
 * Whether a stored scope string (a consent's, say) holds every scope asked: a consent is remembered
 * only for what the user approved (RFC 6749 4.1.1, INTERFACE section 3). Nothing asked is held by
 * anything; nothing stored holds nothing asked.
 */
export function holdsEveryScope(held: string | undefined, asked: readonly string[]): boolean {
  if (held === undefined) return false;
  const scopes = new Set<string>(scopeList(held));
  return asked.every((scope) => scopes.has(scope));
}
