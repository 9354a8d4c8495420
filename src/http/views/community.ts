/**
 * Community pages: home, public profile, a post, writing a post. A post body is Markdown rendered
 * with raw HTML shown as text; a card shows the excerpt stored with the post; comments are text.
 */
import type { User } from '../../core/accounts/ports.js';
import type { Category, Comment, Post, PostSummary } from '../../core/community/ports.js';
import { BODY_MAX_LENGTH, CATEGORY_MAX_LENGTH, COMMENT_MAX_LENGTH, TITLE_MAX_LENGTH } from '../../core/community/posts.js';
import { Html, html } from './html.js';
import { type FormErrors, control, errorSummary, fieldMessage } from './forms.js';
import { type PageContext, layout } from './layout.js';

/** The avatar's address on pages: versioned by the user's last change, so a new image is never hidden by a cached old one. */
export function avatarSrc(user: Pick<User, 'id' | 'updatedAt'>): string {
  return `/avatars/${user.id}?v=${user.updatedAt}`;
}

/** A time for people: UTC, to the minute, with the exact instant in `datetime`. */
export function when(instant: number | null): Html {
  if (instant === null) return html`<span class="muted">never</span>`;
  const iso = new Date(instant).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** Paragraphs from blank lines; every character escaped, so a body can never be markup. */
export function paragraphs(text: string): Html[] {
  return text.split(/\r?\n\s*\r?\n/).map((p) => p.trim()).filter((p) => p !== '').map((p) => html`<p>${p}</p>`);
}

/** "1 comment", "3 comments". */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function counts(post: PostSummary): Html {
  return html`<span>${plural(post.likeCount, 'like')}</span> · <span>${plural(post.commentCount, 'comment')}</span> · <span>${plural(post.viewCount, 'view')}</span>`;
}

function postCard(post: PostSummary, options: { showAuthor: boolean }): Html {
  return html`<article class="card post-card">
  <h2><a href="/posts/${post.id}">${post.title}</a></h2>
  <p class="meta">${options.showAuthor ? html`<img class="avatar" src="/avatars/${post.authorId}" alt="" width="24" height="24"> <a href="/u/${encodeURIComponent(post.authorUsername)}">${post.authorUsername}</a> · ` : ''}<span class="tag">${post.categoryName}</span> · ${when(post.createdAt)}</p>
  <p>${post.excerpt}</p>
  <p class="meta">${counts(post)}</p>
</article>`;
}

export function homePage(context: PageContext, posts: PostSummary[]): Html {
  return layout('Recent posts', context, html`<section class="intro">
  <h1>Recent posts</h1>
  ${context.user
    ? html`<p><a class="button" href="/posts/new">Write a post</a></p>`
    : html`<p>A community for sharing what you make. <a href="/signup">Create an account</a> or <a href="/login">sign in</a> to write, like and comment.</p>`}
</section>
${posts.length === 0 ? html`<p class="muted">Nothing published yet.</p>` : ''}
${posts.map((post) => postCard(post, { showAuthor: true }))}`);
}

export function profilePage(context: PageContext, user: User, posts: PostSummary[], drafts: PostSummary[]): Html {
  const own = context.user?.username === user.username;
  return layout(user.username, context, html`<section class="card profile">
  <img class="avatar" src="${avatarSrc(user)}" alt="Avatar of ${user.username}" width="96" height="96">
  <div>
    <h1>${user.username}</h1>
    ${user.bio ? html`<p>${user.bio}</p>` : html`<p class="muted">No bio yet.</p>`}
    <p class="meta"><span class="tag">Level ${user.level}</span> ${user.member ? html`<span class="tag member">Member</span>` : ''} · ${user.xp} XP · joined ${when(user.createdAt)}</p>
    ${own ? html`<p><a href="/settings/profile">Edit profile</a> · <a href="/posts/new">Write a post</a></p>` : ''}
  </div>
</section>
${own && drafts.length > 0 ? html`<h2>Your drafts</h2>
<p class="hint">Only you can see these.</p>
<ul>${drafts.map((d) => html`<li><a href="/posts/${d.id}">${d.title}</a> <span class="muted">(${d.categoryName})</span> · <a href="/posts/${d.id}/edit">Edit</a></li>`)}</ul>` : ''}
<h2>Published posts</h2>
${posts.length === 0 ? html`<p class="muted">No published posts yet.</p>` : posts.map((post) => postCard(post, { showAuthor: false }))}`);
}

/** What only the author sees on a post: publish a draft, edit, and delete (which asks first). */
function authorActions(context: PageContext, post: PostSummary): Html {
  return html`<div class="actions">
    ${post.status === 'draft' ? html`<form method="post" action="/posts/${post.id}/publish" class="inline">
      <input type="hidden" name="_csrf" value="${context.csrf}">
      <button type="submit">Publish</button>
    </form>` : ''}
    <a class="button secondary" href="/posts/${post.id}/edit">Edit</a>
    <a class="button secondary" href="/posts/${post.id}/delete">Delete</a>
  </div>`;
}

export interface PostPageState {
  comments: Comment[];
  error?: string | undefined;
  comment?: string | undefined;
}

export function postPage(context: PageContext, post: Post, state: PostPageState): Html {
  const draft = post.status === 'draft';
  return layout(post.title, context, html`<article class="card">
  ${draft ? html`<p class="notice">Draft: only you can see this post.</p>` : ''}
  <h1>${post.title}</h1>
  <p class="meta"><img class="avatar" src="/avatars/${post.authorId}" alt="" width="24" height="24"> <a href="/u/${encodeURIComponent(post.authorUsername)}">${post.authorUsername}</a> · <span class="tag">${post.categoryName}</span> · ${when(post.createdAt)}</p>
  <div class="post-body">${new Html(post.bodyHtml)}</div>
  <p class="meta">${counts(post)}${post.updatedAt > post.createdAt ? html` · edited ${when(post.updatedAt)}` : ''}</p>
  ${context.user?.username === post.authorUsername ? authorActions(context, post) : ''}
  ${context.user && !draft ? html`<form method="post" action="/posts/${post.id}/like" class="inline">
    <input type="hidden" name="_csrf" value="${context.csrf}">
    <button type="submit" class="secondary">Like</button>
  </form>` : ''}
</article>
${draft ? '' : html`<section aria-labelledby="comments-heading">
  <h2 id="comments-heading">Comments</h2>
  ${state.comments.length === 0 ? html`<p class="muted">No comments yet.</p>` : html`<ol class="comments">${state.comments.map((c) => html`<li class="card">
    <p class="meta"><a href="/u/${encodeURIComponent(c.authorUsername)}">${c.authorUsername}</a> · ${when(c.createdAt)}</p>
    ${paragraphs(c.body)}
  </li>`)}</ol>`}
  ${context.user ? html`<form method="post" action="/posts/${post.id}/comments" class="card">
    <input type="hidden" name="_csrf" value="${context.csrf}">
    ${state.error ? html`<p class="alert" role="alert" id="comment-error">${state.error}</p>` : ''}
    <label for="comment">Add a comment</label>
    <textarea id="comment" name="comment" required maxlength="${COMMENT_MAX_LENGTH}" rows="4" ${state.error ? html`aria-describedby="comment-error" aria-invalid="true"` : ''}>${state.comment ?? ''}</textarea>
    <div class="actions"><button type="submit">Comment</button></div>
  </form>` : html`<p><a href="/login?return_to=${encodeURIComponent(`/posts/${post.id}`)}">Sign in</a> to like or comment.</p>`}
</section>`}`);
}

export interface PostForm {
  title: string;
  category: string;
  body: string;
  /** Every field at fault, each named beside its control (issue 18 item 10). */
  errors?: FormErrors;
}

/**
 * The form that writes a post, or edits `editing`: a new post or a draft can be published or kept
 * as a draft; a published post is saved and stays published.
 */
export function newPostPage(context: PageContext, categories: Category[], form: PostForm, editing?: PostSummary): Html {
  const { errors } = form;
  const heading = editing ? 'Edit post' : 'Write a post';
  return layout(heading, context, html`<section class="card">
<h1>${heading}</h1>
${errorSummary(errors)}
<form method="post" action="${editing ? `/posts/${editing.id}/edit` : '/posts/new'}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="title">Title</label>
  <input type="text" id="title" name="title" value="${form.title}" required maxlength="${TITLE_MAX_LENGTH}" ${control(errors, 'title')}>
  ${fieldMessage(errors, 'title')}
  <label for="category">Category</label>
  <input type="text" id="category" name="category" value="${form.category}" list="categories" required maxlength="${CATEGORY_MAX_LENGTH}" ${control(errors, 'category', { hint: 'category-hint' })}>
  ${fieldMessage(errors, 'category')}
  <datalist id="categories">${categories.map((c) => html`<option value="${c.name}"></option>`)}</datalist>
  <p class="hint" id="category-hint">Pick an existing category or type a new one.</p>
  <label for="body">Text</label>
  <textarea id="body" name="body" required maxlength="${BODY_MAX_LENGTH}" rows="12" ${control(errors, 'body', { hint: 'body-hint' })}>${form.body}</textarea>
  ${fieldMessage(errors, 'body')}
  <p class="hint" id="body-hint">Markdown: a blank line between paragraphs, **bold**, *italic*, [a link](https://…), \`code\`. HTML is shown as it is typed.</p>
  <div class="actions">
    ${editing?.status === 'published'
      ? html`<button type="submit" name="status" value="published">Save changes</button>
    <a class="button secondary" href="/posts/${editing.id}">Cancel</a>`
      : html`<button type="submit" name="status" value="published">Publish</button>
    <button type="submit" name="status" value="draft" class="secondary">${editing ? 'Save draft' : 'Save as draft'}</button>`}
  </div>
</form>
</section>`);
}

/** The question before a post is deleted: nothing is deleted until this form is sent. */
export function deletePostPage(context: PageContext, post: PostSummary): Html {
  return layout('Delete post?', context, html`<section class="card narrow">
<h1>Delete “${post.title}”?</h1>
<p>${post.status === 'draft'
    ? 'This draft will be gone for good.'
    : html`The post will be gone for good, with its ${plural(post.commentCount, 'comment')} and ${plural(post.likeCount, 'like')}: its page answers “not found”, and apps no longer list it.`}
This cannot be undone.</p>
<form method="post" action="/posts/${post.id}/delete">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="confirm" value="delete">
  <div class="actions">
    <button type="submit" class="danger">Delete post</button>
    <a class="button secondary" href="/posts/${post.id}">Keep it</a>
  </div>
</form>
</section>`);
}
