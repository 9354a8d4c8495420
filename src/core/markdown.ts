/**
 * Post bodies are Markdown (INTERFACE section 7): CommonMark with GitHub's tables and
 * strikethrough, raw HTML shown as text.
 *
 * markdown-it parses in time linear in its input (its rules keep caches and delimiter bounds for
 * the inputs that once made it quadratic) and limits nesting to 100 levels.
 */
import MarkdownIt from 'markdown-it';

/**
 * `html: false`: `<em>` and `<script>` in a body are text, escaped on output.
 * `linkify: false`: a bare URL stays text (an autolink `<https://…>` or `[text](url)` is a link);
 * finding URLs in running text is a score of regular expressions over every text run, and the
 * page does not need it.
 * Links and images keep markdown-it's `validateLink`, which refuses `javascript:`, `vbscript:`,
 * `file:` and every `data:` but raster images; such a link stays text.
 */
const markdown = new MarkdownIt('default', { html: false, linkify: false, typographer: false });

const render = markdown.renderer.rules;

/** A member's link is theirs, not the site's: no ranking credit, no `window.opener` (HTML "link types"). */
render.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx]!.attrSet('rel', 'nofollow ugc noopener');
  return self.renderToken(tokens, idx, options);
};

/**
 * A table column's alignment as a class: markdown-it writes it as a `style` attribute, which the
 * site's Content-Security-Policy (no inline style) would refuse.
 */
render.th_open = render.td_open = (tokens, idx, options, _env, self) => {
  const cell = tokens[idx]!;
  const style = cell.attrGet('style'); // "text-align:left", "…:right" or "…:center", from the table rule
  if (style !== null) {
    cell.attrs = (cell.attrs ?? []).filter(([name]) => name !== 'style');
    cell.attrJoin('class', `align-${style.slice(style.indexOf(':') + 1)}`);
  }
  return self.renderToken(tokens, idx, options);
};

/** The body as HTML for the post page: every character of the member's text escaped, no raw HTML. */
export function renderMarkdown(body: string): string {
  return markdown.render(body);
}
