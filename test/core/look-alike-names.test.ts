/**
 * The signs that an app's name may pass for another's, which the staff console shows staff before
 * they vouch for it (attack88): plain logic, no server.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lookAlikeSigns } from '../../src/core/text.js';

const SITE_NAMES = ['Community', '社区', '社群'];

test('a word mixing letters of look-alike alphabets is a sign; Han beside Latin, and one alphabet alone, are not', () => {
  assert.deepEqual(lookAlikeSigns('P\u0430ypal', SITE_NAMES), ['mixed_alphabets'], 'a Cyrillic а among Latin letters');
  assert.deepEqual(lookAlikeSigns('\u13dfOMMUNITY', SITE_NAMES), ['mixed_alphabets'], 'a Cherokee Ꮯ before Latin letters');
  for (const name of ['Demo App', '读书App', 'Photo 打印机', 'Ελληνικά', 'Кириллица app', '読書メモ']) assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), [], name);
});

test('full-width Latin letters or digits are a sign', () => {
  assert.deepEqual(lookAlikeSigns('Ｐｈｏｔｏ Printer', SITE_NAMES), ['full_width']);
  assert.deepEqual(lookAlikeSigns('打印机（二）', SITE_NAMES), [], 'full-width brackets are Chinese punctuation, not letters');
});

test('the site\'s own name inside the name, in any language, letter case or width, is a sign', () => {
  assert.deepEqual(lookAlikeSigns('社区官方', SITE_NAMES), ['site_name']);
  assert.deepEqual(lookAlikeSigns('community tools', SITE_NAMES), ['site_name']);
  assert.deepEqual(lookAlikeSigns('ＣＯＭＭＵＮＩＴＹ', SITE_NAMES), ['full_width', 'site_name']);
  assert.deepEqual(lookAlikeSigns('Commune', SITE_NAMES), []);
});
