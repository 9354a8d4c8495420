/** Writing posts: the rules for a title, a body and a category. */
import { InputError } from './errors.js';
import type { Post, PostStatus, Stores } from './ports.js';
import { checkedText } from './text.js';
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
  const body = checkedText('comment', text, { kind: 'text', max: COMMENT_MAX_LENGTH });
  return stores.posts.addComment(postId, authorId, body, clock.now());
}
