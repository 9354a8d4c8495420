/** Writing posts: the rules for a title, a body and a category, and the excerpt made from the body. */
import { InputError, checkAll } from '../errors.js';
import { type LaidOutBody, escapedText, isWhiteSpace, layOut, markdownText, typedText } from './markdown.js';
import { MarkdownTooCostly } from './markdown-work.js';
import type { Stores } from '../stores.js';
import type { Post, PostStatus } from './ports.js';
import { checkedText } from '../text.js';
import type { Clock } from '../time.js';

export const TITLE_MAX_LENGTH = 120;
export const BODY_MAX_LENGTH = 20_000;
export const CATEGORY_MAX_LENGTH = 40;
/** INTERFACE section 7. */
export const EXCERPT_MAX_LENGTH = 140;
/**
 * The most HTML a body may render to. Ordinary Markdown renders to two or three times its
 * length; a body made to multiply (one long link target used by thousands of references, a
 * table of thousands of columns) would otherwise make every view of its page megabytes long.
 */
export const BODY_HTML_MAX_LENGTH = 256 * 1024;

/** What is made from a body once, when it is written: the page's HTML and the API's excerpt. */
export interface RenderedBody {
  html: string;
  excerpt: string;
}

/**
 * A body's HTML and excerpt; an `InputError` when the HTML would pass `BODY_HTML_MAX_LENGTH` or
 * the body costs more work to parse than its length allows (markdown-work.ts).
 */
export function renderBody(body: string): RenderedBody {
  const { html, text } = laidOutOrRefused(body);
  if (html.length > BODY_HTML_MAX_LENGTH) {
    throw InputError.worded('body', `body makes a page of more than ${BODY_HTML_MAX_LENGTH / 1024} KB; repeat long links or wide tables less`,
      { key: 'community.bodyTooLarge', values: { max: BODY_HTML_MAX_LENGTH / 1024 } });
  }
  return { html, excerpt: cutExcerpt(text) };
}

function laidOutOrRefused(body: string): LaidOutBody {
  try {
    return layOut(body);
  } catch (error) {
    if (!(error instanceof MarkdownTooCostly)) throw error;
    throw InputError.worded('body', 'body takes too much work to lay out; nest fewer brackets and images, or make its tables smaller',
      { key: 'community.bodyTooCostly' });
  }
}

/**
 * A body written before bodies were Markdown, as `renderBody` makes it, or, when its page would
 * pass a bound, its text as it was shown then, with an excerpt of the text a reader sees in its
 * Markdown, or of the text as typed when even parsing it would cost too much.
 */
export function renderOlderBody(body: string): RenderedBody {
  let laidOut: LaidOutBody;
  try {
    laidOut = layOut(body);
  } catch (error) {
    if (!(error instanceof MarkdownTooCostly)) throw error;
    return { html: escapedText(body), excerpt: cutExcerpt(typedText(body)) };
  }
  const html = laidOut.html.length > BODY_HTML_MAX_LENGTH ? escapedText(body) : laidOut.html;
  return { html, excerpt: cutExcerpt(laidOut.text) };
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

/** What a post's form may ask for: the buttons send one of these. */
const POST_STATUSES: readonly PostStatus[] = ['published', 'draft'];

/**
 * The status a post's form asks for (`status`, sent by the button pressed), or `undefined` when
 * none was sent; any other value is an `InputError`, never read as one of the two: a script's
 * `Draft` would otherwise publish what its author meant to keep.
 */
export function checkedStatus(value: string | undefined): PostStatus | undefined {
  if (value === undefined) return undefined;
  if ((POST_STATUSES as readonly string[]).includes(value)) return value as PostStatus;
  throw InputError.worded('status', 'status must be published or draft', { key: 'community.statusUnknown' });
}

/** What people type into a post: the same rules for writing and editing. */
export interface PostText {
  title: string;
  body: string;
  category: string;
}

/**
 * The text checked, its category found or made, and the HTML and excerpt made from the body.
 * Every field is checked before the answer: one `InputError` names each field at fault (issue 18
 * item 10), so a form with an empty title and an empty body says both.
 */
async function preparedText(stores: Stores, text: PostText) {
  const [title, { body, html, excerpt }, category] = checkAll(
    () => checkedText('title', text.title, { kind: 'line', max: TITLE_MAX_LENGTH }),
    () => {
      const body = checkedText('body', text.body, { kind: 'text', max: BODY_MAX_LENGTH });
      return { body, ...renderBody(body) };
    },
    () => checkedText('category', text.category, { kind: 'name', max: CATEGORY_MAX_LENGTH }),
  );
  const { id: categoryId } = await stores.posts.ensureCategory(category);
  return { categoryId, title, body, bodyHtml: html, excerpt };
}

export async function writePost(stores: Stores, clock: Clock, draft: PostDraft): Promise<Post> {
  for (const field of ['likeCount', 'commentCount', 'viewCount'] as const) {
    const value = draft[field];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InputError(field, `${field} must be a whole number of 0 or more`);
    }
  }
  const post: Parameters<Stores['posts']['create']>[0] = {
    authorId: draft.authorId, ...(await preparedText(stores, draft)), status: draft.status,
  };
  if (draft.likeCount !== undefined) post.likeCount = draft.likeCount;
  if (draft.commentCount !== undefined) post.commentCount = draft.commentCount;
  if (draft.viewCount !== undefined) post.viewCount = draft.viewCount;
  return stores.posts.create(post, clock.now());
}

/**
 * Replaces a post's text, by its author only, and makes its HTML and excerpt again, so the page
 * and the API's `excerpt` say what the post now says. `publish` publishes a draft with the same
 * write. False when the author has no such post (another's, or deleted meanwhile).
 */
export async function editPost(
  stores: Stores, clock: Clock, edit: PostText & { postId: number; authorId: number; publish: boolean },
): Promise<boolean> {
  const text = await preparedText(stores, edit);
  return stores.posts.edit(edit.postId, edit.authorId, { ...text, publish: edit.publish }, clock.now());
}

/**
 * Publishes a draft of its author's: from now on it is public and listed by the API, dated now,
 * so it is the newest of the author's posts (INTERFACE section 7: newest first). False when the
 * author has no such draft (another's, already published, or deleted).
 */
export function publishPost(stores: Stores, clock: Clock, postId: number, authorId: number): Promise<boolean> {
  return stores.posts.publish(postId, authorId, clock.now());
}

/** Deletes a post of its author's, its comments and likes with it. False when the author has no such post. */
export function deletePost(stores: Stores, postId: number, authorId: number): Promise<boolean> {
  return stores.posts.delete(postId, authorId);
}

/**
 * The plain text of a post body as the post page shows it, at most 140 characters counting the
 * "…" that ends a cut one, cut at a word boundary (INTERFACE section 7). Made once, when the post
 * is written, in time linear in the body. Lengths are UTF-16 units, and a cut never splits a
 * character as a reader sees it (a surrogate pair, a flag, a joined emoji), so the limit holds
 * however a client counts.
 */
export function excerpt(body: string, max = EXCERPT_MAX_LENGTH): string {
  return cutExcerpt(markdownText(body), max);
}

function cutExcerpt(text: string, max = EXCERPT_MAX_LENGTH): string {
  if (text.length <= max) return text;
  const cut = graphemeBoundaryAtOrBefore(text, max - 1);
  const head = text.slice(0, cut);
  // Cut at the last space when the next character does not start a new word; a single word longer
  // than half the limit is cut inside it rather than leave an excerpt of a few characters.
  const space = head.lastIndexOf(' ');
  const atBoundary = text[cut] === ' ';
  const kept = atBoundary || space < max / 2 ? head : head.slice(0, space);
  return `${withoutTrailingPunctuation(kept)}…`;
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * The last place at or before `index` where a cut leaves every character whole: no surrogate
 * pair split, no flag, accented letter or joined emoji cut in two (Unicode UAX #29). Only the
 * text up to a little past `index` is looked at, so the cost does not grow with the body.
 */
function graphemeBoundaryAtOrBefore(text: string, index: number): number {
  let boundary = 0;
  for (const { index: start } of graphemes.segment(text.slice(0, index + 64))) {
    if (start > index) break;
    boundary = start;
  }
  if (boundary > 0) return boundary;
  // One character as a reader sees it is longer than the excerpt: cut inside it, but never between
  // the two halves of a surrogate pair.
  const last = text.charCodeAt(index - 1);
  return last >= 0xd800 && last <= 0xdbff ? index - 1 : index;
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
