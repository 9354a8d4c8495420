/** The authorization request (RFC 6749 4.1.1, RFC 7636 4.3, OpenID Connect Core 3.1.2.1). */
import type { Params } from '../params.js';
import type { PushedFlow } from './pushed.js';
import type { Client } from '../ports.js';
import type { Scope } from '../scopes.js';
import { encodeComponent, percentEncodeNonAscii } from '../../urls.js';

export type Prompt = 'none' | 'login' | 'consent';

/** The longest `state` taken, here and at RP-initiated logout; a longer one is refused and never sent back. */
export const MAX_STATE_LENGTH = 1024;

/**
 * Whether a `state` or `nonce` holds a line break: the consent page, a `form_post` answer and the
 * logout confirmation carry them in hidden fields, and a browser hands a form's line breaks back
 * as CR LF whatever they were (HTML's form-data newline normalization), so the app would get
 * back a value it never sent (attack106). RFC 6749 A.5 takes printable ASCII for state. Such a
 * value is refused.
 */
export function holdsLineBreak(value: string): boolean {
  return /[\r\n]/.test(value);
}

/**
 * How the authorization response reaches the redirect URI: in its query (RFC 6749 4.1.2, the
 * default), or as a form the browser posts there (OAuth 2.0 Form Post Response Mode), which keeps
 * the code out of the address bar, the history and the app's access logs.
 */
export type ResponseMode = 'query' | 'form_post';
export const RESPONSE_MODES: readonly ResponseMode[] = ['query', 'form_post'];

/** An authorization response, a code or an error, on its way to the client's redirect URI. */
export interface AuthorizationResponse {
  redirectUri: string;
  mode: ResponseMode;
  /** The application's name, for the page that posts a `form_post` response. */
  clientName: string;
  /** `code`, `state`, `iss`; or `error`, `error_description`, `state`, `iss`. A null is not sent. */
  parameters: Record<string, string | null>;
}

/** A request that passed every check: the only shape the rest of the flow accepts. */
export interface AuthorizationRequest {
  client: Client;
  redirectUri: string;
  /** What will be granted, in canonical order. */
  scopes: Scope[];
  /** OpenID scopes the request named that are never granted (`DROPPED_SCOPES`): the consent page says so. */
  droppedScopes: string[];
  responseMode: ResponseMode;
  /** `null` when not sent: allowed with a PKCE challenge (RFC 9700 2.1.1). */
  state: string | null;
  codeChallenge: string | null;
  /** `null` when not sent: allowed with a PKCE challenge (OIDC Core 3.1.2.1); the id_token then has none. */
  nonce: string | null;
  prompt: ReadonlySet<Prompt>;
  /** Seconds; `null` when not sent. */
  maxAge: number | null;
  loginHint: string | null;
  /**
   * Who must be signed in (OIDC Core 3.1.2.1): the `sub` of a verified `id_token_hint`, or
   * `unknown` for one signed by a key we no longer publish, which nobody signed in matches;
   * `null` when none was sent.
   */
  hintedSubject: string | { unknown: true } | null;
  /** RFC 9449 10: the thumbprint of the DPoP key the code is bound to; `null` when not sent. */
  dpopJkt: string | null;
  /** RFC 8707: the resource asked for (only ever the resource API's identifier); `null` when none. */
  resource: string | null;
  /**
   * The pushed request whose parameters these are, known by the client's push (RFC 9126: opened
   * from a `request_uri`, carried with a valid `PUSHED_MARKER`); `null` if not.
   */
  pushed: PushedFlow | null;
}

/** The parameters that make up a request: the ones carried through sign-in and the consent form. */
export const REQUEST_PARAMETERS = [
  'response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method',
  'nonce', 'prompt', 'max_age', 'login_hint', 'id_token_hint', 'response_mode', 'dpop_jkt', 'resource',
  // OpenID Connect Core 3.1.2.1: the pages' language, kept through sign-in, sign-up and consent (INTERFACE section 12).
  'ui_locales',
] as const;

/**
 * The field that carries, through sign-in and the consent form, the proof that the request's
 * parameters were pushed (RFC 9126): see `authorize/pushed.ts`.
 */
export const PUSHED_MARKER = 'pushed';

/**
 * The request's own parameters, each once (its first value), in `REQUEST_PARAMETERS` order: for
 * the return trip, the consent form, a pushed request's storage and its marker. `drop` may change
 * or drop a value.
 */
export function requestFields(params: Params, drop: (name: string, value: string) => string | undefined = (_n, v) => v): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  for (const name of REQUEST_PARAMETERS) {
    const value = params.get(name)?.find((v) => v !== '');
    const kept = value === undefined ? undefined : drop(name, value);
    if (kept !== undefined && kept !== '') fields.push([name, kept]);
  }
  return fields;
}

/**
 * The request's fields as sign-in returns to them: without `login` in `prompt`, without `max_age`
 * and without `login_hint`. The new session has just been authenticated, by whom the member chose,
 * and keeping the demand would ask again forever (attack114); the fresh `auth_time` and `sub` are
 * what the client can verify (OpenID Connect Core 3.1.2.1). An `id_token_hint` stays.
 */
export function fieldsAfterSignIn(params: Params): Array<[string, string]> {
  return requestFields(params, (name, value) => {
    if (name === 'max_age' || name === 'login_hint') return undefined;
    if (name === 'prompt') return value.split(' ').filter((p) => p !== 'login').join(' ');
    return value;
  });
}

/**
 * Appends parameters to a redirect URI that may carry its own query, leaving its text as it was.
 * A parameter without a value (`state` not sent, say) is left out, never sent empty.
 */
export function appendQuery(uri: string, parameters: Record<string, string | null | undefined>): string {
  const pairs = Object.entries(parameters)
    .filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== null)
    .map(([k, v]) => `${encodeComponent(k)}=${encodeComponent(v)}`);
  // A URI registered before registration required ASCII still makes a valid Location header.
  const base = percentEncodeNonAscii(uri);
  if (pairs.length === 0) return base;
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return base + separator + pairs.join('&');
}
