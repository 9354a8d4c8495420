/**
 * RFC 7591 dynamic client registration at POST /api/oauth/register (INTERFACE section 13): an app
 * (an AI agent, typically) registers itself with no member involved. Its redirect URIs follow the
 * same rules as an app registered on the site (`registerClient`); it has no owner, is marked
 * self-registered, and the janitor deletes it when it got no grant within
 * `SELF_REGISTERED_GRACE_MS`. Only the metadata listed in `ClientMetadata` is read; any other
 * member of the request is ignored (RFC 7591 2: "the authorization server MUST ignore any client
 * metadata sent by the client that it does not understand").
 */
import { type Requester, siteShare } from '../addresses.js';
import type { AuditSink } from '../audit.js';
import { InputError, OAuthError, type FieldProblem, asErrorDescription } from '../errors.js';
import { rateLimitPolicyField, throttledHeaders } from '../rate-limit-fields.js';
import type { RateLimiter } from '../rate-limiter.js';
import type { Stores } from '../stores.js';
import { checkedText, trustClaimCheck } from '../text.js';
import type { Clock } from '../time.js';
import type { Locale, Translator } from '../locales.js';
import { siteNamesIn } from '../site-name.js';
import { APP_NAME_MAX, redirectTarget, registerClient, unreviewedNameRule } from './clients.js';
import type { ClientType } from './ports.js';
import { REGISTERED_SCOPES, type Scope, formatScope, permittedScopes } from './scopes.js';

/** INTERFACE section 13: the window of the per-address limit on registrations (REGISTRATIONS_PER_HOUR_PER_ADDRESS). */
export const REGISTRATION_WINDOW_SECONDS = 3600;

/** How long a self-registered app may go without a grant before the janitor deletes it (INTERFACE section 13). */
export const SELF_REGISTERED_GRACE_MS = 30 * 86_400_000;

/** RFC 7591 2: how the app authenticates at the token endpoint; `client_secret_basic` when it names none. */
const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
type AuthMethod = (typeof AUTH_METHODS)[number];

/** The grant types this service issues for; every app gets refresh tokens (INTERFACE section 3). */
const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

/** The registration's answer (RFC 7591 3.2.1): the client's id, its secret once, and the metadata as registered. */
export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_secret?: string;
  client_secret_expires_at?: 0;
  client_name: string;
  client_uri?: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  token_endpoint_auth_method: AuthMethod;
  grant_types: string[];
  response_types: ['code'];
  scope: string;
}

export interface RegistrationDeps {
  stores: Stores;
  clock: Clock;
  limiter: RateLimiter;
  audit: AuditSink;
  /**
   * REGISTRATIONS_PER_HOUR_PER_ADDRESS: registrations one address may make in
   * `REGISTRATION_WINDOW_SECONDS`; whether an app may instead be named by its own metadata
   * document (CLIENT_ID_METADATA_DOCUMENTS), which the refusal then offers, with the docs' address.
   */
  settings: { registrationsPerHourPerAddress: number; baseUrl: string; clientMetadata: { enabled: boolean } };
  /** The site's words, whose name in each language an app's own name may not claim (`unreviewedNameRule`). */
  words: (locale: Locale) => Translator;
}

/**
 * RFC 7591 3.2.2: a problem of the redirect URIs is `invalid_redirect_uri`, every other one
 * `invalid_client_metadata`; a request with both kinds gets the first code, and every problem
 * in the description, in RFC 6749 5.2's characters whatever the metadata held (an address in
 * Chinese, a quote: `asErrorDescription`).
 */
const REDIRECT_FIELDS = new Set(['redirect_uris', 'post_logout_redirect_uris']);

/** The metadata fields `registerClient`'s problems name, as RFC 7591 names them. */
const METADATA_NAMES: Readonly<Record<string, string>> = { name: 'client_name', homepage: 'client_uri' };

function metadataError(problems: readonly FieldProblem[]): OAuthError {
  const code = problems.some((p) => REDIRECT_FIELDS.has(p.field)) ? 'invalid_redirect_uri' : 'invalid_client_metadata';
  const description = problems.map(({ field, message }) => {
    const name = METADATA_NAMES[field];
    return name !== undefined && message.startsWith(`${field} `) ? name + message.slice(field.length) : message;
  }).join('; ');
  return new OAuthError(code, asErrorDescription(`${description}.`));
}

const invalid = (field: string, message: string): InputError => new InputError(field, message);

function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string`);
  return value;
}

function optionalStrings(body: Record<string, unknown>, field: string): string[] | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw invalid(field, `${field} must be an array of strings`);
  return value;
}

function authMethod(body: Record<string, unknown>): AuthMethod {
  const value = optionalString(body, 'token_endpoint_auth_method') ?? 'client_secret_basic';
  if (!(AUTH_METHODS as readonly string[]).includes(value)) {
    throw invalid('token_endpoint_auth_method', `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`);
  }
  return value as AuthMethod;
}

/**
 * RFC 7591 2.1: `code` is the one response type, and it goes with the `authorization_code` grant;
 * `refresh_token` may be named too. Refresh tokens are issued to every app, so the registered
 * grant types are always both.
 */
function checkFlow(body: Record<string, unknown>): void {
  const responseTypes = optionalStrings(body, 'response_types') ?? ['code'];
  if (responseTypes.length === 0 || responseTypes.some((type) => type !== 'code')) {
    throw invalid('response_types', 'response_types must be ["code"]: the authorization code flow is the only one');
  }
  const grantTypes = optionalStrings(body, 'grant_types') ?? ['authorization_code'];
  const unknown = grantTypes.filter((type) => !(GRANT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) throw invalid('grant_types', `grant_types may hold only ${GRANT_TYPES.join(' and ')}, not ${JSON.stringify(unknown[0]!.slice(0, 40))}`);
  if (!grantTypes.includes('authorization_code')) {
    throw invalid('grant_types', 'grant_types must include authorization_code, the grant of response type code (RFC 7591 2.1)');
  }
}

/**
 * The scopes the app may ask for: those its `scope` names among the ones a registration lists,
 * OpenID's `profile` counting as `profile:read` (whose data holds the profile claims). Scopes this
 * service does not know are left out, and a `scope` that names none it knows (or is empty, as the
 * MCP Inspector sends it) registers all of them: RFC 7591 2 lets the server replace a requested
 * value, and the list is only an upper bound, since the member consents to each request's own
 * scopes. The answer's `scope` says what was registered.
 */
function allowedScopes(body: Record<string, unknown>): Scope[] {
  const asked = new Set<string>((optionalString(body, 'scope') ?? '').split(/\s+/));
  if (asked.has('profile')) asked.add('profile:read');
  const allowed = REGISTERED_SCOPES.filter((s) => asked.has(s));
  return allowed.length === 0 ? [...REGISTERED_SCOPES] : allowed;
}

/**
 * A name for an app that gave none: where it sends people back to, which the consent page names
 * too. A host longer than a name keeps its end, the domain that owns it: cut to its start,
 * "aaaa….login.microsoftonline.com.evil.example" read as Microsoft's. A private-use scheme keeps
 * its start, the reversed domain that owns it (RFC 8252 7.1). "app" where the first redirect URI
 * is none the registration accepts, or its host makes no name (`_._` has no letter or digit).
 */
function defaultName(redirectUris: readonly string[]): string {
  try {
    const target = redirectTarget(redirectUris[0] ?? '');
    const name = 'host' in target
      ? (target.host.length > APP_NAME_MAX ? `…${target.host.slice(1 - APP_NAME_MAX)}` : target.host)
      : target.appScheme.slice(0, APP_NAME_MAX);
    return checkedText('client_name', name, { kind: 'name', max: APP_NAME_MAX });
  } catch {
    return 'app';
  }
}

/**
 * Registers the app `body` describes, for a request `askedBy`; throws an `OAuthError` in RFC 7591
 * 3.2.2's shape for bad metadata and 429 `rate_limited` past the hourly limit of the address's
 * share (`siteShare`: a page on another site that has its visitors' browsers register cannot
 * refuse the agents and tools behind their address). An IPv6 address counts by its /48, the
 * network one site or customer is given (RFC 6177 3; a tunnel broker hands one out free): counted
 * by its /64, a /48 registered 65,536 times the limit an hour, rows that stay 30 days (attack122).
 * Only a registration that succeeds keeps its count.
 */
export async function registerSelf(deps: RegistrationDeps, body: unknown, askedBy: Requester): Promise<RegisteredClient> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object of client metadata (RFC 7591 2), sent with Content-Type: application/json.');
  }
  const metadata = body as Record<string, unknown>;
  let read: { method: AuthMethod; redirectUris: string[]; postLogoutRedirectUris: string[]; name: string; named: boolean; homepageUrl: string; scopes: Scope[] };
  try {
    // The redirect URIs first: a request wrong in their shape and in another member's is `invalid_redirect_uri`.
    const redirectUris = optionalStrings(metadata, 'redirect_uris') ?? [];
    const postLogoutRedirectUris = optionalStrings(metadata, 'post_logout_redirect_uris') ?? [];
    const method = authMethod(metadata);
    checkFlow(metadata);
    // An empty name is no name (RFC 7591 2: every member is optional but the redirect URIs).
    const given = optionalString(metadata, 'client_name')?.trim() ?? '';
    read = {
      method, redirectUris, postLogoutRedirectUris,
      name: given || defaultName(redirectUris), named: given !== '',
      homepageUrl: optionalString(metadata, 'client_uri') ?? '',
      scopes: allowedScopes(metadata),
    };
  } catch (error) {
    if (error instanceof InputError) throw metadataError(error.problems);
    throw error;
  }

  // Nobody at the site answers for the app: a name it gives may not claim the site's trust
  // (RFC 7591 2: the server may reject a metadata value; `unreviewedNameRule`). The one it is given
  // for want of one is the host (or a native app's scheme, any text it likes) it sends people back
  // to, which the consent page's heading shows as its name: one that claims the trust
  // ("official.example", "community.verified:") gives the app no name but "app". A host's top-level
  // label and a reverse-domain scheme's are no words of it: "community-security.example" reads as
  // Community Security, "com.community.app" as Community App.
  const siteNames = siteNamesIn(deps.words);
  const claims = await trustClaimCheck();
  const labels = read.name.split('.');
  const readings = [read.name, labels.slice(0, -1).join('.'), labels.slice(1).join('.')];
  if (!read.named && readings.some((reading) => claims(reading, siteNames).length > 0)) read = { ...read, name: 'app' };
  const nameRule = read.named ? await unreviewedNameRule(siteNames) : undefined;
  const now = deps.clock.now();
  const key = `register:address:${siteShare(askedBy)}`;
  const quota = deps.settings.registrationsPerHourPerAddress;
  const decision = await deps.limiter.hit(key, quota, REGISTRATION_WINDOW_SECONDS, now);
  if (!decision.allowed) {
    // An agent behind a busy address (a carrier's NAT) has a way that needs no registration.
    const instead = deps.settings.clientMetadata.enabled
      ? ` Or name the app by a client ID metadata document instead, which needs no registration: its client_id is the https URL of a JSON document it publishes (${deps.settings.baseUrl}/docs#client-id-metadata-documents).`
      : '';
    throw new OAuthError('rate_limited', `At most ${quota} apps register from one address in an hour; retry after Retry-After seconds.${instead}`, {
      headers: {
        ...throttledHeaders('register-address', decision.resetAt - Math.floor(now / 1000)),
        'ratelimit-policy': rateLimitPolicyField({ name: 'register-address', quota, windowSeconds: REGISTRATION_WINDOW_SECONDS }),
      },
    });
  }
  const type: ClientType = read.method === 'none' ? 'public' : 'confidential';
  let registered;
  try {
    registered = await registerClient(deps.stores, deps.clock, {
      name: read.name, type, redirectUris: read.redirectUris, postLogoutRedirectUris: read.postLogoutRedirectUris,
      homepageUrl: read.homepageUrl, allowedScopes: read.scopes, selfRegistered: true, ...(nameRule === undefined ? {} : { nameRule }),
    });
  } catch (error) {
    // Nothing was registered: the address keeps its count (RateLimiter.refund).
    await deps.limiter.refund(key, REGISTRATION_WINDOW_SECONDS, now, decision);
    if (error instanceof InputError) throw metadataError(error.problems);
    throw error;
  }
  const { client, secret } = registered;
  deps.audit.record({ audit: 'client.registered', clientId: client.clientId, ownerId: null, type: client.type, via: 'oauth', address: askedBy.address }, askedBy.requestId);
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    // RFC 7591 3.2.1: 0, the secret does not expire.
    ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 as const }),
    client_name: client.name,
    ...(client.homepageUrl === '' ? {} : { client_uri: client.homepageUrl }),
    redirect_uris: client.redirectUris,
    ...(client.postLogoutRedirectUris.length === 0 ? {} : { post_logout_redirect_uris: client.postLogoutRedirectUris }),
    token_endpoint_auth_method: read.method,
    grant_types: [...GRANT_TYPES],
    response_types: ['code'],
    scope: formatScope(permittedScopes(client.allowedScopes)),
  };
}
