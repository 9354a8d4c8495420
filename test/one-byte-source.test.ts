/**
 * The bundle's files are rewritten to hold no character above U+00FF, so that V8 keeps their
 * text one byte a character (scripts/one-byte-source.mjs, docs/performance.md decision 61).
 * Each escape must mean exactly what the character meant: each case runs before and after.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runInNewContext } from 'node:vm';
import { OneByteSourceError, oneByteSource } from '../scripts/one-byte-source.mjs';

const WIDE = /[^\0-\xff]/;

/** The rewritten source, after checking that it computes what the original did. */
function sameResult(source: string): string {
  assert.match(source, WIDE, 'the case has a character to escape');
  const escaped = oneByteSource(source, 'case.js');
  assert.doesNotMatch(escaped, WIDE, escaped);
  // Compared as JSON: the values are of another realm, with prototypes of their own.
  assert.equal(JSON.stringify(runInNewContext(escaped)), JSON.stringify(runInNewContext(source)), escaped);
  return escaped;
}

test('a character above U+00FF is escaped where it means the same, and the source keeps doing what it did', () => {
  // Regular expressions: a pair of escapes is one code point in a `u` or `v` expression, as the
  // literal pair was, inside a class too; without the flag each unit stands alone as before.
  sameResult(String.raw`[/[😀-😂]/u.test('😁'), /^[😀-😂]$/v.test('😁'), /^😀+$/u.test('😀😀'), /^.$/u.test('😀'), /^..$/.test('😀'),
    /[.!?。！？]$/.test('好。'), / (?=[（「])|(?<=[）」]) /g[Symbol.replace]('甲 （乙） 丙', ''), /\…/.test('…'), /(?<名>x)\k<名>/.exec('xx').groups]`);
  // A division is not taken for an expression, nor an expression for a comment.
  sameResult(String.raw`const a = 6, b = 3, g = 1; [a / b /* ÷ “ */ / g, a / b / g, '/*“*/'.length, /\/\/“/.test('//“'), '*/ “ /*']`);
  // Templates: their text around and inside nested ${…}.
  sameResult('const x = "中"; [`前${`内${x}“${`深…`}”`}后`, `${x}`.length, `\\“`]');
  // Comments, with what looks like the end of one or a string in them.
  sameResult('// “ */ ‘ \n/* ’ // “ \' ` */ [1 /* … */, /* → */ 2]');
  // Strings: astral characters (two escapes), an identity escape, a line continuation.
  sameResult("['😀'.length, '😀'.codePointAt(0), '\\…' === '…', '\\\\…', 'a\\\u2028b']");
  // Names: an astral one takes the braced escape (a pair of escapes is no identifier).
  sameResult('const 𝑥 = 1, 名字 = { 值: 2 }; class C { #私 = 3; get() { return this.#私; } } [𝑥, 名字.值, new C().get()]');
});

test('a tagged template is escaped only when its tag reads the cooked strings alone; any other fails the build, naming the place', () => {
  // Our `html` tag reads `strings[i]` only: an escape there means the same.
  sameResult('function html(strings, ...values) { let out = strings[0]; for (let i = 0; i < values.length; i++) out += values[i] + strings[i + 1]; return out; } [html`“${1}”…`, html`→`]');
  // Exported to another chunk, it stays what it is: an import cannot be assigned.
  assert.doesNotMatch(oneByteSource('function html(strings) { return strings[0]; } export { html }; html`“`', 'chunk.js'), WIDE);
  // String.raw, or a tag of the same name that reads the raw text, would see `\u201C`.
  for (const source of [
    'String.raw`“`',
    'function html(strings) { return strings.raw[0]; } html`“`',
    "function html(strings) { return strings['raw'][0]; } html`“`",
    'function html(strings) { return strings[0]; } function other(html) { return html`“`; }',
    'function html(strings) { return strings[0]; } html = String.raw; html`“`',
    'function html(strings) { return keep(strings); } html`“`',
  ]) {
    assert.throws(() => oneByteSource(`\n  ${source}`, 'chunk.js'), (error: Error) => {
      assert.ok(error instanceof OneByteSourceError, String(error));
      assert.match(error.message, /^chunk\.js:2:\d+: a character in a template tagged by `(?:String\.raw|html)`/);
      return true;
    }, source);
  }
});

test('a file the parser cannot read fails the build, naming the place, rather than be escaped by a guess', () => {
  assert.throws(() => oneByteSource('const a = 1 +;\n// “', 'chunk.js'), (error: Error) => error instanceof OneByteSourceError && /^chunk\.js:1:14: TypeScript cannot parse this/.test(error.message));
});
