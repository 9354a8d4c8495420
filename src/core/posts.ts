/** Writing posts: the rules for a title, a body and a category. */
import { InputError } from './errors.js';
import type { Post, PostStatus, Stores } from './ports.js';
import type { Clock } from './time.js';

export const TITLE_MAX_LENGTH = 120;
export const BODY_MAX_LENGTH = 20_000;
export const CATEGORY_MAX_LENGTH = 40;

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
  const title = draft.title.trim();
  const body = draft.body.trim();
  const category = draft.category.trim();
  if (title.length < 1 || title.length > TITLE_MAX_LENGTH) {
    throw new InputError('title', `title must be 1 to ${TITLE_MAX_LENGTH} characters`);
  }
  if (body.length < 1 || body.length > BODY_MAX_LENGTH) {
    throw new InputError('body', `body must be 1 to ${BODY_MAX_LENGTH} characters`);
  }
  if (category.length < 1 || category.length > CATEGORY_MAX_LENGTH) {
    throw new InputError('category', `category must be 1 to ${CATEGORY_MAX_LENGTH} characters`);
  }
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
  const body = text.trim();
  if (body.length < 1 || body.length > COMMENT_MAX_LENGTH) {
    throw new InputError('comment', `comment must be 1 to ${COMMENT_MAX_LENGTH} characters`);
  }
  return stores.posts.addComment(postId, authorId, body, clock.now());
}
