/**
 * Post bodies are Markdown, and the excerpt is the text a reader sees (INTERFACE section 7): what
 * the post page renders, what it never renders, and how the excerpt is cut.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import MarkdownIt from 'markdown-it';
import { codeSpan } from '../../src/core/community/code-spans.js';
import { parseLinkLabel } from '../../src/core/community/link-labels.js';
import { markdownText, layOut } from '../../src/core/community/markdown.js';
import { InputError } from '../../src/core/errors.js';
import { excerpt, renderBody, renderOlderBody } from '../../src/core/community/posts.js';

// ---- Rendering ----------------------------------------------------------------------------------

test('a body renders as CommonMark: emphasis, headings, lists, quotes, code, links', () => {
  const page = layOut('# Title\n\nSome **first** and *second*.\n\n> quoted\n\n- one\n- two\n\n`code` and [a link](https://x.example).').html;
  assert.match(page, /<h1>Title<\/h1>/);
  assert.match(page, /<strong>first<\/strong> and <em>second<\/em>/);
  assert.match(page, /<blockquote>\n<p>quoted<\/p>\n<\/blockquote>/);
  assert.match(page, /<ul>\n<li>one<\/li>\n<li>two<\/li>\n<\/ul>/);
  assert.match(page, /<code>code<\/code>/);
  assert.match(page, /<a href="https:\/\/x\.example" rel="nofollow ugc noopener">a link<\/a>/);
});

test('raw HTML in a body is shown as text, never as markup', () => {
  const page = layOut('<em>x</em>\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)> and <a href="javascript:alert(1)">y</a>').html;
  assert.match(page, /&lt;em&gt;x&lt;\/em&gt;/);
  assert.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(page, /&lt;img src=x onerror=alert\(1\)&gt;/);
  assert.doesNotMatch(page, /<(em|script|img|a)\b/);
});

test('a link or image to javascript:, vbscript:, file: or a non-image data: URL stays text', () => {
  for (const target of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'vbscript:msgbox(1)', 'file:///etc/passwd', 'data:text/html,<script>alert(1)</script>', 'data:image/svg+xml;base64,PHN2Zz4=']) {
    const page = layOut(`[x](${target}) ![y](${target}) <${target}>`).html;
    assert.doesNotMatch(page, /<a |<img /, target);
  }
});

test('every link carries rel="nofollow ugc noopener"', () => {
  const page = layOut('[a](https://a.example) <https://b.example> [c][ref]\n\n[ref]: /posts/1').html;
  const links = [...page.matchAll(/<a [^>]*>/g)].map(([tag]) => tag);
  assert.equal(links.length, 3);
  for (const tag of links) assert.match(tag, / rel="nofollow ugc noopener"/);
});

test('a table column\'s alignment is a class, never a style attribute the Content-Security-Policy would refuse', () => {
  const page = layOut('| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |').html;
  assert.doesNotMatch(page, /style=/);
  assert.match(page, /<th class="align-left">a<\/th>\n<th class="align-center">b<\/th>\n<th class="align-right">c<\/th>/);
});

test('a code span is the text between a run of backticks and the next run of as many, even inside an unclosed link label (CommonMark 6.1, markdown-it issue 1201)', () => {
  assert.equal(layOut('[foo `bar` baz`').html, '<p>[foo <code>bar</code> baz`</p>\n');
  assert.equal(layOut('![alt `code` x`').html, '<p>![alt <code>code</code> x`</p>\n');
  assert.equal(layOut('`a``b` and ``c`d``').html, '<p><code>a``b</code> and <code>c`d</code></p>\n');
  assert.equal(layOut('\\``a` b').html, '<p>`<code>a</code> b</p>\n', 'an escaped backtick leaves the rest of its run an opener');
  assert.equal(layOut('`` a\nb ``').html, '<p><code>a b</code></p>\n', 'line endings are spaces; one space off each end');
  assert.equal(layOut('a ``unclosed` text').html, '<p>a ``unclosed` text</p>\n');
});

test('a code span inside a link\'s text closes where it would outside, so a `]` in it does not end the label', () => {
  assert.equal(layOut('[a `]` b](/x)').html, '<p><a href="/x" rel="nofollow ugc noopener">a <code>]</code> b</a></p>\n');
});

test('remembering where a search for a label\'s `]` failed changes no page: the same tokens as markdown-it\'s own search, on bodies of brackets, links and code', () => {
  const withSearch = (remembering: boolean) => {
    const markdown = new MarkdownIt('default', { html: false, linkify: false, typographer: false });
    markdown.inline.ruler.at('backticks', codeSpan);
    if (remembering) markdown.helpers.parseLinkLabel = parseLinkLabel;
    return markdown;
  };
  const ours = withSearch(true);
  const stock = withSearch(false);
  const piece = fc.constantFrom('[', '[', '![', ']', '][', '](', '(/u)', '(', ')', '`', '\\', '*', 'a', 'b', ' ', '\n', '<https://a.example>', '[a]', '[b]');
  const body = fc.tuple(fc.array(piece, { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 40 }))
    .map(([pieces, repeats]) => `${pieces.join('').repeat(repeats)}\n\n[a]: /a\n[b]: /b\n`);
  fc.assert(fc.property(body, (text) => {
    assert.equal(ours.render(text), stock.render(text), JSON.stringify(text));
  }), { numRuns: 2000 });
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
    const page = layOut(parts.join('')).html;
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

// ---- The excerpt's text -------------------------------------------------------------------------

test('an excerpt is the text a reader sees: Markdown markup, link targets and fences are gone', () => {
  const body = [
    '# Title', '', 'Some **bold**, *italic*, __strong__, _em_ and ~~gone~~ text with `code`.', '> quoted', '- one', '1. two', '',
    '---', '![a *cat*](cat.png) and [a link](https://x.example "t").', '```js', 'let x = 1;', '```', '', '| a | b |', '|---|--:|', '| c | d |',
  ].join('\n');
  assert.equal(excerpt(body), 'Title Some bold, italic, strong, em and gone text with code. quoted one two a cat and a link. let x = 1; a b c d');
});

test('raw HTML in a body is text in the excerpt too, as the page shows it', () => {
  assert.equal(excerpt('<p>Tom</p> <em>and</em> <!-- Jerry -->'), '<p>Tom</p> <em>and</em> <!-- Jerry -->');
});

test('entities become the characters they name', () => {
  assert.equal(excerpt('Tom &amp; Jerry&#39;s &copy; &#x1F600; &bogus;'), "Tom & Jerry's © 😀 &bogus;");
});

test('underscores inside a word are not emphasis', () => {
  assert.equal(excerpt('snake_case_name and a * b'), 'snake_case_name and a * b');
});

test('every run of white space, line breaks and blocks included, is one space, none at either end', () => {
  assert.equal(excerpt('  one\n two\u00a0\u00a0three  \n\n\tfour\u3000five\n\n'), 'one two three four five');
  assert.equal(excerpt('**bold**er and [li](x)nk'), 'bolder and link');
});

test('a body with no text has an empty excerpt', () => {
  assert.equal(excerpt('---\n\n***'), '');
  assert.equal(markdownText('![](x.png)'), '');
});

// ---- Cutting ------------------------------------------------------------------------------------

test('a short text is its own excerpt, with no ellipsis', () => {
  assert.equal(excerpt('Just a few words.'), 'Just a few words.');
  assert.equal(excerpt('x'.repeat(140)), 'x'.repeat(140));
});

test('a long text is cut at a word and ends with "…", 140 characters at most', () => {
  const text = 'alpha beta gamma delta '.repeat(20);
  const cut = excerpt(text);
  assert.ok(cut.length <= 140);
  assert.ok(cut.endsWith('…'));
  const words = cut.slice(0, -1).split(' ');
  assert.ok(words.every((w) => ['alpha', 'beta', 'gamma', 'delta'].includes(w)), cut);
});

test('a cut excerpt drops the spaces and punctuation before its "…"', () => {
  assert.equal(excerpt(`${'a'.repeat(100)} ${'b'.repeat(36)}, — ${'c'.repeat(20)}`), `${'a'.repeat(100)} ${'b'.repeat(36)}…`);
});

test('a single character as a reader sees it longer than the limit is cut inside it, never between the halves of a surrogate pair', () => {
  const cut = excerpt('👨\u200d'.repeat(100));
  assert.ok(cut.length <= 140);
  assert.doesNotMatch(cut, /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/, JSON.stringify(cut.slice(-4)));
});

test('a single word longer than the limit is cut inside it', () => {
  assert.equal(excerpt('y'.repeat(500)), `${'y'.repeat(139)}…`);
});

test('an excerpt never splits a surrogate pair and never exceeds 140 UTF-16 units', () => {
  const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (body) => {
    const out = excerpt(body);
    assert.ok(out.length <= 140);
    assert.ok(!loneSurrogate.test(out));
  }));
  const emoji = '😀'.repeat(100);
  const cut = excerpt(emoji);
  assert.ok(cut.length <= 140);
  assert.equal(cut, `${'😀'.repeat(69)}…`);
});

test('an excerpt never cuts a character as a reader sees it: a flag, an accented letter, a joined emoji (UAX #29)', () => {
  const flags = '🇫🇷'.repeat(100);
  assert.equal(excerpt(flags), `${'🇫🇷'.repeat(34)}…`, 'flags are four units each: 34 whole ones fit');
  const family = '👨‍👩‍👧'.repeat(30);
  assert.equal(excerpt(family), `${'👨‍👩‍👧'.repeat(17)}…`, 'a joined emoji is eight units');
  const accented = 'e\u0301'.repeat(100);
  assert.equal(excerpt(accented), `${'e\u0301'.repeat(69)}…`);
});

// ---- Work ---------------------------------------------------------------------------------------

/** Images nested around nested brackets: every alt text parsed anew, every label searched for in each. */
const nestedImages = `${'!['.repeat(50)}${'['.repeat(49)}${'*'.repeat(19_602)}${']'.repeat(49)}${'](u)'.repeat(50)}`;

test('a body that costs more work to lay out than its length allows is refused, in the words of the form', () => {
  assert.throws(() => renderBody(nestedImages), (error) => error instanceof InputError && error.field === 'body' && /too much work to lay out/.test(error.message));
});

test('quotes nest 16 deep; a `>` deeper is text', () => {
  const page = layOut(`${'>'.repeat(20)} a`).html;
  assert.equal(page.split('<blockquote>').length - 1, 16);
  assert.match(page, /<p>&gt;&gt;&gt;&gt; a<\/p>/);
});

/** `[[[12.34,12.34,12.34],…],…]`, three items a level, `depth` levels. */
function nestedArray(depth: number): string {
  return depth === 0 ? '12.34' : `[${Array.from({ length: 3 }, () => nestedArray(depth - 1)).join(',')}]`;
}

test('real posts are laid out, however many links, cells or quotes they hold', () => {
  const posts = {
    'a sparse wide table (an attendance sheet)': `| Name |${Array.from({ length: 31 }, (_, i) => ` ${i + 1} |`).join('')}\n|${'---|'.repeat(32)}\n${'| A |\n'.repeat(400)}`,
    'a table of numbers, 20 columns': `|${' c |'.repeat(20)}\n|${'---|'.repeat(20)}\n${`|${' 1234 |'.repeat(20)}\n`.repeat(120)}`,
    'a list of links with titles': '- [Link](https://example.com/path "A title for the link")\n'.repeat(300),
    'badges': '[![build](https://img.example/b.svg)](https://ci.example/x) '.repeat(300),
    'wiki-style links': '[[wiki]] and [[page two]] '.repeat(700),
    'quotes ten deep': `${'>'.repeat(10)} quoted text\n`.repeat(800),
    'a nested array seven deep, pasted as text': nestedArray(7),
  };
  for (const [name, body] of Object.entries(posts)) {
    assert.ok(body.length <= 20_000, name);
    assert.doesNotThrow(() => renderBody(body), name);
  }
});

test('a written body\'s page and excerpt come from one reading, and the reading for the excerpt leaves the page whole', () => {
  const body = '# Title\n\n> **quoted** [link][r]\n\n- ![an *image*](i.png)\n\n| a | b |\n|:-|-:|\n| `c` | d |\n\n[r]: /y "t"\n';
  assert.deepEqual(renderBody(body), {
    html: '<h1>Title</h1>\n<blockquote>\n<p><strong>quoted</strong> <a href="/y" title="t" rel="nofollow ugc noopener">link</a></p>\n</blockquote>\n'
      + '<ul>\n<li><img src="i.png" alt="an image"></li>\n</ul>\n<table>\n<thead>\n<tr>\n<th class="align-left">a</th>\n<th class="align-right">b</th>\n</tr>\n</thead>\n'
      + '<tbody>\n<tr>\n<td class="align-left"><code>c</code></td>\n<td class="align-right">d</td>\n</tr>\n</tbody>\n</table>\n',
    excerpt: 'Title quoted link an image a b c d',
  });
});

test('an older body whose page would pass 256 KB is kept as its escaped text, with the excerpt of the text its Markdown shows', () => {
  const older = renderOlderBody(`**Old** table\n\n|${'a|'.repeat(20)}\n|${'-|'.repeat(20)}\n${'a\n'.repeat(1500)}`);
  assert.ok(older.html.startsWith('<p class="plain">**Old** table'), older.html.slice(0, 60));
  assert.match(older.excerpt, /^Old table a a a/);
});

test('an older body too costly to lay out is kept as its escaped text, with the excerpt of its text as typed', () => {
  const older = renderOlderBody(`<b>old</b>\n\n${nestedImages}`);
  assert.equal(older.html.startsWith('<p class="plain">&lt;b&gt;old&lt;/b&gt;'), true, older.html.slice(0, 60));
  assert.match(older.excerpt, /^<b>old<\/b> !\[!\[/);
  assert.ok(older.excerpt.length <= 140);
});
