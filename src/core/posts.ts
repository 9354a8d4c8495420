/** Writing posts: the rules for a title, a body and a category. */
import { InputError } from './errors.js';
import type { Post, PostStatus, Stores } from './ports.js';
import type { Clock } from './time.js';

export const TITLE_MAX_LENGTH = 120;
export const BODY_MAX_LENGTH = 20_000;
export const CATEGORY_MAX_LENGTH = 40;

/**
 * Control characters a stored text may not hold: PostgreSQL text cannot hold NUL at all, and the
 * others have no place in what people write; a single line (a title, a category) holds no tab or
 * line break either.
 */
const CONTROLS = { text: /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/, line: /[\x00-\x1f\x7f]/ } as const;

/** `value` trimmed, 1 to `max` characters and free of control characters, or an InputError for `field`. */
function checkedText(field: string, value: string, max: number, kind: keyof typeof CONTROLS): string {
  const text = value.trim();
  if (text.length < 1 || text.length > max) throw new InputError(field, `${field} must be 1 to ${max} characters`);
  if (CONTROLS[kind].test(text)) throw new InputError(field, `${field} must not contain control characters`);
  return text;
}

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
  const title = checkedText('title', draft.title, TITLE_MAX_LENGTH, 'line');
  const body = checkedText('body', draft.body, BODY_MAX_LENGTH, 'text');
  const category = checkedText('category', draft.category, CATEGORY_MAX_LENGTH, 'line');
  for (const field of ['likeCount', 'commentCount', 'viewCount'] as const) {
    const value = draft[field];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InputError(field, `${field} must be a whole number of 0 or more`);
    }
  }
  const { id: categoryId } = await stores.posts.ensureCategory(category);
  const post: Parameters<Stores['posts']['create']>[0] = {
    authorId: draft.authorId, categoryId, title, body, status: draft.status,
  };
  if (draft.likeCount !== undefined) post.likeCount = draft.likeCount;
  if (draft.commentCount !== undefined) post.commentCount = draft.commentCount;
  if (draft.viewCount !== undefined) post.viewCount = draft.viewCount;
  return stores.posts.create(post, clock.now());
}

export const COMMENT_MAX_LENGTH = 2000;

/** A comment on a published post; the post's `commentCount` moves with it. */
export async function commentOnPost(stores: Stores, clock: Clock, postId: number, authorId: number, text: string) {
  const body = checkedText('comment', text, COMMENT_MAX_LENGTH, 'text');
  return stores.posts.addComment(postId, authorId, body, clock.now());
}
