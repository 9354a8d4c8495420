/** Post bodies are Markdown (INTERFACE section 7): what the post page renders, and what it never renders. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { renderMarkdown } from '../../src/core/markdown.js';

// ---- Rendering ----------------------------------------------------------------------------------

test('a body renders as CommonMark: emphasis, headings, lists, quotes, code, links', () => {
  const page = renderMarkdown('# Title\n\nSome **first** and *second*.\n\n> quoted\n\n- one\n- two\n\n`code` and [a link](https://x.example).');
  assert.match(page, /<h1>Title<\/h1>/);
  assert.match(page, /<strong>first<\/strong> and <em>second<\/em>/);
  assert.match(page, /<blockquote>\n<p>quoted<\/p>\n<\/blockquote>/);
  assert.match(page, /<ul>\n<li>one<\/li>\n<li>two<\/li>\n<\/ul>/);
  assert.match(page, /<code>code<\/code>/);
  assert.match(page, /<a href="https:\/\/x\.example" rel="nofollow ugc noopener">a link<\/a>/);
});

test('raw HTML in a body is shown as text, never as markup', () => {
  const page = renderMarkdown('<em>x</em>\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)> and <a href="javascript:alert(1)">y</a>');
  assert.match(page, /&lt;em&gt;x&lt;\/em&gt;/);
  assert.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(page, /&lt;img src=x onerror=alert\(1\)&gt;/);
  assert.doesNotMatch(page, /<(em|script|img|a)\b/);
});

test('a link or image to javascript:, vbscript:, file: or a non-image data: URL stays text', () => {
  for (const target of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'vbscript:msgbox(1)', 'file:///etc/passwd', 'data:text/html,<script>alert(1)</script>', 'data:image/svg+xml;base64,PHN2Zz4=']) {
    const page = renderMarkdown(`[x](${target}) ![y](${target}) <${target}>`);
    assert.doesNotMatch(page, /<a |<img /, target);
  }
});

test('every link carries rel="nofollow ugc noopener"', () => {
  const page = renderMarkdown('[a](https://a.example) <https://b.example> [c][ref]\n\n[ref]: /posts/1');
  const links = [...page.matchAll(/<a [^>]*>/g)].map(([tag]) => tag);
  assert.equal(links.length, 3);
  for (const tag of links) assert.match(tag, / rel="nofollow ugc noopener"/);
});

test('a table column\'s alignment is a class, never a style attribute the Content-Security-Policy would refuse', () => {
  const page = renderMarkdown('| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |');
  assert.doesNotMatch(page, /style=/);
  assert.match(page, /<th class="align-left">a<\/th>\n<th class="align-center">b<\/th>\n<th class="align-right">c<\/th>/);
});

/** Every tag and attribute markdown-it may write; anything else in the output would be the member's markup. */
const TAGS = new Set(['p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 's', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'img', 'table', 'thead', 'tbody', 'tr', 'th', 'td']);
const ATTRIBUTES = new Set(['href', 'title', 'rel', 'src', 'alt', 'class', 'start']);

test('rendered hostile bodies hold only markdown-it\'s own tags and attributes: no script, no event handler, no javascript: URL', () => {
  const hostile = fc.constantFrom(
    '<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '" onmouseover="alert(1)', "' onfocus='alert(1)", '<a href="javascript:alert(1)">x</a>',
    '[x](javascript:alert(1))', '[x](java\tscript:alert(1))', '[x](&#106;avascript:alert(1))', '![x](x" onerror="alert(1))', '[x](<javascript:alert(1)>)',
    '<javascript:alert(1)>', '<svg onload=alert(1)>', '<style>*{}</style>', '<iframe src=//evil.example>', '```js" onclick="x\ncode\n```',
    '[x]: javascript:alert(1)\n\n[x]', '| a |\n|:-:|\n| <b>b</b> |', '**', '_', '`', '[', ']', '(', ')', '<', '>', '&', '"', "'", '\n\n', '\n', ' ', 'text',
  );
  fc.assert(fc.property(fc.array(hostile, { maxLength: 25 }), (parts) => {
    const page = renderMarkdown(parts.join(''));
    for (const [tag, name, attributes] of page.matchAll(/<\/?([a-z0-9]+)([^>]*)>/g) as IterableIterator<[string, string, string]>) {
      assert.ok(TAGS.has(name), `${tag} in ${page}`);
      for (const [, attribute, value] of attributes.matchAll(/ ([a-z-]+)="([^"]*)"/g) as IterableIterator<[string, string, string]>) {
        assert.ok(ATTRIBUTES.has(attribute), `${tag} in ${page}`);
        if (attribute === 'href' || attribute === 'src') assert.doesNotMatch(value, /^\s*(javascript|vbscript|data:text)/i, page);
      }
      assert.equal(attributes.replace(/ ([a-z-]+)="([^"]*)"/g, ''), '', `only quoted attributes: ${tag}`);
    }
    assert.equal(page.replace(/<\/?([a-z0-9]+)([^>]*)>/g, '').includes('<'), false, `every < is escaped: ${page}`);
  }), { numRuns: 300 });
});
