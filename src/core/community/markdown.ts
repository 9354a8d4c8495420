/**
 * Post bodies are Markdown (INTERFACE section 7): CommonMark with GitHub's tables and
 * strikethrough, raw HTML shown as text. A body written is parsed once, for the post page and for
 * its excerpt's text, so both agree on what the body says.
 *
 * markdown-it parses in time linear in its input (its rules keep caches and delimiter bounds for
 * the inputs that once made it quadratic) and limits nesting to 100 levels, once its code-span rule
 * is replaced by one whose answer does not depend on the order it is asked in (code-spans.ts) and
 * its search for a label's end remembers where a search failed (link-labels.ts); what is left
 * beyond the length's bound (labels read again in nested images' alt text, links written at every
 * use of a reference, tables' filled-in cells, lazy lines of deep quotes) is bounded too
 * (markdown-work.ts). Everything here walks its tokens once and uses no
 * regular expression, so a body costs time in proportion to its length.
 */
import MarkdownIt, { type Token } from 'markdown-it';
import blockquote from 'markdown-it/lib/rules_block/blockquote.mjs';
import { codeSpan } from './code-spans.js';
import { parseLinkLabel } from './link-labels.js';
import { type MarkdownEnv, checkBlockTokens, payForLinks, workBudgetFor } from './markdown-work.js';

/**
 * `html: false`: `<em>` and `<script>` in a body are text, escaped on output.
 * `linkify: false`: a bare URL stays text (an autolink `<https://…>` or `[text](url)` is a link);
 * finding URLs in running text is a score of regular expressions over every text run, and the
 * page does not need it.
 * Links and images keep markdown-it's `validateLink`, which refuses `javascript:`, `vbscript:`,
 * `file:` and every `data:` but raster images; such a link stays text.
 */
const markdown = new MarkdownIt('default', { html: false, linkify: false, typographer: false });
markdown.inline.ruler.at('backticks', codeSpan);
markdown.helpers.parseLinkLabel = parseLinkLabel;
// Block tokens are counted as they are made: by a rule tried first at every block's start, which
// matches nothing, so a table is counted before the next one is built; and once the blocks are
// all made, before their inline text is parsed. Links are paid for once the inline text is.
markdown.block.ruler.before('table', 'count_blocks', (state) => {
  checkBlockTokens(state.env as MarkdownEnv, state.tokens);
  return false;
});
markdown.core.ruler.after('block', 'count_blocks', (state) => {
  checkBlockTokens(state.env as MarkdownEnv, state.tokens);
});
markdown.core.ruler.after('inline', 'pay_for_links', (state) => {
  payForLinks(state.env as MarkdownEnv, state.tokens);
});

/** Quotes nest at most this deep; a `>` deeper is text (markdown-work.ts says why). */
const MAX_QUOTE_DEPTH = 16;
// `at` drops the rule from the chains that end a paragraph, a list… unless they are named again:
// these are markdown-it's own (its parser_block.mjs).
const QUOTE_ENDS = ['paragraph', 'reference', 'blockquote', 'list'];
markdown.block.ruler.at('blockquote', (state, startLine, endLine, silent) => {
  const env = state.env as MarkdownEnv;
  const depth = env.quoteDepth ?? 0;
  if (depth >= MAX_QUOTE_DEPTH) return false;
  env.quoteDepth = depth + 1;
  try {
    return blockquote(state, startLine, endLine, silent);
  } finally {
    env.quoteDepth = depth;
  }
}, { alt: QUOTE_ENDS });

/** A parse's `env`, holding the work `body` may spend; a body that spends it throws `MarkdownTooCostly`. */
function budgeted(body: string): MarkdownEnv {
  return { workLeft: workBudgetFor(body.length) };
}

/**
 * The longest link or image target taken as one (browsers and servers stop at 2,000 to 8,000):
 * a longer one stays text, so a single reference definition cannot be multiplied into megabytes
 * by thousands of uses.
 */
const LINK_MAX_LENGTH = 2048;
const validLink = markdown.validateLink.bind(markdown);
markdown.validateLink = (url) => url.length <= LINK_MAX_LENGTH && validLink(url);

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

/** A body laid out: the post page's HTML and the text a reader sees in it. */
export interface LaidOutBody {
  /** Every character of the member's text escaped, no raw HTML. */
  html: string;
  /** As `markdownText` makes it. */
  text: string;
}

/** The body parsed once for both its page and its text, which is most of the work of either. */
export function layOut(body: string): LaidOutBody {
  const env = budgeted(body);
  const tokens = markdown.parse(body, env);
  return { text: textOf(tokens), html: markdown.renderer.render(tokens, markdown.options, env) };
}

/** A body as escaped text kept as typed, for a body that is not rendered as Markdown. */
export function escapedText(body: string): string {
  return `<p class="plain">${markdown.utils.escapeHtml(body)}</p>\n`;
}

/**
 * The text a reader sees in the rendered body, each run of white space one space: the words of
 * headings, paragraphs, lists, quotes, table cells and code, an image's alt text, a link's text.
 * Markup (emphasis, link targets, fences) is gone; blocks are separated by a space.
 */
export function markdownText(body: string): string {
  return textOf(markdown.parse(body, budgeted(body)));
}

function textOf(tokens: Token[]): string {
  const text = new PlainText();
  // Inline tokens nest (an image's alt text holds inline tokens); a stack, not recursion, walks them.
  // The walk reads the tokens and leaves them as they were, for the renderer.
  const pending: Token[] = tokens.slice().reverse();
  for (let token = pending.pop(); token !== undefined; token = pending.pop()) {
    switch (token.type) {
      case 'inline':
      case 'image':
        for (let i = (token.children ?? []).length - 1; i >= 0; i--) pending.push(token.children![i]!);
        break;
      case 'text':
      case 'code_inline':
        text.add(token.content);
        break;
      case 'code_block':
      case 'fence':
        text.separate();
        text.add(token.content);
        text.separate();
        break;
      case 'softbreak':
      case 'hardbreak':
        text.separate();
        break;
      default:
        // Block tokens (a paragraph, heading, list item or cell opening or closing; a rule) part
        // words; inline markup (emphasis, links, strikethrough) does not: `**b**old` is "bold".
        if (token.block) text.separate();
    }
  }
  return text.toString();
}

/** A body's text as typed, each run of white space one space, none at either end: its Markdown not read. */
export function typedText(body: string): string {
  const text = new PlainText();
  text.add(body);
  return text.toString();
}

/** Words joined by single spaces, with no space at either end. */
class PlainText {
  private text = '';
  private gap = false;

  /** Appends `piece`; its white space separates words, however long a run of it is. */
  add(piece: string): void {
    let start = -1;
    for (let i = 0; i <= piece.length; i++) {
      const space = i === piece.length || isWhiteSpace(piece.charCodeAt(i));
      if (!space) {
        if (start < 0) start = i;
        continue;
      }
      if (start >= 0) {
        this.word(piece.slice(start, i));
        start = -1;
      }
      if (i < piece.length) this.gap = true;
    }
  }

  /** What comes next is another word, even when no white space stands between. */
  separate(): void {
    this.gap = true;
  }

  toString(): string {
    return this.text;
  }

  private word(word: string): void {
    if (this.gap && this.text !== '') this.text += ' ';
    this.text += word;
    this.gap = false;
  }
}

/** The characters JavaScript's `\s` matches: ASCII white space, no-break and other Unicode spaces, BOM. */
export function isWhiteSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x1680
    || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f
    || code === 0x205f || code === 0x3000 || code === 0xfeff;
}
