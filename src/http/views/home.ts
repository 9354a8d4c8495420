import type { Post } from '../../core/ports.js';
import { html } from './html.js';
import { type PageContext, layout } from './layout.js';

export function homePage(context: PageContext, posts: Post[]) {
  return layout('Recent posts', context, html`<h1>Recent posts</h1>
${posts.length === 0 ? html`<p class="muted">Nothing published yet.</p>` : ''}
${posts.map((post) => html`<article class="card">
  <h2><a href="/posts/${post.id}">${post.title}</a></h2>
  <p class="muted">by <a href="/u/${post.authorUsername}">${post.authorUsername}</a> in ${post.categoryName}
   · ${post.likeCount} likes · ${post.commentCount} comments · ${post.viewCount} views</p>
</article>`)}`);
}
