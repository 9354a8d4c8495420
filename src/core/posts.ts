/** Writing posts: the rules for a title, a body and a category, and the excerpt made from the body. */
import { InputError } from './errors.js';
import { isWhiteSpace, markdownText } from './markdown.js';
import type { Post, PostStatus, Stores } from './ports.js';
import { checkedText } from './text.js';
import type { Clock } from './time.js';

export const TITLE_MAX_LENGTH = 120;
export const BODY_MAX_LENGTH = 20_000;
export const CATEGORY_MAX_LENGTH = 40;
/** INTERFACE section 7. */
export const EXCERPT_MAX_LENGTH = 140;

export interface PostDraft {
  authorId: number;
  title: string;
  body: string;
  category: string;
  status: PostStatus;
  likeCount?: number;
  commentCount?: number;
  viewCount?: number;
}

export async function writePost(stores: Stores, clock: Clock, draft: PostDraft): Promise<Post> {
  const title = checkedText('title', draft.title, { kind: 'line', max: TITLE_MAX_LENGTH });
  const body = checkedText('body', draft.body, { kind: 'text', max: BODY_MAX_LENGTH });
  const category = checkedText('category', draft.category, { kind: 'name', max: CATEGORY_MAX_LENGTH });
  for (const field of ['likeCount', 'commentCount', 'viewCount'] as const) {
    const value = draft[field];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InputError(field, `${field} must be a whole number of 0 or more`);
    }
  }
  const { id: categoryId } = await stores.posts.ensureCategory(category);
  const post: Parameters<Stores['posts']['create']>[0] = {
    authorId: draft.authorId, categoryId, title, body, excerpt: excerpt(body), status: draft.status,
  };
  if (draft.likeCount !== undefined) post.likeCount = draft.likeCount;
  if (draft.commentCount !== undefined) post.commentCount = draft.commentCount;
  if (draft.viewCount !== undefined) post.viewCount = draft.viewCount;
  return stores.posts.create(post, clock.now());
}

/**
 * The plain text of a post body as the post page shows it, at most 140 characters counting the
 * "…" that ends a cut one, cut at a word boundary (INTERFACE section 7). Made once, when the post
 * is written, in time linear in the body. Lengths are UTF-16 units, and a cut never splits a
 * surrogate pair, so the limit holds however a client counts.
 */
export function excerpt(body: string, max = EXCERPT_MAX_LENGTH): string {
  const text = markdownText(body);
  if (text.length <= max) return text;
  let cut = max - 1;
  if (isLowSurrogate(text.charCodeAt(cut))) cut -= 1;
  const head = text.slice(0, cut);
  // Cut at the last space when the next character does not start a new word; a single word longer
  // than half the limit is cut inside it rather than leave an excerpt of a few characters.
  const space = head.lastIndexOf(' ');
  const atBoundary = text[cut] === ' ';
  const kept = atBoundary || space < max / 2 ? head : head.slice(0, space);
  return `${withoutTrailingPunctuation(kept)}…`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Characters an excerpt does not end on before its "…": white space and , ; : . - – — */
const TRAILING = new Set([0x2c, 0x3b, 0x3a, 0x2e, 0x2d, 0x2013, 0x2014]);

function withoutTrailingPunctuation(text: string): string {
  let end = text.length;
  while (end > 0 && (TRAILING.has(text.charCodeAt(end - 1)) || isWhiteSpace(text.charCodeAt(end - 1)))) end -= 1;
  return text.slice(0, end);
}

export const COMMENT_MAX_LENGTH = 2000;

/** A comment on a published post; the post's `commentCount` moves with it. */
export async function commentOnPost(stores: Stores, clock: Clock, postId: number, authorId: number, text: string) {
  const body = checkedText('comment', text, { kind: 'text', max: COMMENT_MAX_LENGTH });
  return stores.posts.addComment(postId, authorId, body, clock.now());
}
