/** The authorization request (RFC 6749 4.1.1, RFC 7636 4.3, OpenID Connect Core 3.1.2.1). */
import type { Client } from '../ports.js';
import type { Scope } from '../scopes.js';
import { encodeComponent, percentEncodeNonAscii } from '../urls.js';

export type Prompt = 'none' | 'login' | 'consent';

/** A request that passed every check: the only shape the rest of the flow accepts. */
export interface AuthorizationRequest {
  client: Client;
  redirectUri: string;
  scopes: Scope[];
  state: string;
  codeChallenge: string | null;
  nonce: string | null;
  prompt: ReadonlySet<Prompt>;
  /** Seconds; `null` when not sent. */
  maxAge: number | null;
  loginHint: string | null;
}

/** The parameters that make up a request: the ones carried through sign-in and the consent form. */
export const REQUEST_PARAMETERS = [
  'response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method',
  'nonce', 'prompt', 'max_age', 'login_hint', 'response_mode',
] as const;

/** Appends parameters to a redirect URI that may carry its own query, leaving its text as it was. */
export function appendQuery(uri: string, parameters: Record<string, string | undefined>): string {
  const pairs = Object.entries(parameters)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([k, v]) => `${encodeComponent(k)}=${encodeComponent(v)}`);
  // A URI registered before registration required ASCII still makes a valid Location header.
  const base = percentEncodeNonAscii(uri);
  if (pairs.length === 0) return base;
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return base + separator + pairs.join('&');
}
