/** Scopes (seed table 2.6) and their syntax (RFC 6749 3.3). */

export interface ScopeDescription {
  /** What the scope lets an app read, in the words of seed table 2.6. */
  readonly allows: string;
  readonly doesNotAllow: string;
}

export const SCOPES = {
  openid: {
    allows: 'Sign you in: confirm who you are with your user id.',
    doesNotAllow: 'Anything else about you.',
  },
  'profile:read': {
    allows: 'Nickname, avatar, bio, membership status, level and experience points.',
    doesNotAllow: 'E-mail, account status, devices, wallet.',
  },
  'posts:read': {
    allows: 'The list of posts the user has published (title, excerpt, link, interaction counts).',
    doesNotAllow: "Other people's unpublished content, drafts, private messages.",
  },
} as const satisfies Record<string, ScopeDescription>;

export type Scope = keyof typeof SCOPES;

/** The scopes a personal token may carry (INTERFACE section 2). */
export const RESOURCE_SCOPES: readonly Scope[] = ['profile:read', 'posts:read'];
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/** RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by single spaces. */
const SCOPE_SYNTAX = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/;

/**
 * Splits a scope parameter into known scopes, in canonical order without repeats.
 * Returns the unknown tokens instead when there are any, or `undefined` when the syntax is wrong.
 */
export function parseScope(value: string): { scopes: Scope[] } | { unknown: string[] } | undefined {
  if (!SCOPE_SYNTAX.test(value)) return undefined;
  const tokens = new Set(value.split(' '));
  const unknown = [...tokens].filter((t) => !isScope(t));
  if (unknown.length > 0) return { unknown };
  return { scopes: ALL_SCOPES.filter((s) => tokens.has(s)) };
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
