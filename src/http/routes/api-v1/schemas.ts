/**
 * The resource API's schemas (seed tables 2.2–2.5, INTERFACE sections 6 and 7). The routes use
 * them as response schemas, so fast-json-stringify writes exactly these fields and nothing else,
 * and the OpenAPI document is generated from the same objects, so the two cannot drift.
 */
import { type Static, Type } from '@sinclair/typebox';
import { DEFAULT_PAGE_INDEX, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_PAGING_VALUE } from '../../../core/api/views.js';

/** Seed section 8: ISO-8601 local time in UTC+8 without offset, e.g. `2026-11-22T08:30:48`. */
const LocalTimestamp = Type.String({
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$',
  description: 'Local time in UTC+8, ISO-8601 without offset, e.g. 2026-11-22T08:30:48.',
  examples: ['2026-11-22T08:30:48'],
});

const AbsoluteUrl = (description: string) => Type.String({ format: 'uri', description });

export const ProfileSchema = Type.Object({
  id: Type.Integer({ description: 'User identifier.' }),
  username: Type.String({ description: 'Display name: the nickname the user chose, in any script (e.g. 林小伟); the username when none is set. Not unique and not the sign-in name: identify users by `id`; `profileUrl` carries the username.' }),
  avatarUrl: AbsoluteUrl('Avatar image address.'),
  bio: Type.String({ description: 'One-line introduction; empty when unset.' }),
  member: Type.Boolean({ description: 'Membership status.' }),
  level: Type.Integer({ description: 'User level.' }),
  xp: Type.Integer({ description: 'Experience points.' }),
  profileUrl: AbsoluteUrl("Address of the user's public profile page."),
  createdAt: LocalTimestamp,
}, { additionalProperties: false, title: 'Profile', description: 'The profile of the user the token belongs to. Never contains e-mail, account status or other private fields.' });

export const PostItemSchema = Type.Object({
  id: Type.Integer({ description: 'Post identifier.' }),
  title: Type.String(),
  excerpt: Type.String({ maxLength: 140, description: 'The plain text of the Markdown body, made when the post was written; at most 140 characters, a cut one ends with "…".' }),
  url: AbsoluteUrl('Address of the post page.'),
  categoryName: Type.String({ description: "Name of the post's category." }),
  createdAt: LocalTimestamp,
  likeCount: Type.Integer({ minimum: 0 }),
  commentCount: Type.Integer({ minimum: 0 }),
  viewCount: Type.Integer({ minimum: 0 }),
}, { additionalProperties: false, title: 'PostItem', description: 'One published post of the user, as a list shows it: an excerpt, not the body.' });

export const PostPageSchema = Type.Object({
  items: Type.Array(PostItemSchema, { description: 'Published posts, newest first, ties by id (higher first).' }),
  page: Type.Integer({ minimum: 0, description: 'Zero-based page index echoed back.' }),
  size: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, description: `Page size in effect (a requested size above ${MAX_PAGE_SIZE} is ${MAX_PAGE_SIZE}).` }),
  totalElements: Type.Integer({ minimum: 0, description: "Total number of the user's published posts." }),
  totalPages: Type.Integer({ minimum: 0, description: 'Total number of pages; 0 when there are no posts.' }),
}, { additionalProperties: false, title: 'PostPage', description: "A page of the user's published posts." });

export const EndpointSchema = Type.Object({
  method: Type.String(),
  path: Type.String({ description: 'Full path starting with /api/open/v1.' }),
  scope: Type.String({ description: 'The scope required; empty when any valid token will do.' }),
}, { additionalProperties: false, title: 'Endpoint' });

export const ServiceInfoSchema = Type.Object({
  name: Type.String({ description: 'Human-readable name of the API.' }),
  version: Type.String({ description: 'Always v1 here.' }),
  scopes: Type.Array(Type.String(), { description: 'Scopes held by the presented token.' }),
  endpoints: Type.Array(EndpointSchema),
  docs: AbsoluteUrl('Address of the developer documentation.'),
}, { additionalProperties: false, title: 'ServiceInfo', description: 'The API: the scopes the token holds, and every endpoint with the scope it needs.' });

export const ErrorSchema = Type.Object({
  error: Type.Unsafe<string>({
    type: 'string',
    enum: ['invalid_request', 'invalid_token', 'insufficient_scope', 'not_found', 'rate_limited', 'server_error', 'temporarily_unavailable'],
    description: 'Error code (INTERFACE section 6).',
  }),
  error_description: Type.String({ description: 'What went wrong, for a developer to read.' }),
}, { additionalProperties: false, title: 'Error' });

/** How `page` and `size` are described to clients: integers (the parser accepts digits only). */
export const PageParameterSchema = Type.Integer({ minimum: 0, maximum: MAX_PAGING_VALUE, default: DEFAULT_PAGE_INDEX, description: 'Zero-based page index.' });
export const SizeParameterSchema = Type.Integer({
  minimum: 1, maximum: MAX_PAGING_VALUE, default: DEFAULT_PAGE_SIZE,
  description: `Page size; above ${MAX_PAGE_SIZE} the size in effect is ${MAX_PAGE_SIZE} (see \`size\` in the answer).`,
});

export type ProfileBody = Static<typeof ProfileSchema>;
export type PostPageBody = Static<typeof PostPageSchema>;
export type ServiceInfoBody = Static<typeof ServiceInfoSchema>;
