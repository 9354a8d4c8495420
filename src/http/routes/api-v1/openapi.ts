/**
 * OpenAPI 3.1 description of the resource API, generated from the schema objects the routes
 * validate and serialize with (./schemas.ts) and from the endpoint table in core, so the
 * document cannot drift from what the service answers.
 */
import type { TSchema } from '@sinclair/typebox';
import { API_WINDOW_SECONDS, RETRY_AFTER_SECONDS } from '../../../core/api/limits.js';
import { API_BASE_PATH, API_ENDPOINTS, API_NAME, API_VERSION } from '../../../core/api/views.js';
import { RESOURCE_SCOPES, SCOPES } from '../../../core/oauth/scopes.js';
import {
  EndpointSchema, ErrorSchema, PageParameterSchema, PostItemSchema, PostPageSchema, ProfileSchema,
  ServiceInfoSchema, SizeParameterSchema,
} from './schemas.js';

/** A TypeBox schema as plain JSON Schema (TypeBox's symbol keys dropped). */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

const COMPONENTS: Record<string, TSchema> = {
  Profile: ProfileSchema,
  PostItem: PostItemSchema,
  PostPage: PostPageSchema,
  Endpoint: EndpointSchema,
  ServiceInfo: ServiceInfoSchema,
  Error: ErrorSchema,
};

/** Replaces every nested component by a `$ref` to it, so the document names each schema once. */
function withRefs(schema: TSchema, self: string): Record<string, unknown> {
  const replace = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(replace);
    if (node === null || typeof node !== 'object') return node;
    for (const [name, component] of Object.entries(COMPONENTS)) {
      if (node === component && name !== self) return { $ref: `#/components/schemas/${name}` };
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, replace(v)]));
  };
  return plain(replace(schema) as TSchema);
}

const SUCCESS: Record<string, { schema: string; summary: string; description: string }> = {
  '/': {
    schema: 'ServiceInfo',
    summary: 'Service info; checks that a token is valid',
    description: 'Any valid token: answers with the scopes the token holds and every endpoint with its required scope.',
  },
  '/me': {
    schema: 'Profile',
    summary: "The token user's profile",
    description: 'Never contains e-mail, account status or other private fields.',
  },
  '/me/posts': {
    schema: 'PostPage',
    summary: "The token user's published posts",
    description: 'Published posts only, newest first, ties by id (higher first). Drafts never appear.',
  },
};

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: `Requests allowed per token in each ${API_WINDOW_SECONDS}-second window.`, schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the current window ends, epoch seconds.', schema: { type: 'integer' } },
  'RateLimit-Policy': {
    description: `draft-ietf-httpapi-ratelimit-headers-11 quota policy: \`"per-token";q=LIMIT;w=${API_WINDOW_SECONDS}\` (q is X-RateLimit-Limit). A 429 for the address carries \`"per-address"\` instead.`,
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'draft-ietf-httpapi-ratelimit-headers-11 service limit: `"per-token";r=REMAINING;t=SECONDS` (r is X-RateLimit-Remaining, t the seconds until X-RateLimit-Reset).',
    schema: { type: 'string' },
  },
};

function errorResponse(description: string, headers: Record<string, unknown> = {}) {
  return { description, headers, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
}

export function openApiDocument(baseUrl: string): Record<string, unknown> {
  const scopes = Object.fromEntries(RESOURCE_SCOPES.map((s) => [s, `${SCOPES[s].allows} Not: ${SCOPES[s].doesNotAllow}`]));
  const wwwAuthenticate = {
    'WWW-Authenticate': { description: 'RFC 6750 challenge, e.g. Bearer realm="api", error="invalid_token".', schema: { type: 'string' } },
  };
  const paths: Record<string, unknown> = {};
  for (const endpoint of API_ENDPOINTS) {
    const relative = endpoint.path.slice(API_BASE_PATH.length);
    const success = SUCCESS[relative]!;
    const security = endpoint.scope === ''
      ? [{ oauth2: [] }, { personalToken: [] }]
      : [{ oauth2: [endpoint.scope] }, { personalToken: [endpoint.scope] }];
    const responses: Record<string, unknown> = {
      200: {
        description: 'Success.',
        headers: RATE_LIMIT_HEADERS,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${success.schema}` } } },
      },
      401: errorResponse('`invalid_token`: the token is missing, malformed, unknown, expired or revoked, or its account is not active. Refresh, or authorize again; not while the account is not active, which `error_description` says: nothing helps until it is active again.', wwwAuthenticate),
      429: errorResponse('`rate_limited`: more requests this minute than the limit. Wait `Retry-After` seconds.', {
        ...RATE_LIMIT_HEADERS,
        'Retry-After': { description: `Always ${RETRY_AFTER_SECONDS}.`, schema: { type: 'integer', const: RETRY_AFTER_SECONDS } },
      }),
    };
    if (endpoint.scope !== '') {
      responses[403] = errorResponse(`\`insufficient_scope\`: the token lacks \`${endpoint.scope}\`.`, { ...RATE_LIMIT_HEADERS, ...wwwAuthenticate });
    }
    const operation: Record<string, unknown> = {
      operationId: relative === '/' ? 'getServiceInfo' : relative === '/me' ? 'getProfile' : 'listMyPosts',
      summary: success.summary,
      description: `${success.description} Required scope: ${endpoint.scope === '' ? 'none (any valid token)' : endpoint.scope}.`,
      security,
      responses,
    };
    if (relative === '/me/posts') {
      operation.parameters = [
        { name: 'page', in: 'query', required: false, schema: plain(PageParameterSchema) },
        { name: 'size', in: 'query', required: false, schema: plain(SizeParameterSchema) },
      ];
      responses[400] = errorResponse('`invalid_request`: `page` or `size` is not a whole number in range.');
    }
    paths[relative] = { get: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: API_NAME,
      version: API_VERSION,
      description: `Read-only API for a user's profile and published posts. Guide: ${baseUrl}/docs`,
    },
    servers: [{ url: `${baseUrl}${API_BASE_PATH}` }],
    externalDocs: { url: `${baseUrl}/docs` },
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, withRefs(schema, name)])),
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'An access token (svco_…) from the authorization code flow with PKCE, sent as Authorization: Bearer; a DPoP-bound one (token_type DPoP, RFC 9449) as Authorization: DPoP with a DPoP proof header.',
          flows: {
            authorizationCode: {
              authorizationUrl: `${baseUrl}/oauth/authorize`,
              tokenUrl: `${baseUrl}/api/oauth/token`,
              refreshUrl: `${baseUrl}/api/oauth/token`,
              scopes,
            },
          },
        },
        personalToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'A personal token (svcp_…) created under Settings → API tokens, with the scopes chosen there.',
        },
      },
    },
  };
}
