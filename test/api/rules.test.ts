/** Pure rules of the resource API: excerpts, paging parameters, the Authorization header. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { bearerToken } from '../../src/core/bearer.js';
import { OAuthError } from '../../src/core/errors.js';
import { ExcerptMemo, excerpt, parsePaging, plainText } from '../../src/core/resource-api.js';

test('plain text drops HTML tags and decodes entities', () => {
  assert.equal(plainText('<p>Tom &amp; <b>Jerry</b>&#39;s <a href="x">show</a></p><script>alert(1)</script>'), "Tom & Jerry's show");
});

test('plain text drops common Markdown: headings, emphasis, links, images, code, quotes, lists, rules', () => {
  const markdown = [
    '# Title', '', 'Some **bold**, *italic*, __strong__, _em_ and ~~gone~~ text with `code`.',
    '> quoted', '- one', '2. two', '---', '![a cat](cat.png) and [a link](https://x.example "t").',
    '```js', 'let x = 1;', '```',
  ].join('\n');
  assert.equal(plainText(markdown), 'Title Some bold, italic, strong, em and gone text with code. quoted one two a cat and a link. let x = 1;');
});

test('plain text keeps underscores and asterisks inside words', () => {
  assert.equal(plainText('snake_case_name and 2*3*4'), 'snake_case_name and 2*3*4');
});

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

test('a remembered excerpt is always the excerpt of the body asked for', () => {
  const memo = new ExcerptMemo(500);
  fc.assert(fc.property(fc.array(fc.string({ maxLength: 200 }), { minLength: 1, maxLength: 30 }), (bodies) => {
    for (const body of [...bodies, ...bodies.reverse()]) assert.equal(memo.excerptOf(body), excerpt(body));
  }));
});

test('the excerpt memo holds at most its bound of body characters, dropping the oldest first', () => {
  const memo = new ExcerptMemo(100);
  for (const letter of 'abc') memo.excerptOf(letter.repeat(40));
  assert.equal(memo.heldChars, 80); // "a…" went to make room for "c…"
  memo.excerptOf('d'.repeat(150));
  assert.equal(memo.heldChars, 0); // a body above the bound is not kept
  memo.excerptOf('e'.repeat(60));
  memo.excerptOf('e'.repeat(60));
  assert.equal(memo.heldChars, 60); // a body seen again is not counted twice
});

test('paging defaults to page 0 and size 20', () => {
  assert.deepEqual(parsePaging({}), { page: 0, size: 20 });
});

test('a size above 50 is 50', () => {
  assert.deepEqual(parsePaging({ page: '3', size: '51' }), { page: 3, size: 50 });
  assert.deepEqual(parsePaging({ size: '50' }), { page: 0, size: 50 });
  assert.deepEqual(parsePaging({ size: '1' }), { page: 0, size: 1 });
});

test('paging refuses anything but digits, and a size of 0', () => {
  for (const query of [{ page: '-1' }, { page: '1.0' }, { page: '' }, { page: ['1', '2'] }, { size: '0' }, { size: ' 5' }, { size: '0x10' }, { page: '1234567890' }]) {
    assert.throws(() => parsePaging(query), (e: unknown) => e instanceof OAuthError && e.code === 'invalid_request', JSON.stringify(query));
  }
});

test('the Authorization header yields the bearer token, nothing for no header, null for another shape', () => {
  assert.equal(bearerToken(undefined), undefined);
  assert.equal(bearerToken(''), undefined);
  assert.equal(bearerToken('Bearer abc'), 'abc');
  assert.equal(bearerToken('BEARER  abc'), 'abc');
  assert.equal(bearerToken('Bearer'), null);
  assert.equal(bearerToken('Bearer a b'), null);
  assert.equal(bearerToken('Basic abc'), null);
});
