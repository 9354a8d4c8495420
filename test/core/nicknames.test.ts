/** Nicknames (INTERFACE section 12 "Names"), as plain rules. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkNickname } from '../../src/core/accounts/nicknames.js';
import { InputError } from '../../src/core/errors.js';

const refused = (value: string) => assert.throws(() => checkNickname(value), InputError, JSON.stringify(value));

test('a nickname of any script is kept, NFC-normalised and trimmed; empty means the username', () => {
  for (const name of ['林小伟', 'Ada Lovelace', 'ก่อน', 'देवनागरी', '한글 이름', '林　小伟', "O'Brien-Smith"]) assert.equal(checkNickname(name), name);
  assert.equal(checkNickname('  Zoe\u0308 '), 'Zoë');
  assert.equal(checkNickname('   '), null);
});

test('a nickname is 1 to 30 characters, counted as characters, not UTF-16 units', () => {
  assert.equal(checkNickname('𠀋'.repeat(30)), '𠀋'.repeat(30));
  refused('林'.repeat(31));
});

test('a nickname longer than any normalisation could bring to 30 characters is refused before it is normalised', () => {
  const normalize = String.prototype.normalize;
  let normalised = 0;
  String.prototype.normalize = function (this: string, form?: string) { normalised++; return normalize.call(this, form); };
  try {
    refused('\u0344'.repeat(32_500));
    refused(` ${'林'.repeat(241)} `);
  } finally {
    String.prototype.normalize = normalize;
  }
  assert.equal(normalised, 0);
  // The bound keeps every value that normalises to 30: thirty of U+1F82, each written as its four-part decomposition.
  assert.equal(checkNickname('\u03B1\u0313\u0300\u0345'.repeat(30)), '\u1F82'.repeat(30));
});

test('control, format, bidi and zero-width characters are refused', () => {
  for (const c of ['\u0000', '\u202E', '\u2066', '\u200B', '\u200D', '\uFEFF', '\u{E0041}']) refused(`a${c}b`);
});

test('characters drawn as nothing are refused: Hangul fillers, variation selectors, the grapheme joiner', () => {
  for (const c of ['\u3164', '\uFFA0', '\uFE0F', '\u034F', '\u180B', '\u17B4']) refused(`a${c}b`);
  refused('\u3164\u3164');
});

test('symbols and emoji, stacked marks and space padding are refused; a nickname needs a letter or digit', () => {
  for (const value of ['😀', 'a¥', 'x<y', `x${'\u0301'.repeat(5)}`, 'a  b', 'a\u3000\u3000b', 'a\u00A0b', '...']) refused(value);
  assert.equal(checkNickname(`x${'\u0301'.repeat(4)}`)?.length, 5);
});
