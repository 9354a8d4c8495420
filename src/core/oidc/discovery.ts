/**
 * OpenID Provider metadata (OpenID Connect Discovery 1.0 section 3) and, with the same content,
 * RFC 8414 authorization server metadata. Every address is under the issuer (= BASE_URL).
 */
import { DPOP_ALGS } from '../oauth/dpop/proof.js';
import { SIGNING_ALGS } from './keys.js';
import { RESPONSE_MODES } from '../oauth/authorize/request.js';
import { ALL_SCOPES } from '../oauth/scopes.js';
import { LOCALES } from '../locales.js';

export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

/** What the site offers beyond the fixed metadata, as its settings say. */
export interface OfferedFeatures {
  /** CLIENT_ID_METADATA_DOCUMENTS. */
  readonly clientIdMetadataDocuments: boolean;
  /** DYNAMIC_REGISTRATION. */
  readonly dynamicRegistration: boolean;
}

export function providerMetadata(issuer: string, features: OfferedFeatures) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/api/oauth/token`,
    userinfo_endpoint: `${issuer}/api/oauth/userinfo`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    revocation_endpoint: `${issuer}/api/oauth/revoke`,
    introspection_endpoint: `${issuer}/api/oauth/introspect`,
    end_session_endpoint: `${issuer}/oauth/logout`,
    // RFC 9126 5: pushed authorization requests, required per client (never for all).
    pushed_authorization_request_endpoint: `${issuer}/api/oauth/par`,
    // RFC 8414 2, RFC 7591: where apps register themselves, unless DYNAMIC_REGISTRATION is off.
    ...(features.dynamicRegistration ? { registration_endpoint: `${issuer}/api/oauth/register` } : {}),
    require_pushed_authorization_requests: false,
    service_documentation: `${issuer}/docs`,
    scopes_supported: [...ALL_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: [...RESPONSE_MODES],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    introspection_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    id_token_signing_alg_values_supported: [...SIGNING_ALGS],
    subject_types_supported: ['public'],
    claims_supported: [
      'sub', 'iss', 'aud', 'azp', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'sid', 'amr',
      'preferred_username', 'name', 'picture', 'profile', 'locale', 'zoneinfo',
    ],
    prompt_values_supported: ['none', 'login', 'consent'],
    // OpenID Connect Discovery 1.0 section 3: the languages of the pages a person sees (INTERFACE section 12).
    ui_locales_supported: [...LOCALES],
    authorization_response_iss_parameter_supported: true,
    // OpenID Back-Channel Logout 1.0 section 2.1: logout tokens, with `sid` when the ended
    // session is known (and every id_token of a grant approved in a session carries it).
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    // RFC 9449 5.1: DPoP proofs are accepted at the token endpoint, the resource API and UserInfo.
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    // draft-ietf-oauth-client-id-metadata-document 5: a URL client_id names the app's document;
    // left out when the site does not accept them.
    ...(features.clientIdMetadataDocuments ? { client_id_metadata_document_supported: true } : {}),
  };
}
