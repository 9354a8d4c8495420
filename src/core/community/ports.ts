/** The storage the community needs: posts, their comments and categories. */
import type { Page } from '../stores.js';
import type { Instant } from '../time.js';

export type PostStatus = 'published' | 'draft';

/** A post as lists show it: everything but the body. */
export interface PostSummary {
  id: number;
  authorId: number;
  authorUsername: string;
  /** What pages and the API call the author (INTERFACE section 12); the username when none is set. */
  authorNickname: string;
  categoryId: number;
  categoryName: string;
  title: string;
  /** Plain text made from the body when the post was written (INTERFACE section 7). */
  excerpt: string;
  status: PostStatus;
  likeCount: number;
  commentCount: number;
  viewCount: number;
  createdAt: Instant;
  updatedAt: Instant;
}

/** A post as its page shows it. */
export interface Post extends PostSummary {
  /** Markdown (INTERFACE section 7). */
  body: string;
  /** The body rendered when the post was written: escaped, bounded HTML (`renderBody`). */
  bodyHtml: string;
}

export interface NewPost {
  authorId: number;
  categoryId: number;
  title: string;
  body: string;
  bodyHtml: string;
  excerpt: string;
  status: PostStatus;
  likeCount?: number;
  commentCount?: number;
  viewCount?: number;
}

/** What an edit replaces: the text and what is made from it at write time (`renderBody`). */
export interface PostEdit {
  categoryId: number;
  title: string;
  body: string;
  bodyHtml: string;
  excerpt: string;
  /** Publish a draft with the same write; a published post stays published either way. */
  publish: boolean;
}

/** Where a page read oldest first ends: the last row's time and id; the next page starts after it. */
export interface KeysetCursor {
  createdAt: Instant;
  id: number;
}

export interface Comment {
  id: number;
  postId: number;
  authorId: number;
  authorUsername: string;
  authorNickname: string;
  body: string;
  createdAt: Instant;
}

export interface Category {
  id: number;
  name: string;
}

/**
 * What is read for people to see (`findById`, `listPublishedByAuthor`, `listRecentPublished`,
 * `listComments`) is only what members whose account is active wrote, decided in the statement
 * that reads: any other status is unusable (INTERFACE section 4), and staff suspend a member to
 * stop what they wrote reaching people. Nothing is deleted: it all shows again once they are active.
 */
export interface PostStore {
  /** The category with this name (any letter case), created when it is new. */
  ensureCategory(name: string): Promise<Category>;
  listCategories(): Promise<Category[]>;
  /** The post as written, whatever its author's status. */
  create(post: NewPost, now: Instant): Promise<Post>;
  /** Post `id`, published or draft, while its author is active. */
  findById(id: number): Promise<Post | undefined>;
  /** Published posts of one author, newest first, ties by id (newest id first); none while the author is not active. */
  listPublishedByAuthor(authorId: number, offset: number, limit: number): Promise<Page<PostSummary>>;
  /** An author's drafts, for the author only. */
  listDraftsByAuthor(authorId: number): Promise<PostSummary[]>;
  /**
   * Up to `limit` posts of an author, published or draft, with their bodies, oldest first (ties by
   * id), from the one after `after` (keyset: a page costs the same however far in): for the
   * author's own data download, read a page at a time.
   */
  listAllByAuthor(authorId: number, after: KeysetCursor | undefined, limit: number): Promise<Post[]>;
  /** Up to `limit` comments an author wrote, oldest first (ties by id), from the one after `after`: for the author's own data download. */
  listCommentsByAuthor(authorId: number, after: KeysetCursor | undefined, limit: number): Promise<Comment[]>;
  /** Up to `limit` of the posts a member liked, and when, oldest first (ties by post), from the one after `after` (`id`: the post's): for the member's own data download. */
  listLikesBy(userId: number, after: KeysetCursor | undefined, limit: number): Promise<Array<{ postId: number; createdAt: Instant }>>;
  /** The newest published posts of authors who are active. */
  listRecentPublished(limit: number): Promise<PostSummary[]>;
  /**
   * Brings up to `batch` posts' mark of a hidden author (which lets `listRecentPublished` skip them
   * without reading them) to their authors' status as it is now; returns how many it changed, fewer
   * than `batch` once none is left. Safe beside any status change and another instance's pass.
   */
  syncHiddenFlags(batch: number): Promise<number>;
  /**
   * Replaces the text of a post of `authorId` in one conditional write; a draft published by it
   * is dated `now`. False when that author has no post `id` (another's, or deleted).
   */
  edit(id: number, authorId: number, edit: PostEdit, now: Instant): Promise<boolean>;
  /** Publishes a draft of `authorId`, dated `now`, in one conditional write; false when there is no such draft. */
  publish(id: number, authorId: number, now: Instant): Promise<boolean>;
  /** Deletes a post of `authorId` with its comments and likes; false when that author has no post `id`. */
  delete(id: number, authorId: number): Promise<boolean>;
  /**
   * Adds `views` (a count by post id) to the posts' view counts in one statement; a post deleted
   * meanwhile is left out (`ViewCounter.flush`).
   */
  addViews(views: ReadonlyMap<number, number>): Promise<void>;
  /** Likes once per user; returns whether this call added the like. */
  like(postId: number, userId: number, now: Instant): Promise<boolean>;
  addComment(postId: number, authorId: number, body: string, now: Instant): Promise<Comment>;
  /** A post's comments by members who are active, oldest first. */
  listComments(postId: number): Promise<Comment[]>;
}
