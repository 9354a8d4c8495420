/**
 * The one catalogue of errors a client can see. OAuth codes come from RFC 6749 5.2 and 4.1.2.1,
 * RFC 6750 3.1, RFC 7009 2.2.1, RFC 7591 3.2.2, RFC 8707 2, RFC 9449 (DPoP) and OpenID Connect Core 3.1.2.6; the resource API's own codes
 * from INTERFACE section 6. Anything not in this union is a bug and leaves as `server_error`.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'request_not_supported'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'rate_limited'
  | 'not_found'
  | 'server_error'
  | 'temporarily_unavailable';

/** The HTTP status each code is answered with when it is not a redirect. */
export const ERROR_STATUS: Readonly<Record<OAuthErrorCode, number>> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  unsupported_token_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  login_required: 400,
  consent_required: 400,
  interaction_required: 400,
  request_not_supported: 400,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  // RFC 9449 5 and 8: 400 at the token endpoint; the resource API answers both with 401 (7.1, 9).
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
  rate_limited: 429,
  not_found: 404,
  server_error: 500,
  temporarily_unavailable: 503,
};

/** A character RFC 6749 5.2 keeps out of an `error_description`: a quote, a backslash, anything not printable ASCII. */
const OUTSIDE_ERROR_DESCRIPTION = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

/**
 * An error whose code and description are safe to show the client. It is an answer, not a
 * fault: it carries no stack trace, because capturing one cost more than the rest of a refused
 * API request (issue 8) and nothing ever reads it.
 */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  readonly status: number;

  /** Headers the answer must carry, such as `WWW-Authenticate` (RFC 6749 5.2, RFC 6750 3). */
  readonly headers: Readonly<Record<string, string>>;

  /** The description in the catalogs, for an error page in the reader's language; the description stays English (RFC 6749 5.2). */
  readonly words: Words | undefined;

  /**
   * What the client reads in `error_description`: English, in the characters RFC 6749 5.2 and
   * RFC 6750 3 allow it (`asErrorDescription`), whatever it quotes of what the request carried.
   */
  readonly description: string;

  constructor(
    readonly code: OAuthErrorCode,
    description: string,
    options?: { cause?: unknown; headers?: Record<string, string>; status?: number; words?: Words },
  ) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    const allowed = asErrorDescription(description);
    super(`${code}: ${allowed}`, options);
    Error.stackTraceLimit = stackTraceLimit;
    this.description = allowed;
    this.status = options?.status ?? ERROR_STATUS[code];
    this.headers = options?.headers ?? {};
    this.words = options?.words;
  }
}

/**
 * `text` in the characters RFC 6749 5.2 allows an `error_description` (%x20-21 / %x23-5B /
 * %x5D-7E; RFC 7591 3.2.2 takes the same): a quote or backslash becomes `'`, anything else outside
 * printable ASCII `?`, so a description that quotes what the client sent stays in them.
 */
export function asErrorDescription(text: string): string {
  return OUTSIDE_ERROR_DESCRIPTION.test(text) ? text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?') : text;
}


/** One input that breaks a rule: the field it came in and what is wrong with it. */
export interface FieldProblem {
  field: string;
  /** English, for the API, the command line and logs. */
  message: string;
  /** The same problem in the catalogs (`namespace.name`), for pages in the reader's language. */
  words?: Words | undefined;
}

/** A message of the catalogs and the values it is filled with. */
export interface Words {
  key: string;
  /** A list (`readonly string[]`) is written as the page's language writes one. */
  values?: Record<string, string | number | readonly string[]>;
}

/**
 * Values a person or script gave that break rules. `field` and the message name the first;
 * `problems` holds every field at fault, so a form can name them all at once.
 */
export class InputError extends Error {
  override readonly name = 'InputError';
  readonly problems: readonly FieldProblem[];
  constructor(readonly field: string, message: string, others: readonly FieldProblem[] = [], words?: Words) {
    super([message, ...others.map((p) => p.message)].join('; '));
    this.problems = [words === undefined ? { field, message } : { field, message, words }, ...others];
  }

  /** One error naming every problem in `problems` (at least one). */
  static of(problems: readonly FieldProblem[]): InputError {
    const [first, ...others] = problems;
    if (!first) throw new TypeError('InputError.of needs a problem');
    return new InputError(first.field, first.message, others, first.words);
  }

  /** A problem of one field, in English and in the catalogs' words. */
  static worded(field: string, message: string, words: Words): InputError {
    return new InputError(field, message, [], words);
  }
}

/**
 * Runs every check, even after one fails, and returns their values in order; or throws one
 * `InputError` holding the problems of all that failed. Anything else a check throws passes.
 */
export function checkAll<T extends readonly unknown[]>(...checks: { [K in keyof T]: () => T[K] }): T {
  const values: unknown[] = [];
  const problems: FieldProblem[] = [];
  for (const check of checks as ReadonlyArray<() => unknown>) {
    try {
      values.push(check());
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      problems.push(...error.problems);
      values.push(undefined);
    }
  }
  if (problems.length > 0) throw InputError.of(problems);
  return values as unknown as T;
}

/** A write that would break uniqueness (a taken username, say). */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/**
 * What an app is told of a user's account that is not active (INTERFACE section 4), wherever it
 * meets it: a code or a refresh token at the token endpoint (`invalid_grant`), a request on its
 * way when the account left (`access_denied`), a token at the resource API (`invalid_token`). One
 * wording for the one fact, which says that authorizing again will not help.
 */
export const ACCOUNT_NOT_ACTIVE = 'The account is not active (suspended, banned or deleted): none of its tokens work, and authorizing again or making a new token will not help while it is not active.';

/**
 * The account is not `active`, and what was asked would act for it (a personal token, an app it
 * owns): nothing is made for an unusable account, since making it active again must revive
 * nothing that acts for it (INTERFACE section 4).
 */
export class AccountUnusableError extends Error {
  override readonly name = 'AccountUnusableError';
}

/** The database holds sealed keys and KEYS_SECRET is missing or does not open them: no start. */
export class KeysSecretError extends Error {
  override readonly name = 'KeysSecretError';
}

/**
 * A stored signing key that no instance can sign with: its row holds no key of its algorithm, or
 * not the key its public JWK publishes. The message names the fault and never quotes the row.
 */
export class SigningKeyDamagedError extends Error {
  override readonly name = 'SigningKeyDamagedError';
}
