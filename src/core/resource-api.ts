/**
 * The resource API v1 (seed sections 2.2–2.5 and 4.4, INTERFACE section 7): what each endpoint
 * answers, shaped from the stores. HTTP, schemas and serialization live in src/http/routes/api.
 */
import { OAuthError } from './errors.js';
import type { Post, Stores, User } from './ports.js';
import type { Scope } from './scopes.js';
import { formatLocalTimestamp } from './time.js';
import type { SiteUrls } from './urls.js';

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
export const EXCERPT_MAX_LENGTH = 140;

/** Seed table 2.2. */
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
    username: user.username,
    avatarUrl: urls.avatar(user.id),
    bio: user.bio,
    member: user.member,
    level: user.level,
    xp: user.xp,
    profileUrl: urls.profile(user.username),
    createdAt: formatLocalTimestamp(user.createdAt),
  };
}

export function postItemOf(post: Post, urls: SiteUrls): PostItem {
  return {
    id: post.id,
    title: post.title,
    excerpt: excerpts.excerptOf(post.body),
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

/**
 * `page` (integer ≥ 0, default 0) and `size` (integer ≥ 1, default 20, above 50 taken as 50),
 * as INTERFACE section 7 says. Anything else is 400 `invalid_request`.
 */
export function parsePaging(query: { page?: unknown; size?: unknown }): Paging {
  const page = integerParameter('page', query.page, DEFAULT_PAGE_INDEX, 0);
  const size = integerParameter('size', query.size, DEFAULT_PAGE_SIZE, 1);
  return { page, size: Math.min(size, MAX_PAGE_SIZE) };
}

function integerParameter(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !DIGITS.test(value) || Number(value) < min) {
    throw new OAuthError('invalid_request', `${name} must be an integer of ${min} or more.`);
  }
  return Number(value);
}

/** Tags inside a line of text: removing them must not split a word. Every other tag becomes a space. */
const INLINE_TAGS = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'i', 'ins', 'kbd', 'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var']);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

/** Markup out, text in: HTML tags and entities, and the common Markdown constructs. */
export function plainText(markup: string): string {
  return markup
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<\/?([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g, (_tag, name: string) => (INLINE_TAGS.has(name.toLowerCase()) ? '' : ' '))
    .replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+|#39);/g, (whole, name: string) => {
      if (name.startsWith('#x')) return safeCodePoint(parseInt(name.slice(2), 16)) ?? whole;
      if (name.startsWith('#')) return safeCodePoint(parseInt(name.slice(1), 10)) ?? whole;
      return ENTITIES[name] ?? whole;
    })
    .replace(/^ {0,3}(```|~~~).*$/gm, ' ') // code fence lines (their content stays, as text)
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // images: their alt text
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1') // links: their text
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1') // reference links
    .replace(/^ {0,3}\[[^\]]+\]:\s+\S+.*$/gm, ' ') // link reference definitions
    .replace(/^ {0,3}#{1,6}\s+/gm, '') // headings
    .replace(/^ {0,3}(?:[-*_] *){3,}$/gm, ' ') // horizontal rules
    .replace(/^ {0,3}>+ ?/gm, '') // block quotes
    .replace(/^ {0,3}(?:[-*+]|\d{1,9}[.)]) +/gm, '') // list markers
    .replace(/`+([^`]*)`+/g, '$1') // inline code
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '$2') // strong
    .replace(/(?<![\w*])([*_])(?=\S)([^*_\n]*?\S)\1(?![\w*])/g, '$2') // emphasis
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '$1') // strikethrough
    .replace(/\s+/g, ' ')
    .trim();
}

function safeCodePoint(code: number): string | undefined {
  return Number.isInteger(code) && code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
    ? String.fromCodePoint(code) : undefined;
}

/**
 * Excerpts already made, by the body they were made from: making one runs a score of regular
 * expressions over the whole body, the largest cost of a page of posts (issue 8), and an excerpt
 * is a function of the body alone, so a body seen before needs none. Bounded by the characters
 * of the bodies held; the oldest go first.
 */
export class ExcerptMemo {
  private readonly made = new Map<string, string>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  /** Characters of the bodies held, never above the bound. */
  get heldChars(): number {
    return this.chars;
  }

  excerptOf(body: string): string {
    const known = this.made.get(body);
    if (known !== undefined) return known;
    const made = excerpt(body);
    this.made.set(body, made);
    this.chars += body.length;
    for (const oldest of this.made.keys()) {
      if (this.chars <= this.maxChars) break;
      this.made.delete(oldest);
      this.chars -= oldest.length;
    }
    return made;
  }
}

/** About 2 MB of bodies: the recent pages of a few hundred active authors. */
const excerpts = new ExcerptMemo(1_000_000);

/**
 * The plain text of a post body, at most 140 characters counting the "…" that ends a cut one,
 * cut at a word boundary (INTERFACE section 7). Lengths are UTF-16 units, and a cut never splits
 * a surrogate pair, so the limit holds however a client counts.
 */
export function excerpt(body: string, max = EXCERPT_MAX_LENGTH): string {
  const text = plainText(body);
  if (text.length <= max) return text;
  let cut = max - 1;
  if (isLowSurrogate(text.charCodeAt(cut))) cut -= 1;
  const head = text.slice(0, cut);
  // Cut at the last space when the next character does not start a new word; a single word longer
  // than half the limit is cut inside it rather than leave an excerpt of a few characters.
  const space = head.lastIndexOf(' ');
  const atBoundary = text[cut] === ' ';
  const kept = atBoundary || space < max / 2 ? head : head.slice(0, space);
  return `${kept.replace(/[\s,;:.\-–—]+$/u, '')}…`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
