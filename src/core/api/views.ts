/**
 * The resource API v1 (seed sections 2.2–2.5 and 4.4, INTERFACE section 7): what each endpoint
 * answers, shaped from the stores. HTTP, schemas and serialization live in src/http/routes/api.
 */
import { OAuthError, asErrorDescription } from '../errors.js';
import type { User } from '../accounts/ports.js';
import type { PostSummary } from '../community/ports.js';
import type { Stores } from '../stores.js';
import type { Scope } from '../oauth/scopes.js';
import { formatLocalTimestamp } from '../time.js';
import type { SiteUrls } from '../urls.js';

export const API_VERSION = 'v1';
export const API_BASE_PATH = '/api/open/v1';
export const API_NAME = 'Community Open API';

/** Seed table 4.4: every endpoint, its full path and the scope it needs (`''`: any valid token). */
export const API_ENDPOINTS: ReadonlyArray<{ method: 'GET'; path: string; scope: Scope | '' }> = [
  { method: 'GET', path: `${API_BASE_PATH}/`, scope: '' },
  { method: 'GET', path: `${API_BASE_PATH}/me`, scope: 'profile:read' },
  { method: 'GET', path: `${API_BASE_PATH}/me/posts`, scope: 'posts:read' },
];

/** Seed section 8 and INTERFACE section 7. */
export const DEFAULT_PAGE_INDEX = 0;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 50;

/** Seed table 2.2; `username` is its "Display name", the nickname (INTERFACE section 12). */
export interface Profile {
  id: number;
  username: string;
  avatarUrl: string;
  bio: string;
  member: boolean;
  level: number;
  xp: number;
  profileUrl: string;
  createdAt: string;
}

/** Seed table 2.3. */
export interface PostItem {
  id: number;
  title: string;
  excerpt: string;
  url: string;
  categoryName: string;
  createdAt: string;
  likeCount: number;
  commentCount: number;
  viewCount: number;
}

/** Seed table 2.4. */
export interface PostPage {
  items: PostItem[];
  page: number;
  size: number;
  totalElements: number;
  totalPages: number;
}

/** Seed table 2.5. */
export interface ServiceInfo {
  name: string;
  version: string;
  scopes: string[];
  endpoints: Array<{ method: string; path: string; scope: string }>;
  docs: string;
}

export function profileOf(user: User, urls: SiteUrls): Profile {
  return {
    id: user.id,
    // Seed 2.2 calls this field the display name and its scope the "Nickname"; the sign-in handle
    // stays in `profileUrl` and in the id_token's `preferred_username`.
    username: user.nickname,
    avatarUrl: urls.avatar(user.id),
    bio: user.bio,
    member: user.member,
    level: user.level,
    xp: user.xp,
    profileUrl: urls.profile(user.username),
    createdAt: formatLocalTimestamp(user.createdAt),
  };
}

/** Seed table 2.3; the excerpt is the one stored when the post was written. */
export function postItemOf(post: PostSummary, urls: SiteUrls): PostItem {
  return {
    id: post.id,
    title: post.title,
    excerpt: post.excerpt,
    url: urls.post(post.id),
    categoryName: post.categoryName,
    createdAt: formatLocalTimestamp(post.createdAt),
    likeCount: post.likeCount,
    commentCount: post.commentCount,
    viewCount: post.viewCount,
  };
}

export function serviceInfo(scopes: readonly string[], urls: SiteUrls): ServiceInfo {
  return {
    name: API_NAME,
    version: API_VERSION,
    scopes: [...scopes],
    endpoints: API_ENDPOINTS.map((e) => ({ ...e })),
    docs: urls.docs(),
  };
}

/** One page of the user's published posts, newest first, ties by id (INTERFACE section 7). */
export async function readPosts(stores: Stores, userId: number, paging: Paging, urls: SiteUrls): Promise<PostPage> {
  const { items, total } = await stores.posts.listPublishedByAuthor(userId, paging.page * paging.size, paging.size);
  return {
    items: items.map((post) => postItemOf(post, urls)),
    page: paging.page,
    size: paging.size,
    totalElements: total,
    totalPages: Math.ceil(total / paging.size),
  };
}

export interface Paging {
  page: number;
  /** The size in effect: at most `MAX_PAGE_SIZE`. */
  size: number;
}

const DIGITS = /^[0-9]{1,9}$/;
/** The largest `page` or `size` read: nine digits, so every value is an exact integer. */
export const MAX_PAGING_VALUE = 999_999_999;

/**
 * `page` (integer ≥ 0, default 0) and `size` (integer ≥ 1, default 20, above 50 taken as 50),
 * as INTERFACE section 7 says, in ASCII digits, at most nine. Anything else is 400
 * `invalid_request`, saying which parameter and what it takes.
 */
export function parsePaging(query: { page?: unknown; size?: unknown }): Paging {
  const page = integerParameter('page', query.page, DEFAULT_PAGE_INDEX, 0);
  const size = integerParameter('size', query.size, DEFAULT_PAGE_SIZE, 1);
  return { page, size: Math.min(size, MAX_PAGE_SIZE) };
}

function integerParameter(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (Array.isArray(value)) throw new OAuthError('invalid_request', `${name} was given more than once: send it once.`);
  if (typeof value !== 'string' || !DIGITS.test(value) || Number(value) < min) {
    // RFC 6749 5.2, RFC 6750 3: no quote or backslash in an error_description, so the value sent is
    // quoted with apostrophes, in the characters it allows (`asErrorDescription`).
    throw new OAuthError('invalid_request', `${name} must be a whole number from ${min} to ${MAX_PAGING_VALUE}, in digits only (got '${asErrorDescription(String(value).slice(0, 20))}').`);
  }
  return Number(value);
}
