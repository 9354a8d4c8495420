/**
 * The signs that an app's name may pass for another's, which the staff console shows staff before
 * they vouch for it (attack88, attack90): plain logic, no server.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lookAlikeCheck } from '../../src/core/text.js';

const lookAlikeSigns = await lookAlikeCheck();

const SITE_NAMES = ['Community', '社区', '社群'];

test('a word mixing Latin with another script, or two look-alike alphabets, is a sign, even parted by a hair space; Han beside Latin, and one script alone, are not', () => {
  // Read through their skeletons, the Cherokee Ꮯ's "ᏟOMMUNITY" and the Cyrillic С's are the site's name too.
  for (const name of ['\u13dfOMMUNITY', '\u0421\u200aommunity']) assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['mixed_alphabets', 'site_name'], name);
  for (const name of ['P\u0430ypal', 'G\u2d54\u2d54gle', 'G\u200a\u043e\u043e\u200agle', '\u0395\u03a1\u0421'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['mixed_alphabets'], name);
  for (const name of ['Demo App', '读书App', 'Photo 打印机', 'Ελληνικά', 'Яндекс Maps', 'ポケモンGO', '네이버 Map', 'Café Crème', 'Tiếng Việt'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), [], name);
});

test('letters or digits in a compatibility form (full-width, bold, circled, Roman numerals) are a sign; full-width punctuation is not', () => {
  for (const name of ['Ｐｈｏｔｏ Printer', '\u{1d40f}\u{1d41a}\u{1d432}\u{1d429}\u{1d41a}\u{1d425}', '\u24c5aypal', '\u216dloud'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['styled_letters'], name);
  assert.deepEqual(lookAlikeSigns('打印机（二）', SITE_NAMES), []);
});

test('full-width digits touching an ideograph are no sign, nor is a compatibility form of a letter no alphabet of the name holds (the micro sign in a Latin name); alone, or in Greek, they are', () => {
  for (const name of ['第１课', '第１２課', 'ドラゴンクエスト１１', '\u00b5Torrent', '\u00b5-Torrent'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), [], name);
  for (const name of ['１２３０６', '第 １ 课', '\u00b5\u03b5\u03b3\u03ac\u03bb\u03bf', '\u{1d6a8}pple'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['styled_letters'], name);
});

test('small capitals and phonetic letters, and Latin letters whose skeleton is one plain letter, are styled; letters of real alphabets, accented or not, are not', () => {
  for (const name of ['\u1d18\u1d00\u028f\u1d18\u1d00\u029f', '\u0261oogle', 'Paypa\u0131', '\u0251pple', '\ua731hop'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['styled_letters'], name);
  for (const name of ['Søren', 'Łódź', 'Straße', 'Cœur', 'Þór', 'Ŋga', 'Ɛwe'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), [], name);
});

test('a name whose words in another alphabet are all in one and all read as Latin is a sign; one that reads otherwise, or mixes alphabets, is not', () => {
  for (const name of ['\u0420\u0430\u0443\u0440\u0435\u0443', '\u0420\u0430\u0443\u0440\u0435\u0443 Maps', '\u0391\u0392\u0392\u0391'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['reads_as_latin'], name);
  for (const name of ['Москва', 'Ελληνικά', 'Яндекс Maps', 'Ελλάδα Москва'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), [], name);
  assert.deepEqual(lookAlikeSigns('\u0395\u03a1\u0421', SITE_NAMES), ['mixed_alphabets']);
});

test('the site\'s own name standing as a name, in any language, Chinese script, letter case or width, through spaces and punctuation, is a sign', () => {
  for (const name of ['社区官方', '官方社区', '社區官方', '社區', '社区 App', 'community tools', 'MyCommunity', '社\u200a区官方', '社 区', 'C.o.m.m.u.n.i.t.y'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['ＣＯＭＭＵＮＩＴＹ', 'Ｃｏｍｍｕｎｉｔｙ'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['styled_letters', 'site_name'], name);
  assert.deepEqual(lookAlikeSigns('Commune', SITE_NAMES), []);
});

test('the site\'s name before a phishing page\'s service, beside Han, with a mark on a letter or written with look-alike letters, is a sign', () => {
  for (const name of ['社区安全中心', '社区验证', '社區通行證', '社群支付', '社区钱包', '社区密码', '社区的官方', 'Community官方', 'The Community账号', 'Commun\u0307ity', 'Communi\u0323ty', 'Cornmunity', 'Comrnunity'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Common Tools', 'Crm Tools', 'Warmup'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), [], name);
});

test('the site\'s name inside a longer word is no sign: Han after it that is no claim, or letters on either side', () => {
  for (const name of ['社区团购助手', '社區醫院', '社群媒體管理', '社群經營', 'Communityhub', 'Communities'])
    assert.deepEqual(lookAlikeSigns(name, SITE_NAMES), [], name);
});
