/**
 * Request parameters as they arrived: every name with every value it was given, so a repeated
 * parameter can be refused (RFC 6749 3.1 and 3.2: parameters MUST NOT be included more than once).
 */
import { OAuthError } from '../errors.js';

export type Params = ReadonlyMap<string, readonly string[]>;

/** The longest value any parameter may have; longer ones are `invalid_request`. */
export const MAX_PARAMETER_LENGTH = 4096;

export function paramsFromEntries(entries: Iterable<[string, string]>): Params {
  const map = new Map<string, string[]>();
  for (const [name, value] of entries) {
    const values = map.get(name);
    if (values) values.push(value);
    else map.set(name, [value]);
  }
  return map;
}

/** From a parsed form or query object whose values are strings or arrays of strings. */
export function paramsFromObject(object: unknown): Params {
  const entries: Array<[string, string]> = [];
  if (object && typeof object === 'object') {
    for (const [name, value] of Object.entries(object)) {
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v === 'string') entries.push([name, v]);
      }
    }
  }
  return paramsFromEntries(entries);
}

/** Names given more than once (with a value: RFC 6749 3.1 treats empty values as omitted). */
export function repeatedNames(params: Params, names?: readonly string[]): string[] {
  const out: string[] = [];
  for (const [name, values] of params) {
    if (names && !names.includes(name)) continue;
    if (values.filter((v) => v !== '').length > 1) out.push(name);
  }
  return out;
}

/**
 * The one value of a parameter, `undefined` when absent or empty (RFC 6749 3.1: a parameter
 * without a value is treated as omitted). Throws `invalid_request` when repeated or too long.
 */
export function single(params: Params, name: string): string | undefined {
  const values = (params.get(name) ?? []).filter((v) => v !== '');
  if (values.length > 1) throw repeatedParameter(name);
  const value = values[0];
  return value === undefined ? undefined : wellFormed(name, value);
}

/**
 * `value` of parameter `name`, or `invalid_request` when it is longer than any parameter may be or
 * holds NUL (RFC 6749 5.2: "otherwise malformed"): the same refusal wherever it came from, the body
 * or HTTP Basic (`parseBasicAuthorization`).
 */
export function wellFormed(name: string, value: string): string {
  if (value.length > MAX_PARAMETER_LENGTH) {
    throw new OAuthError('invalid_request', `The ${name} parameter is too long: at most ${MAX_PARAMETER_LENGTH} characters.`);
  }
  // No parameter has a use for NUL, and PostgreSQL text cannot hold it.
  if (value.includes('\u0000')) throw new OAuthError('invalid_request', `The ${name} parameter is malformed: it holds a NUL character.`);
  return value;
}

/** RFC 6749 3.1 and 3.2: a parameter sent more than once. */
export function repeatedParameter(name: string): OAuthError {
  return new OAuthError('invalid_request', `The ${name} parameter is repeated: send each parameter once (RFC 6749 3.1).`);
}

/** The one value of a required parameter; `what` says what to send, for the refusal. */
export function required(params: Params, name: string, what?: string): string {
  const value = single(params, name);
  if (value === undefined) throw new OAuthError('invalid_request', `The ${name} parameter is required${what === undefined ? '' : `: ${what}`}.`);
  return value;
}

/** The parameters of the token, revocation and introspection endpoints. */
const TOKEN_ENDPOINT_PARAMETERS = [
  'grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'client_id', 'client_secret', 'token', 'token_type_hint',
  'resource',
];

/**
 * RFC 6749 2.3.1 and 3.2: the token endpoint's parameters travel in the request body, never the
 * URI, where a secret or a token ends up in logs and histories. Refused by name, so a client that
 * put them there learns it instead of meeting "parameter is required".
 */
export function refuseParametersInUri(query: Params): void {
  const found = TOKEN_ENDPOINT_PARAMETERS.filter((name) => query.has(name));
  if (found.length > 0) {
    throw new OAuthError('invalid_request', `Parameters in the query string are not accepted (${found.join(', ')}): send them in an application/x-www-form-urlencoded request body (RFC 6749 3.2).`);
  }
}
