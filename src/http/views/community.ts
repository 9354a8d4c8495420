/**
 * Community pages: home, public profile, a post, writing a post. A post body is Markdown rendered
 * with raw HTML shown as text; a card shows the excerpt stored with the post; comments are text.
 */
import { nicknameDiffers } from '../../core/accounts/nicknames.js';
import type { User } from '../../core/accounts/ports.js';
import type { Category, Comment, Post, PostSummary } from '../../core/community/ports.js';
import { BODY_MAX_LENGTH, CATEGORY_MAX_LENGTH, COMMENT_MAX_LENGTH, TITLE_MAX_LENGTH } from '../../core/community/posts.js';
import { Html, html } from './html.js';
import { type FormErrors, control, errorList, errorSummary, fieldMessage, sentence, sentences } from './forms.js';
import { type PageContext, layout } from './layout.js';
import { chosenName, dateOf, isolated, personName, problemText, rich, timeOf } from './words.js';

/** The avatar's address on pages: versioned by the user's last change, so a new image is never hidden by a cached old one. */
export function avatarSrc(user: Pick<User, 'id' | 'updatedAt'>): string {
  return `/avatars/${user.id}?v=${user.updatedAt}`;
}

/** Paragraphs from blank lines; every character escaped, so a body can never be markup. */
export function paragraphs(text: string): Html[] {
  return text.split(/\r?\n\s*\r?\n/).map((p) => p.trim()).filter((p) => p !== '').map((p) => html`<p>${p}</p>`);
}

/** A post's or a comment's author, by nickname and, when it differs, @username (INTERFACE section 12). */
function authorLink(item: Pick<PostSummary, 'authorUsername' | 'authorNickname'>): Html {
  return html`<a href="/u/${encodeURIComponent(item.authorUsername)}">${personName({ username: item.authorUsername, nickname: item.authorNickname })}</a>`;
}

function counts(context: PageContext, post: PostSummary): Html {
  const { t } = context;
  return html`<span>${t.text('community.likes', { count: post.likeCount })}</span> · <span>${t.text('community.comments', { count: post.commentCount })}</span> · <span>${t.text('community.views', { count: post.viewCount })}</span>`;
}

/** A post in a list: recent ones add "3 minutes ago" to the full time. */
function postCard(context: PageContext, post: PostSummary, options: { showAuthor: boolean }): Html {
  return html`<article class="card post-card">
  <h2><a href="/posts/${post.id}">${post.title}</a></h2>
  <p class="meta">${options.showAuthor ? html`<img class="avatar" src="/avatars/${post.authorId}" alt="" width="24" height="24"> ${authorLink(post)} · ` : ''}<span class="tag">${chosenName(post.categoryName)}</span> · ${timeOf(context, post.createdAt, { relative: true })}</p>
  <p>${post.excerpt}</p>
  <p class="meta">${counts(context, post)}</p>
</article>`;
}

export function homePage(context: PageContext, posts: PostSummary[]): Html {
  const { t } = context;
  return layout(t.text('community.recentPosts'), context, html`<section class="intro">
  <h1>${t.text('community.recentPosts')}</h1>
  ${context.user
    ? html`<p><a class="button" href="/posts/new">${t.text('community.writePost')}</a></p>`
    : html`<p>${rich(t, 'community.intro', { signup: (chunks) => html`<a href="/signup">${chunks}</a>`, login: (chunks) => html`<a href="/login">${chunks}</a>` })}</p>`}
</section>
${posts.length === 0 ? html`<p class="muted">${t.text('community.nothingPublished')}</p>` : ''}
${posts.map((post) => postCard(context, post, { showAuthor: true }))}`);
}

/**
 * A member's public page, headed by their nickname with their @username always beside it: the
 * address says the username, and a look-alike nickname cannot pass for another member's page.
 */
export function profilePage(context: PageContext, user: User, posts: PostSummary[], drafts: PostSummary[]): Html {
  const { t } = context;
  const own = context.user?.username === user.username;
  const title = nicknameDiffers(user) ? t.text('community.profileTitle', { nickname: isolated(user.nickname), username: user.username }) : user.username;
  return layout(title, context, html`<section class="card profile">
  <img class="avatar" src="${avatarSrc(user)}" alt="${t.text('community.avatarOf', { name: isolated(user.nickname) })}" width="96" height="96">
  <div>
    <h1><bdi>${user.nickname}</bdi></h1>
    <p class="handle">@${user.username}</p>
    ${user.bio ? html`<p>${user.bio}</p>` : html`<p class="muted">${t.text('community.noBio')}</p>`}
    <p class="meta"><span class="tag">${t.text('community.level', { level: user.level })}</span> ${user.member ? html`<span class="tag member">${t.text('community.memberBadge')}</span>` : ''} · ${t.text('community.xp', { xp: user.xp })} · ${rich(t, 'community.joined', { date: dateOf(context, user.createdAt) })}</p>
    ${own ? html`<p class="links"><a href="/settings/profile">${t.text('community.editProfile')}</a> · <a href="/posts/new">${t.text('community.writePost')}</a></p>` : ''}
  </div>
</section>
${own && drafts.length > 0 ? html`<h2>${t.text('community.yourDrafts')}</h2>
<p class="hint">${t.text('community.draftsHint')}</p>
<ul class="links">${drafts.map((d) => html`<li><a href="/posts/${d.id}">${chosenName(d.title)}</a> <span class="muted">(${chosenName(d.categoryName)})</span> · <a href="/posts/${d.id}/edit">${t.text('community.edit')}</a></li>`)}</ul>` : ''}
<h2>${t.text('community.publishedPosts')}</h2>
${posts.length === 0 ? html`<p class="muted">${t.text('community.noPublished')}</p>` : posts.map((post) => postCard(context, post, { showAuthor: false }))}`);
}

/** What only the author sees on a post: publish a draft, edit, and delete (which asks first). */
function authorActions(context: PageContext, post: PostSummary): Html {
  const { t } = context;
  return html`<div class="actions">
    ${post.status === 'draft' ? html`<form method="post" action="/posts/${post.id}/publish" class="inline">
      <input type="hidden" name="_csrf" value="${context.csrf}">
      <button type="submit">${t.text('community.publish')}</button>
    </form>` : ''}
    <a class="button secondary" href="/posts/${post.id}/edit">${t.text('community.edit')}</a>
    <a class="button secondary" href="/posts/${post.id}/delete">${t.text('community.delete')}</a>
  </div>`;
}

export interface PostPageState {
  comments: Comment[];
  /** What is wrong with the comment sent, in the core's words. */
  error?: FormErrors;
  comment?: string | undefined;
}

export function postPage(context: PageContext, post: Post, state: PostPageState): Html {
  const { t } = context;
  const draft = post.status === 'draft';
  const commentError = sentences(errorList(state.error).map((problem) => sentence(problemText(t, problem))));
  return layout(isolated(post.title), context, html`<article class="card">
  ${draft ? html`<p class="notice">${t.text('community.draftNotice')}</p>` : ''}
  <h1>${post.title}</h1>
  <p class="meta"><img class="avatar" src="/avatars/${post.authorId}" alt="" width="24" height="24"> ${authorLink(post)} · <span class="tag">${chosenName(post.categoryName)}</span> · ${timeOf(context, post.createdAt)}</p>
  <div class="post-body">${new Html(post.bodyHtml)}</div>
  <p class="meta">${counts(context, post)}${post.updatedAt > post.createdAt ? html` · ${rich(t, 'community.edited', { time: timeOf(context, post.updatedAt, { relative: true }) })}` : ''}</p>
  ${context.user?.username === post.authorUsername ? authorActions(context, post) : ''}
  ${context.user && !draft ? html`<form method="post" action="/posts/${post.id}/like" class="inline">
    <input type="hidden" name="_csrf" value="${context.csrf}">
    <button type="submit" class="secondary">${t.text('community.like')}</button>
  </form>` : ''}
</article>
${draft ? '' : html`<section aria-labelledby="comments-heading">
  <h2 id="comments-heading">${t.text('community.commentsHeading')}</h2>
  ${state.comments.length === 0 ? html`<p class="muted">${t.text('community.noComments')}</p>` : html`<ol class="comments">${state.comments.map((c) => html`<li class="card">
    <p class="meta">${authorLink(c)} · ${timeOf(context, c.createdAt, { relative: true })}</p>
    ${paragraphs(c.body)}
  </li>`)}</ol>`}
  ${context.user ? html`<form method="post" action="/posts/${post.id}/comments" class="card">
    <input type="hidden" name="_csrf" value="${context.csrf}">
    ${commentError ? html`<p class="alert" role="alert" id="comment-error">${commentError}</p>` : ''}
    <label for="comment">${t.text('community.addComment')}</label>
    <textarea id="comment" name="comment" required maxlength="${COMMENT_MAX_LENGTH}" rows="4" ${commentError ? html`aria-describedby="comment-error" aria-invalid="true"` : ''}>${state.comment ?? ''}</textarea>
    <div class="actions"><button type="submit">${t.text('community.commentButton')}</button></div>
  </form>` : html`<p>${rich(t, 'community.signInToComment', { a: (chunks) => html`<a href="/login?return_to=${encodeURIComponent(`/posts/${post.id}`)}">${chunks}</a>` })}</p>`}
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
  const { t } = context;
  const labels: Readonly<Record<string, string>> = { title: t.text('community.title'), category: t.text('community.category'), body: t.text('community.body') };
  // The core's problems in the reader's words (the English stays for the API and the command
  // line): below its field as they are, in the summary after the field's name, which they leave unsaid.
  const errors = errorList(form.errors).map((problem) => ({ field: problem.field, message: sentence(problemText(t, problem)) }));
  const heading = editing ? t.text('community.editPost') : t.text('community.writePost');
  return layout(heading, context, html`<section class="card">
<h1>${heading}</h1>
${errorSummary(form.errors, { t, labels })}
<form method="post" action="${editing ? `/posts/${editing.id}/edit` : '/posts/new'}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="title">${t.text('community.title')}</label>
  <input type="text" id="title" name="title" value="${form.title}" required maxlength="${TITLE_MAX_LENGTH}" ${control(errors, 'title')}>
  ${fieldMessage(errors, 'title')}
  <label for="category">${t.text('community.category')}</label>
  <input type="text" id="category" name="category" value="${form.category}" list="categories" required maxlength="${CATEGORY_MAX_LENGTH}" ${control(errors, 'category', { hint: 'category-hint' })}>
  ${fieldMessage(errors, 'category')}
  <datalist id="categories">${categories.map((c) => html`<option value="${c.name}"></option>`)}</datalist>
  <p class="hint" id="category-hint">${t.text('community.categoryHint')}</p>
  <label for="body">${t.text('community.body')}</label>
  <textarea id="body" name="body" required maxlength="${BODY_MAX_LENGTH}" rows="12" ${control(errors, 'body', { hint: 'body-hint' })}>${form.body}</textarea>
  ${fieldMessage(errors, 'body')}
  <p class="hint" id="body-hint">${rich(t, 'community.bodyHint', { code: (chunks) => html`<code>${chunks}</code>` })}</p>
  <div class="actions">
    ${editing?.status === 'published'
      ? html`<button type="submit" name="status" value="published">${t.text('community.saveChanges')}</button>
    <a class="button secondary" href="/posts/${editing.id}">${t.text('community.cancel')}</a>`
      : html`<button type="submit" name="status" value="published">${t.text('community.publish')}</button>
    <button type="submit" name="status" value="draft" class="secondary">${editing ? t.text('community.saveDraft') : t.text('community.saveAsDraft')}</button>`}
  </div>
</form>
</section>`);
}

/** The question before a post is deleted: nothing is deleted until this form is sent. */
export function deletePostPage(context: PageContext, post: PostSummary): Html {
  const { t } = context;
  return layout(t.text('community.deleteTitle'), context, html`<section class="card narrow">
<h1>${t.text('community.deleteHeading', { title: isolated(post.title) })}</h1>
<p>${sentences([post.status === 'draft'
    ? t.text('community.deleteDraft')
    : t.text('community.deletePublished', { comments: post.commentCount, likes: post.likeCount }), t.text('community.cannotUndo')])}</p>
<form method="post" action="/posts/${post.id}/delete">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="confirm" value="delete">
  <div class="actions">
    <button type="submit" class="danger">${t.text('community.deleteButton')}</button>
    <a class="button secondary" href="/posts/${post.id}">${t.text('community.keep')}</a>
  </div>
</form>
</section>`);
}
