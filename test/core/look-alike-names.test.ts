/**
 * The signs that an app's name may pass for another's, which the staff console shows staff before
 * they vouch for it (attack88, attack90): plain logic, no server.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lookAlikeSigns } from '../../src/core/text.js';

const SITE_NAMES = ['Community', '社区', '社群'];

test('a word mixing Latin with another script, or two look-alike alphabets, is a sign, even parted by a hair space; Han beside Latin, and one script alone, are not', () => {
  for (const name of ['P\u0430ypal', '\u13dfOMMUNITY', 'G\u2d54\u2d54gle', '\u0421\u200aommunity', 'G\u200a\u043e\u043e\u200agle', '\u0395\u03a1\u0421'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['mixed_alphabets'], name);
  for (const name of ['Demo App', '读书App', 'Photo 打印机', 'Ελληνικά', 'Яндекс Maps', 'ポケモンGO', '네이버 Map', 'Café Crème', 'Tiếng Việt'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), [], name);
});

test('letters or digits in a compatibility form (full-width, bold, circled, Roman numerals) are a sign; full-width punctuation is not', () => {
  for (const name of ['Ｐｈｏｔｏ Printer', '\u{1d40f}\u{1d41a}\u{1d432}\u{1d429}\u{1d41a}\u{1d425}', '\u24c5aypal', '\u216dloud'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['styled_letters'], name);
  assert.deepEqual(lookAlikeSigns('打印机（二）', SITE_NAMES), []);
  assert.deepEqual(lookAlikeSigns('\u00b5Torrent', SITE_NAMES), ['styled_letters'], 'the micro sign is a compatibility form of Greek mu: a sign, if a false alarm');
});

test('the site\'s own name inside the name, in any language, letter case or width, through spaces and punctuation, is a sign', () => {
  for (const name of ['社区官方', 'community tools', '社\u200a区官方', '社 区', 'C.o.m.m.u.n.i.t.y'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['site_name'], name);
  assert.deepEqual(lookAlikeSigns('ＣＯＭＭＵＮＩＴＹ', SITE_NAMES), ['styled_letters', 'site_name']);
  assert.deepEqual(lookAlikeSigns('Commune', SITE_NAMES), []);
});
